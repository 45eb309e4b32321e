"""Drawing primitives on matplotlib's Agg backend: a canvas in inches, boxes, arrows, lines, dots; saving a PNG.

The output is deterministic: no date or version is stored in the files, and any local matplotlibrc is ignored.
"""

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from .layout import BLACK, slant, weight

matplotlib.use("Agg")
plt.style.use("default")  # ignore any local matplotlibrc, so every machine draws the same picture

DPI = 120


def save(fig, path):
    fig.savefig(path, dpi=DPI, facecolor="white", metadata={"Software": None})
    plt.close(fig)
    print("wrote", path)


def canvas(width, height, xlim, ylim):
    fig = plt.figure(figsize=(width, height), facecolor="white")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")
    return fig, ax


def box(ax, x, y, w, h, lines, face="white", edge=BLACK, text=BLACK, lw=1.2):
    """Rounded box centred on (x, y); `lines` = [(string, fontsize, weight/style, family)]."""
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.08", facecolor=face, edgecolor=edge, linewidth=lw
        )
    )
    heights = [1.3 * size for _, size, _, _ in lines]
    offset = sum(heights) / 2
    for (string, size, style, family), hgt in zip(lines, heights, strict=True):
        offset -= hgt / 2
        ax.annotate(
            string,
            (x, y),
            xytext=(0, offset),
            textcoords="offset points",
            ha="center",
            va="center",
            fontsize=size,
            family=family,
            color=text,
            fontweight=weight(string, style),
            fontstyle=slant(string, style),
        )
        offset -= hgt / 2


def arrow(ax, start, end, colour=BLACK, lw=1.3):
    ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", color=colour, lw=lw, shrinkA=0, shrinkB=0, mutation_scale=12))


def polyline(ax, points, colour=BLACK, lw=1.3, head=True):
    """Straight segments through `points`; an arrowhead at the last point."""
    body = points[:-1] if head else points
    if len(body) > 1:
        ax.plot([p[0] for p in body], [p[1] for p in body], color=colour, lw=lw, solid_joinstyle="miter", solid_capstyle="butt", zorder=1.5)
    if head:
        arrow(ax, points[-2], points[-1], colour, lw)


def dot(ax, x, y, colour=BLACK):
    ax.plot([x], [y], "o", color=colour, ms=4.5, zorder=2)
