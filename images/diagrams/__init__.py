"""The diagrams of the series, one job a file:

  layout.py    the engine: palette, text measurement, Style (fonts, distances, texts), Row (placing boxes)
  data.py      NOTEBOOKS: one entry per notebook, everything its diagrams need (the one table to edit)
  shapes.py    matplotlib primitives: canvas, box, arrow, line, dot; save (deterministic PNG)
  stages.py    one notebook's stage in a row, from its entry: items, band, boxes, connections
  draw.py      the overview (path_overview.png) and the you-are-here images (you_are_here_NN.png)
  figures.py   rope_pairs.png and rmsnorm_axes.png
  language.py  English or Chinese: the texts (locale/zh_CN/LC_MESSAGES/diagrams.po) and the fonts

write_all() draws every image; images/make_diagrams.py is its command line.
"""

from pathlib import Path

from .data import NOTEBOOKS, MissingEntry, check
from .draw import draw_overview, draw_you_are_here
from .figures import draw_rmsnorm_axes, draw_rope_pairs
from .language import FOLDERS, LanguageError, missing, unused, use
from .shapes import save

__all__ = ["FOLDERS", "NOTEBOOKS", "LanguageError", "MissingEntry", "check", "write_all"]


def write_all(out, notebooks, lang="en"):
    """Check that every notebook number in `notebooks` has an entry in NOTEBOOKS (else MissingEntry), draw every
    image in `lang` ("en", "zh_CN"), then write them into the folder `out`. Returns the paths written.

    Raises:
        MissingEntry: see check(); LanguageError: a text the catalogue lacks or no longer needs, or no Chinese
            font. Nothing is written then.
    """
    check(notebooks)
    use(lang)
    try:
        figures = [("path_overview.png", draw_overview)]
        figures += [(f"you_are_here_{nb:02d}.png", lambda nb=nb: draw_you_are_here(nb)) for nb in NOTEBOOKS]
        figures += [("rope_pairs.png", draw_rope_pairs), ("rmsnorm_axes.png", draw_rmsnorm_axes)]
        drawn = [(name, draw()) for name, draw in figures]
        if lang != "en" and (missing() or unused()):
            where = "locale/zh_CN/LC_MESSAGES/diagrams.po"
            raise LanguageError(f"{where} lacks {missing()} and no longer needs {unused()}: edit it")
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name, fig in drawn:  # rendered here, in the language's fonts
            save(fig, out / name)
    finally:
        use("en")
    return [out / name for name, _ in figures]
