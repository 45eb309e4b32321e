"""The path through the model: the overview (every notebook, in the rows of the data table) and the
you-are-here image of one notebook (the strip of the series, and below it the notebook's own stage)."""

from itertools import pairwise

from matplotlib.patches import FancyBboxPatch, Polygon

from . import data
from .language import tr
from .layout import BLACK, GREY, LIGHT_GREY, MONO, SANS, edge, text_width, tint, weight
from .shapes import arrow, canvas, polyline
from .stages import NODES, band, draw_boxes, draw_stage, residuals, stage_row, style

# ---------------------------------------------------------------- the overview: every notebook, in rows
WIDTH = 17.0
MARGIN_RESIDUAL, MARGIN_WRAP, MARGIN_ROW = 0.14, 0.3, 0.46  # x of the residual line, the wrap lines, the rows


def overview_rows():
    """The notebooks of each row of the overview, in order."""
    rows = {}
    for nb in sorted(data.NOTEBOOKS):
        rows.setdefault(data.NOTEBOOKS[nb].row, []).append(nb)
    return [rows[k] for k in sorted(rows)]


def _crossing(rows, i):
    """The residual connections that leave row i for a later row: [(the notebook drawing it, its Residual)]."""
    out = []
    for later in rows[i + 1 :]:
        for nb in later.stages():
            out += [(nb, step) for step in residuals(nb) if step.source in rows[i].boxes]
    return out


def draw_overview():
    S = style(yah=False, rich=True)
    rows, stretches = [], []
    for stages in overview_rows():
        R = stage_row(S, stages)
        gaps = sum(item["kind"] == "gap" for item in R.items.values())
        spare = WIDTH - 2 * MARGIN_ROW - R.natural_width()
        if spare < 0:
            raise ValueError(f"overview row {tuple(stages)} is {-spare:.2f} in too wide")
        R.place(MARGIN_ROW, 0.0, spare / gaps)
        rows.append(R)
        stretches.append(spare / gaps)

    # stack the rows from the top: a title strip, the boxes, the residual line; between rows the wrap lines
    # (below a residual line that leaves the row for the next one)
    title_h, y, extents = 0.4, -0.08, []
    for i, (R, stretch) in enumerate(zip(rows, stretches, strict=True)):
        top = y
        R.place(MARGIN_ROW, top - title_h - (R.top() - R.y0), stretch)
        has_residual = any(residuals(nb) for nb in R.stages())
        bottom = R.residual_y() - 0.14 if has_residual else R.bottom() - 0.14
        extents.append((top, bottom))
        y = bottom - (0.95 if _crossing(rows, i) else 0.55)
    height = -(y + 0.55 - 0.62)
    fig, ax = canvas(WIDTH, height, (0, WIDTH), (-height, 0))
    for R, (top, bottom) in zip(rows, extents, strict=True):
        for nb in R.stages():
            x0, x1 = R.span(nb)
            band(ax, S, x0 - 0.08 * (x0 == R.x0), x1 + 0.08 * (x1 == R.x1), bottom, top, nb)
        draw_boxes(ax, S, R)
        for nb in R.stages():
            draw_stage(ax, S, R, nb)

    # a row's last boxes go on to the start of the next row
    xm = WIDTH - MARGIN_WRAP
    for i, (R, nxt) in enumerate(pairwise(rows)):
        last = sorted(list(R.items.values())[-1]["nodes"], key=lambda node: -node[1])
        ends = [R.right(key) for key, _ in last]
        (xb, yb), entry = ends[-1], list(nxt.items.values())[0]
        yw = extents[i][1] - (0.66 if _crossing(rows, i) else 0.28)
        for xa, ya in ends[:-1]:
            polyline(ax, [(xa, ya), (xm, ya), (xm, yb)], head=False)
        yn = nxt.y0 + entry.get("lane", 0) * S.lane
        polyline(ax, [(xb, yb), (xm, yb), (xm, yw), (MARGIN_WRAP, yw), (MARGIN_WRAP, yn), (nxt.x0, yn)], head=False)
        names = ", ".join(NODES[key][0][0][0] for key, _ in last)
        ax.annotate(
            tr("{names}: on to {nb:02d}").format(names=names, nb=nxt.stages()[0]),
            ((MARGIN_WRAP + xm) / 2, yw),
            xytext=(0, 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=S.op,
            family=MONO,
            color=BLACK,
        )
    # a residual connection from a box of an earlier row, e.g. the embedding rows x, from 02, to the addition in 05
    for i, R in enumerate(rows):
        for nb, step in _crossing(rows, i):
            later = next(row for row in rows if nb in row.stages())
            colour = edge(data.NOTEBOOKS[nb].colour)
            ux, uy, _, uh = R.boxes[step.source]
            yr = extents[i][1] - 0.3
            polyline(
                ax,
                [(ux, uy - uh / 2), (ux, yr), (MARGIN_RESIDUAL, yr), (MARGIN_RESIDUAL, later.residual_y()), (later.x0, later.residual_y())],
                colour,
                lw=2.0,
                head=False,
            )
            ax.annotate(
                S.label(step.label),
                (MARGIN_ROW, yr),
                xytext=(0, -3),
                textcoords="offset points",
                ha="left",
                va="top",
                fontsize=S.op,
                family=MONO,
                color=colour,
            )

    for line, dy in zip(data.FOOTER, (0.42, 0.17), strict=True):
        ax.text(MARGIN_ROW, -height + dy, line, ha="left", va="center", fontsize=8)
    return fig


# ---------------------------------------------------------------- you are here: the strip and one stage
YAH_WIDTH = 10.0


def stacks_fit(R):
    """Do the boxes of every column fit on their lanes without touching?"""
    for item in R.items.values():
        lanes = sorted(item.get("nodes", []), key=lambda node: -node[1])
        for (a, lane_a), (b, lane_b) in pairwise(lanes):
            if (R.S.box_size(a)[1] + R.S.box_size(b)[1]) / 2 + 0.08 > R.S.lane * (lane_a - lane_b):
                return False
    return True


def yah_row(nb):
    """Notebook nb's stage after the tensors it starts from: with every detail if that fits, else the short texts."""
    for rich in (True, False):
        R = stage_row(style(yah=True, rich=rich), [nb], data.NOTEBOOKS[nb].inputs)
        spare = YAH_WIDTH - 0.3 - R.natural_width()
        if spare >= 0 and stacks_fit(R):
            return R, spare
    raise ValueError(f"you_are_here_{nb:02d}: the stage is {-spare:.2f} in too wide, or its boxes overlap")


def draw_you_are_here(nb):
    R, spare = yah_row(nb)
    S = R.S
    gaps = sum(item["kind"] == "gap" for item in R.items.values())
    stretch = min(spare / gaps, 0.3)
    x0 = (YAH_WIDTH - R.natural_width() - stretch * gaps) / 2
    R.place(x0, 0.0, stretch)

    # the strip: one step per notebook, this one in colour
    n, pitch_gap, chip_h, top, margin = len(data.NOTEBOOKS), 0.15, 0.6, -0.1, 0.12
    chip_w = (YAH_WIDTH - 2 * margin - (n - 1) * pitch_gap) / n
    widest = max(text_width(entry.title, 10, SANS, "bold") for entry in data.NOTEBOOKS.values())
    title_font = min(7.5, 10 * (chip_w - 0.1) / widest)  # every title fits its step, in bold
    band_top = top - chip_h - 0.34
    title_h = 0.34
    R.place(x0, band_top - title_h - (R.top() - R.y0), stretch)
    bottom = R.bottom() - 0.12
    for step in residuals(nb):  # the residual line, and its label below it when it comes from an earlier notebook
        bottom = R.residual_y() - (0.26 if step.source else 0.12)
    height = -(bottom - 0.1)
    fig, ax = canvas(YAH_WIDTH, height, (0, YAH_WIDTH), (-height, 0))
    colour = data.NOTEBOOKS[nb].colour
    chips = {}
    for i, (k, entry) in enumerate(sorted(data.NOTEBOOKS.items())):
        c = entry.colour
        cx0 = margin + i * (chip_w + pitch_gap)
        chips[k] = cx0
        here = k == nb
        ax.add_patch(
            FancyBboxPatch(
                (cx0, top - chip_h),
                chip_w,
                chip_h,
                boxstyle="round,pad=0,rounding_size=0.06",
                facecolor=tint(c, 0.35) if here else LIGHT_GREY,
                edgecolor=edge(c) if here else GREY,
                lw=1.6 if here else 1.0,
            )
        )
        lines = [(entry.title, title_font, "bold" if here else "normal", SANS)]
        lines += [(t, 7, "normal", MONO) for t in entry.ends_with]
        heights = [1.3 * size / 72 for _, size, _, _ in lines]
        yy = top - chip_h / 2 + sum(heights) / 2
        for (t, size, kind, family), hh in zip(lines, heights, strict=True):
            ax.text(
                cx0 + chip_w / 2,
                yy - hh / 2,
                t,
                ha="center",
                va="center",
                fontsize=size,
                family=family,
                fontweight=weight(t, kind),
                color=BLACK if here else GREY,
            )
            yy -= hh
        if i:
            arrow(ax, (cx0 - pitch_gap + 0.03, top - chip_h / 2), (cx0 - 0.03, top - chip_h / 2), GREY, 1.0)
    # the detail: the notebook's band, joined to its step in the strip
    bx0, bx1 = R.span(nb)
    bx0, bx1 = bx0 - 0.06 * ("c_inputs" not in R.items), bx1 + 0.06
    cx0 = chips[nb]
    ax.add_patch(
        Polygon(
            [(cx0, top - chip_h), (cx0 + chip_w, top - chip_h), (bx1, band_top), (bx0, band_top)],
            closed=True,
            facecolor=tint(colour, 0.1),
            edgecolor="none",
            zorder=-3,
        )
    )
    band(ax, S, bx0, bx1, bottom, band_top, nb, marked=True)
    draw_boxes(ax, S, R)
    draw_stage(ax, S, R, nb)
    return fig
