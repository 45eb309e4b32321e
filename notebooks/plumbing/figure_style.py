"""One style for every figure of the series: the palette, the fonts and their sizes. It teaches nothing.

The rule for figure helpers (the ``figures_*`` modules): a helper draws inside :func:`styled` and returns its
``Figure``; it never calls ``plt.show()``. The notebook's cell shows the figure with ``plt.show()``, so a
figure appears once, and a reader can also keep the returned figure to save or change it.

Colours are the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008), distinguishable with the
common forms of colour blindness.
"""

from __future__ import annotations

import functools

BLACK, ORANGE, SKY_BLUE, GREEN = "#000000", "#E69F00", "#56B4E9", "#009E73"
YELLOW, BLUE, VERMILION, PURPLE = "#F0E442", "#0072B2", "#D55E00", "#CC79A7"
#: The eight Okabe-Ito colours, black first: for a sequence of curves.
OKABE_ITO = [BLACK, ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILION, PURPLE]
GREY = "0.6"  # lines and text of secondary things, masked entries
LIGHT_GREY = "#BBBBBB"  # fills behind the coloured ones
#: The monospace font that ships with matplotlib (token texts, code).
MONO_FONT = "DejaVu Sans Mono"

#: Fonts and sizes, applied while a helper draws (``matplotlib.rcParams`` keys). Figure sizes stay each helper's own.
RC = {
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "figure.titlesize": 12,
}


def styled(draw):
    """Decorator: run the figure helper ``draw`` with :data:`RC` in force (``matplotlib.pyplot.rc_context``)."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        import matplotlib.pyplot as plt

        with plt.rc_context(RC):
            return draw(*args, **kwargs)

    return wrapper
