"""images/make_diagrams.py (the package images/diagrams/) redraws the committed images byte for byte, and a
notebook without an entry in its data table is one clear error naming the place to add it.

The script runs as `make diagrams` runs it: the venv's python on images/make_diagrams.py, here with --out.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import plumbing

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "images"


def make_diagrams(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(IMAGES / "make_diagrams.py"), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_redraw_reproduces_the_committed_images(tmp_path):
    result = make_diagrams("--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    drawn = sorted(path.name for path in tmp_path.glob("*.png"))
    expected = {f"you_are_here_{path.name[:2]}.png" for path in plumbing.series_notebooks()}
    expected |= {"path_overview.png", "rope_pairs.png", "rmsnorm_axes.png"}
    assert expected <= set(drawn), f"not drawn: {sorted(expected - set(drawn))}"
    uncommitted = [name for name in drawn if not (IMAGES / name).is_file()]
    assert not uncommitted, f"drawn but not in images/: {uncommitted} (run `make diagrams` and commit them)"
    changed = [name for name in drawn if (tmp_path / name).read_bytes() != (IMAGES / name).read_bytes()]
    assert not changed, f"the redraw differs from images/: {changed} (run `make diagrams` and commit the result)"


def test_a_notebook_without_an_entry_is_one_clear_error(tmp_path):
    out = tmp_path / "out"
    result = make_diagrams("--out", str(out), "--notebooks", "1", "2", "99")
    assert result.returncode != 0
    message = result.stderr.strip()
    assert "no drawing data for notebook 99" in message, message
    assert "NOTEBOOKS in images/diagrams/data.py" in message, message  # the one place to edit
    assert "Traceback" not in message, message
    assert not out.exists()  # nothing is drawn
