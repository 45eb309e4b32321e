"""The diagrams of the series, one job a file:

  layout.py    the engine: palette, text measurement, Style (fonts, distances, texts), Row (placing boxes)
  data.py      NOTEBOOKS: one entry per notebook, everything its diagrams need (the one table to edit)
  shapes.py    matplotlib primitives: canvas, box, arrow, line, dot; save (deterministic PNG)
  stages.py    one notebook's stage in a row, from its entry: items, band, boxes, connections
  draw.py      the overview (path_overview.png) and the you-are-here images (you_are_here_NN.png)
  figures.py   rope_pairs.png and rmsnorm_axes.png

write_all() draws every image; images/make_diagrams.py is its command line.
"""

from pathlib import Path

from .data import NOTEBOOKS, MissingEntry, check
from .draw import draw_overview, draw_you_are_here
from .figures import draw_rmsnorm_axes, draw_rope_pairs
from .shapes import save

__all__ = ["NOTEBOOKS", "MissingEntry", "check", "write_all"]


def write_all(out, notebooks):
    """Check that every notebook number in `notebooks` has an entry in NOTEBOOKS (else MissingEntry, and
    nothing is drawn), then write every image into the folder `out`. Returns the paths written."""
    check(notebooks)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures = [("path_overview.png", draw_overview)]
    figures += [(f"you_are_here_{nb:02d}.png", lambda nb=nb: draw_you_are_here(nb)) for nb in NOTEBOOKS]
    figures += [("rope_pairs.png", draw_rope_pairs), ("rmsnorm_axes.png", draw_rmsnorm_axes)]
    for name, draw in figures:
        save(draw(), out / name)
    return [out / name for name, _ in figures]
