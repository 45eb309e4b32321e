"""images/make_diagrams.py (the package images/diagrams/) redraws the committed images byte for byte, in English
(images/) and in Chinese (images/zh/, texts from locale/zh_CN/LC_MESSAGES/diagrams.po); a notebook without an entry
in its data table, or a text without its translation, is one clear error naming the place to add it.

The script runs as `make diagrams` runs it: the venv's python on images/make_diagrams.py, here with --out.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import plumbing

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "images"


def make_diagrams(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(IMAGES / "make_diagrams.py"), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_redraw_reproduces_the_committed_images_in_both_languages(tmp_path):
    result = make_diagrams("--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    expected = {f"you_are_here_{path.name[:2]}.png" for path in plumbing.series_notebooks()}
    expected |= {"path_overview.png", "rope_pairs.png", "rmsnorm_axes.png"}
    for folder in ("", "zh"):  # English in images/, Chinese in images/zh/
        drawn = sorted(path.relative_to(tmp_path).as_posix() for path in (tmp_path / folder).glob("*.png"))
        names = {name.split("/")[-1] for name in drawn}
        assert expected <= names, f"not drawn in images/{folder}: {sorted(expected - names)}"
        uncommitted = [name for name in drawn if not (IMAGES / name).is_file()]
        assert not uncommitted, f"drawn but not in images/: {uncommitted} (run `make diagrams` and commit them)"
        changed = [name for name in drawn if (tmp_path / name).read_bytes() != (IMAGES / name).read_bytes()]
        assert not changed, f"the redraw differs from images/: {changed} (run `make diagrams` and commit the result)"
        assert all((tmp_path / "zh" / n).read_bytes() != (tmp_path / n).read_bytes() for n in expected)  # translated


def in_images(code: str) -> subprocess.CompletedProcess:
    """Run `code` from images/, where the package `diagrams` is importable as make_diagrams.py imports it."""
    return subprocess.run([sys.executable, "-c", code], cwd=IMAGES, capture_output=True, text=True, timeout=600)


def test_a_text_without_its_translation_is_one_clear_error(tmp_path):
    """A label added to the drawing code but not to the catalogue stops the Chinese drawing, and writes nothing."""
    catalogue = tmp_path / "diagrams.po"
    text = (ROOT / "locale/zh_CN/LC_MESSAGES/diagrams.po").read_text(encoding="utf-8")
    catalogue.write_text(text.replace('msgid "attention weights"\nmsgstr "注意力权重"\n', ""), encoding="utf-8")
    assert catalogue.read_text(encoding="utf-8") != text  # the entry was there to remove
    result = in_images(f"""
from pathlib import Path
import diagrams
from diagrams import language
assert language.CATALOGUES["zh_CN"].resolve() == Path({str(ROOT / "locale/zh_CN/LC_MESSAGES/diagrams.po")!r})
language.CATALOGUES["zh_CN"] = Path({str(catalogue)!r})
try:
    diagrams.write_all(Path({str(tmp_path / "zh")!r}), diagrams.NOTEBOOKS, "zh_CN")
except diagrams.LanguageError as e:
    print(e)
""")
    assert result.returncode == 0, result.stderr
    assert "lacks ['attention weights']" in result.stdout, result.stdout
    assert not (tmp_path / "zh").exists()


def test_a_notebook_without_an_entry_is_one_clear_error(tmp_path):
    out = tmp_path / "out"
    result = make_diagrams("--out", str(out), "--notebooks", "1", "2", "99")
    assert result.returncode != 0
    message = result.stderr.strip()
    assert "no drawing data for notebook 99" in message, message
    assert "NOTEBOOKS in images/diagrams/data.py" in message, message  # the one place to edit
    assert "Traceback" not in message, message
    assert not out.exists()  # nothing is drawn


def test_a_text_with_chinese_characters_is_set_upright_and_regular():
    """The Chinese font has no bold or italic face: such a text is set regular and upright as a whole, so that no
    line mixes bold Latin letters with regular Chinese ones. English texts keep bold and italic."""
    result = in_images("""
from diagrams import layout
assert layout.weight("▶ 05 attention", "bold") == "bold" and layout.slant("after layer 31", "italic") == "italic"
assert layout.weight("▶ 05 注意力", "bold") == "normal" and layout.slant("第 31 层之后", "italic") == "normal"
assert layout.weight("h，保留", "normal") == "normal" and layout.weight("xq_rotated", "normal") == "normal"
""")
    assert result.returncode == 0, result.stderr
