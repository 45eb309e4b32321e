"""The diagrams' language: English as written in data.py and figures.py, or the Chinese edition's texts from the
gettext catalogue locale/zh_CN/LC_MESSAGES/diagrams.po (msgid: the English text, msgstr: the Chinese one), drawn
with a font that has Chinese glyphs (WenQuanYi Micro Hei, which .ci/run installs; DejaVu for Latin letters).

use(lang) switches everything the drawing code reads (the texts of data.NOTEBOOKS and data.FOOTER, the fonts);
tr(text) is the text in that language. Every text asked for must be in the catalogue, code and shapes too
(translated as themselves): missing() names those that are not, so a new label is noticed. matplotlib sets a line
holding $...$ in its maths fonts, which have no Chinese glyphs: such a line stays free of Chinese characters.
"""

import dataclasses
import logging
from pathlib import Path

import matplotlib
from babel.messages.pofile import read_po
from matplotlib import font_manager

from . import data, layout

ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = {"zh_CN": ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "diagrams.po"}
FOLDERS = {"en": "", "zh_CN": "zh"}  # where each language's images go, below images/
CJK_FONT = "WenQuanYi Micro Hei"

_ENGLISH = (dict(data.NOTEBOOKS), list(data.FOOTER), layout.MONO, layout.SANS)
_RC = ("font.family", "font.sans-serif")
_RC_ENGLISH = {key: matplotlib.rcParams[key] for key in _RC}
_texts: dict[str, str] = {}
_asked: set[str] = set()
_lang = "en"


class LanguageError(RuntimeError):
    """A language's catalogue or font is missing."""


def tr(text: str) -> str:
    """``text`` in the current language (English: itself)."""
    if _lang == "en":
        return text
    _asked.add(text)
    return _texts.get(text, text)


def missing() -> list[str]:
    """The texts asked for since use() that the catalogue does not translate."""
    return sorted(t for t in _asked if t not in _texts)


def unused() -> list[str]:
    """The catalogue's texts that no drawing asked for since use() (stale entries)."""
    return sorted(t for t in _texts if t not in _asked)


def _find_font() -> None:
    """Make sure matplotlib knows CJK_FONT: its font cache may predate the font's installation."""
    try:
        font_manager.findfont(CJK_FONT, fallback_to_default=False)
        return
    except ValueError:
        pass
    for path in font_manager.findSystemFonts():
        if Path(path).name.startswith("wqy-microhei"):
            font_manager.fontManager.addfont(path)
    try:
        font_manager.findfont(CJK_FONT, fallback_to_default=False)
    except ValueError:
        raise LanguageError(f"the Chinese diagrams need the font {CJK_FONT} (Debian: apt install fonts-wqy-microhei)") from None


def _translated(entry):
    words = ("note", "name")  # a box's notes, and its name (a tensor's name translates as itself)
    nodes = {
        key: tuple([(tr(t), kind) if kind in words else (t, kind) for t, kind in lines] for lines in both)
        for key, both in entry.nodes.items()
    }
    labels = {key: tuple(tr(t) for t in texts) for key, texts in entry.labels.items()}
    return dataclasses.replace(entry, title=tr(entry.title), ends_with=[tr(t) for t in entry.ends_with], nodes=nodes, labels=labels)


def use(lang: str) -> None:
    """Draw in ``lang`` ("en" or "zh_CN") from now on.

    Raises:
        LanguageError: the catalogue is missing, or no font with Chinese glyphs is installed.
    """
    global _lang
    notebooks, footer, mono, sans = _ENGLISH
    _texts.clear()
    _asked.clear()
    _lang = lang
    if lang != "en":
        if not CATALOGUES[lang].is_file():
            raise LanguageError(f"no catalogue {CATALOGUES[lang].relative_to(ROOT)}")
        _find_font()
        with CATALOGUES[lang].open("rb") as f:
            _texts.update({m.id: m.string for m in read_po(f) if m.id and m.string})
        mono, sans = [mono, CJK_FONT], [sans, CJK_FONT]
    from . import draw, figures, stages  # they import tr from here

    for module in (layout, draw, stages, figures):  # each imported the font names as its own
        for name, value in (("MONO", mono), ("SANS", sans)):
            if hasattr(module, name):
                setattr(module, name, value)
    matplotlib.rcParams.update(_RC_ENGLISH if lang == "en" else {key: [sans[0], CJK_FONT] for key in _RC})
    # no bold Chinese face is installed: its titles are set in the regular one, which matplotlib logs each time
    logging.getLogger("matplotlib.font_manager").setLevel(logging.NOTSET if lang == "en" else logging.ERROR)
    data.NOTEBOOKS.clear()
    data.NOTEBOOKS.update({nb: _translated(entry) for nb, entry in notebooks.items()})
    data.FOOTER[:] = [tr(line) for line in footer]
    for merged, field in ((stages.NODES, "nodes"), (stages.LABELS, "labels")):
        merged.clear()
        merged.update(data.merged(field))
