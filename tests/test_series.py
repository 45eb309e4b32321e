"""The one list of notebooks: a new notebooks/NN_*.ipynb is run, tested and exported with no other edit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import plumbing

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def copied_notebook():
    """notebooks/99_copy.ipynb, a copy of notebook 01, present for the test only."""
    src = plumbing.series_notebooks()[0]
    dest = ROOT / "notebooks" / "99_copy.ipynb"
    shutil.copyfile(src, dest)
    try:
        yield dest
    finally:
        dest.unlink(missing_ok=True)


def run(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = plumbing.clean_environ()
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, **kw)


@pytest.mark.notebook
def test_a_new_notebook_needs_no_other_edit(copied_notebook):
    name = copied_notebook.name
    assert plumbing.series_notebooks()[-1] == copied_notebook
    # make run executes it and make test gives it to strict nbval (the Makefile reads the same glob).
    for target in ("run", "test"):
        dry = run(["make", "-n", target])
        assert f"notebooks/{name}" in dry.stdout, dry.stdout[-2000:]
    # Strict nbval passes on it ...
    nbval = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval", "--nbval-current-env",
                 f"notebooks/{name}"])
    assert nbval.returncode == 0, nbval.stdout[-3000:]
    # ... and the hygiene test checks it.
    hygiene = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", "tests/test_hygiene.py"])
    assert f"[{copied_notebook.stem}]" in hygiene.stdout, hygiene.stdout[-2000:]
