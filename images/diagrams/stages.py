"""One notebook's stage in a row: its items from the data table, its band, its boxes, and its connections
(data.py's Arrow, Fork, Feed, Merge, Circle, Residual and Join, drawn in the order of the entry)."""

from matplotlib.patches import Circle, FancyBboxPatch, Rectangle

from . import data
from .layout import BLACK, BRANCH, MONO, SHADOW, Row, Style, edge, tint, weight
from .shapes import arrow, box, dot, polyline

NODES, LABELS = data.merged("nodes"), data.merged("labels")


def style(yah, rich):
    return Style(yah, rich, NODES, LABELS)


def build_stage(R, nb):
    """Append notebook nb's items to row R (its first item is the gap its incoming arrow crosses)."""
    for item in data.NOTEBOOKS[nb].layout:
        if isinstance(item, data.Col):
            R.col(item.name, nb, item.nodes, stacked=item.stacked)
        elif isinstance(item, data.Gap):
            width = R.S.small_gap if item.width == data.SMALL else item.width
            R.gap(item.name, nb, item.labels, width=width, lane=item.lane, offset=item.offset)
        else:
            R.circle(item.name, nb, item.symbol)


def stage_row(S, stages, inputs=()):
    """A row of the given notebooks' stages, after the tensors it starts from (white boxes) if any."""
    R = Row(S)
    if inputs:
        R.col("c_inputs", None, inputs, role="input")
    for nb in stages:
        build_stage(R, nb)
    return R


def residuals(nb):
    return [step for step in data.NOTEBOOKS[nb].steps if isinstance(step, data.Residual)]


def label(ax, S, name, x, y, where="above", colour=BLACK):
    """An arrow's label: centred above or below (x, y), or to the left of it ("left")."""
    offset = {"above": (0, 3.5), "below": (0, -3.5), "left": (-4, 0)}[where]
    ax.annotate(
        S.label(name),
        (x, y),
        xytext=offset,
        textcoords="offset points",
        ha="right" if where == "left" else "center",
        va={"above": "bottom", "below": "top", "left": "center"}[where],
        fontsize=S.op,
        family=MONO,
        color=colour,
        linespacing=1.15,
    )


def op_circle(ax, S, R, name):
    x, r = R[name]["xc"], S.radius
    ax.add_patch(Circle((x, R.y0), r, facecolor="white", edgecolor=BLACK, lw=1.3, zorder=3))
    ax.text(x, R.y0, R[name]["symbol"], ha="center", va="center_baseline", fontsize=S.circle_font, color=BLACK, zorder=4)


def band(ax, S, x0, x1, y0, y1, nb, marked=False):
    """A notebook's band: a tinted rectangle with its title at the top."""
    entry = data.NOTEBOOKS[nb]
    ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=tint(entry.colour, 0.16), edgecolor="none", zorder=-2))
    ax.text(
        (x0 + x1) / 2,
        y1 - 0.08,
        ("▶ " if marked else "") + entry.title,
        ha="center",
        va="top",
        fontsize=S.band,
        fontweight=weight(entry.title, "bold" if marked else "normal"),
        color=BLACK,
    )


def draw_boxes(ax, S, R):
    for item in R.items.values():
        for key, _ in item.get("nodes", []):
            x, y, w, h = R.boxes[key]
            if item["role"] == "input":
                box(ax, x, y, w, h, S.lines(key), face="white", edge=BLACK)
                continue
            colour = data.NOTEBOOKS[item["stage"]].colour
            if item["stacked"]:  # e.g. the 32 blocks: a stack of boxes
                for k in (2, 1):
                    ax.add_patch(
                        FancyBboxPatch(
                            (x - w / 2 + SHADOW / 2 * k, y - h / 2 + SHADOW / 2 * k),
                            w,
                            h,
                            boxstyle="round,pad=0,rounding_size=0.08",
                            lw=1.2,
                            zorder=0.9,
                            facecolor=tint(colour, 0.35),
                            edgecolor=edge(colour),
                        )
                    )
            box(ax, x, y, w, h, S.lines(key), face=tint(colour, 0.35), edge=edge(colour), lw=1.6)


def _start(S, R, name, y):
    """Where an arrow leaves a box, a circle or the start of a gap (at height y)."""
    if name in R.boxes:
        return R.right(name)
    item = R[name]
    return (item["xc"] + S.radius, R.y0) if item["kind"] == "circle" else (item["x0"], y)


def _end(S, R, name):
    if name in R.boxes:
        return R.left(name)
    return (R[name]["xc"] - S.radius, R.y0)


def draw_stage(ax, S, R, nb):
    """Notebook nb's connections inside row R (its boxes are drawn by draw_boxes)."""
    y0, L, r = R.y0, S.lane, S.radius
    colour = edge(data.NOTEBOOKS[nb].colour)
    for step in data.NOTEBOOKS[nb].steps:
        if isinstance(step, data.Arrow):
            dy = step.yah_dy if S.yah else 0
            end = _end(S, R, step.dst)
            start, end = _start(S, R, step.src, end[1] + dy), (end[0], end[1] + dy)
            arrow(ax, start, end)
            if step.label:
                g, below = R.gap_of(step.label)
                x = (g["x0"] + g["offset"] + g["x1"]) / 2 if g["offset"] else g["xc"]
                label(ax, S, step.label, x, end[1], "below" if below else "above")
        elif isinstance(step, data.Fork):  # one input, two projections
            g = R[step.gap]
            xs = g["x0"] + g["offset"]
            polyline(ax, [(g["x0"], y0), (xs, y0)], head=False)
            polyline(ax, [(xs, y0 - L), (xs, y0 + L)], head=False)
            dot(ax, xs, y0)
            arrow(ax, (xs, y0 + L), R.left(step.upper))
            arrow(ax, (xs, y0 - L), R.left(step.lower))
            label(ax, S, g["labels"][0], (xs + g["x1"]) / 2, y0 + L)
            label(ax, S, g["labels"][1], (xs + g["x1"]) / 2, y0 - L, "below")
        elif isinstance(step, data.Feed):
            fx, _, _, fh = R.boxes[step.key]
            ax.plot([fx, fx], [y0 + fh / 2, y0 + L], color=BLACK, lw=1.3, zorder=1)
            ax.plot([fx, fx], [y0 - fh / 2, y0 - L], color=BLACK, lw=1.3, zorder=1)
            dot(ax, fx, y0 + L)
            dot(ax, fx, y0 - L)
            label(ax, S, step.label, fx, y0 + L)
        elif isinstance(step, data.Merge):
            sx = R[step.op]["xc"]
            polyline(ax, [R.right(step.upper), (sx, y0 + L), (sx, y0 + r)])
            polyline(ax, [R.right(step.lower), (sx, y0 - L), (sx, y0 - r)])
            if step.upper_label:
                label(ax, S, step.upper_label, (R.right(step.upper)[0] + sx) / 2, y0 + L)
            op_circle(ax, S, R, step.op)
            label(ax, S, step.label, sx - r, y0, "left")
        elif isinstance(step, data.Circle):
            op_circle(ax, S, R, step.op)
        elif isinstance(step, data.Residual):
            yr, xa = R.residual_y(), R[step.into]["xc"]
            if step.branch:
                xb = R[step.branch]["x0"] + BRANCH
                polyline(ax, [(xb, y0), (xb, yr), (xa, yr), (xa, y0 - r)], colour, lw=2.0)
                dot(ax, xb, y0, colour)
                ax.annotate(
                    S.label(step.label),
                    ((xb + xa) / 2, yr),
                    xytext=(0, 3),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=S.op,
                    family=MONO,
                    color=colour,
                )
            else:  # from an earlier notebook: the overview draws it from its source, a you-are-here image names it
                polyline(ax, [(R.x0, yr), (xa, yr), (xa, y0 - r)], colour, lw=2.0)
                if S.yah:
                    dot(ax, R.x0, yr, colour)
                    ax.text(R.x0, yr - 0.05, S.label(step.label), ha="left", va="top", fontsize=S.op, family=MONO, color=colour)
        elif isinstance(step, data.Join):
            if step.src in R.boxes:
                xk = R[step.gap]["x0"] + 0.12
                polyline(ax, [R.right(step.src), (xk, R.right(step.src)[1]), (xk, R.left(step.dst)[1] - 0.09), R.left(step.dst, -0.09)])
        else:
            raise TypeError(f"notebook {nb:02d}: unknown step {step!r} in {data.HERE}")
