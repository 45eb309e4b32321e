"""The layout engine: palette, text measurement, the fonts and distances of a drawing (Style), and the row
that places columns of boxes, arrow gaps and operation circles left to right (Row).

Coordinates are inches (the axes fill the figure and 1 data unit = 1 inch), so circles are round and box
sizes follow the text they hold. Nothing here draws; nothing here knows a notebook.
"""

import re

import matplotlib.colors
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties

from plumbing import figure_style as _style  # the series' one palette (Okabe-Ito) and fonts

ORANGE, SKY, GREEN, YELLOW = _style.ORANGE, _style.SKY_BLUE, _style.GREEN, _style.YELLOW
BLUE, VERMILLION, PURPLE, BLACK = _style.BLUE, _style.VERMILION, _style.PURPLE, _style.BLACK
MONO, SANS = _style.MONO_FONT, _style.RC["font.family"]
GREY, LIGHT_GREY = "#9A9A9A", "#F2F2F2"  # the diagrams' own greys: box edges and the stages not marked

FORK, BRANCH, SHADOW = 0.14, 0.16, 0.12  # inches: where a fork splits, where the residual branches off; stack


def tint(colour, amount):
    """Blend `colour` with white; amount=1 gives the colour, 0 gives white."""
    rgb = matplotlib.colors.to_rgb(colour)
    return tuple(1 - amount * (1 - c) for c in rgb)


def edge(colour):
    """The colour of lines and edges: Okabe-Ito's yellow is too light on white, so it is darkened."""
    if colour != YELLOW:
        return colour
    return tuple(0.72 * c for c in matplotlib.colors.to_rgb(colour))


_MEASURE = RendererAgg(100, 100, 72)  # at 72 dpi, one pixel is one point


CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")  # Chinese characters and full-width punctuation


def weight(text, style):
    """matplotlib's fontweight for ``text`` in ``style``: bold for "bold", but regular for a text with Chinese
    characters, whose font has no bold face (its Latin letters would be bold and its Chinese ones not)."""
    return "bold" if style == "bold" and not CJK.search(text) else "normal"


def slant(text, style):
    """matplotlib's fontstyle for ``text`` in ``style``: italic for "italic", upright for a text with Chinese
    characters (the same reason as :func:`weight`)."""
    return "italic" if style == "italic" and not CJK.search(text) else "normal"


def text_width(text, size, family, style="normal"):
    """Width in inches of one line of text as matplotlib lays it out."""
    prop = FontProperties(family=family, size=size, weight=weight(text, style), style=slant(text, style))
    width, _, _ = _MEASURE.get_text_width_height_descent(text, prop, ismath="$" in text)
    return width / 72


class Style:
    """Fonts (points) and distances (inches) of one kind of drawing, and the texts it shows.

    yah: a you-are-here image (smaller fonts) rather than the overview; rich: the boxes and arrows say
    everything (the first text of a node or label), else the short last text. `nodes`: key -> (full lines,
    short lines), a line being (string, kind); `labels`: name -> (full, short) or (overview, you-are-here
    full, short).
    """

    def __init__(self, yah, rich, nodes, labels):
        self.yah, self.rich, self.nodes, self.labels = yah, rich, nodes, labels
        if yah:
            self.kinds = {
                "name": (8, "bold", MONO),
                "mono": (7.5, "normal", MONO),
                "sym": (6.5, "normal", SANS),
                "note": (7, "italic", SANS),
            }
            self.op, self.band, self.circle_font = 7.5, 9, 10
            self.lane, self.hpad, self.vpad, self.min_gap, self.radius = 0.5, 0.07, 0.07, 0.4, 0.13
            self.small_gap = 0.25
        else:
            self.kinds = {
                "name": (9.5, "bold", MONO),
                "mono": (9, "normal", MONO),
                "sym": (7, "normal", SANS),
                "note": (7.5, "italic", SANS),
            }
            self.op, self.band, self.circle_font = 7.5, 10, 12
            self.lane, self.hpad, self.vpad, self.min_gap, self.radius = 0.62, 0.1, 0.1, 0.55, 0.15
            self.small_gap = 0.3

    def lines(self, key):
        full, short = self.nodes[key]
        return [(text,) + self.kinds[kind] for text, kind in (full if self.rich else short)]

    def box_size(self, key):
        lines = self.lines(key)
        width = max(text_width(text, size, family, style) for text, size, style, family in lines)
        return width + 2 * self.hpad, sum(1.3 * size for _, size, _, _ in lines) / 72 + 2 * self.vpad

    def label(self, name):
        texts = self.labels[name]
        full = texts[1] if self.yah and len(texts) == 3 else texts[0]
        return full if self.rich else texts[-1]

    def label_width(self, name):
        return max(text_width(line, self.op, MONO) for line in self.label(name).split("\n"))


class Row:
    """Items placed left to right: columns of boxes, gaps (an arrow and its label), circles (an operation)."""

    def __init__(self, S):
        self.S, self.items, self.boxes = S, {}, {}

    def col(self, name, stage, nodes, role="stage", stacked=False):
        """`nodes` = [(key, lane)]; role "input" draws white boxes (what a notebook starts from); stacked: each
        box is drawn as a stack of three."""
        width = max(self.S.box_size(key)[0] for key, _ in nodes)
        self.items[name] = dict(kind="col", stage=stage, nodes=nodes, width=width, role=role, stacked=stacked)

    def gap(self, name, stage, labels=(), width=None, lane=0, offset=0.0):
        """An arrow's room: as wide as its labels; labels[0] is drawn above the arrow on `lane`, labels[1]
        below the arrow on the opposite lane (a fork); the labels are centred right of `offset`."""
        needed = [self.S.label_width(label) + 0.13 + offset for label in labels]
        self.items[name] = dict(
            kind="gap", stage=stage, width=max([width or self.S.min_gap] + needed), labels=list(labels), lane=lane, offset=offset
        )

    def label_extent(self, item, below):
        """How far the labels of a gap reach above (or below) the middle lane."""
        labels = item.get("labels", [])
        if len(labels) <= below:
            return 0.0
        lines = len(self.S.label(labels[below]).split("\n"))
        return abs(item["lane"]) * self.S.lane + (3.5 + lines * 1.15 * self.S.op) / 72

    def circle(self, name, stage, symbol):
        self.items[name] = dict(kind="circle", stage=stage, width=2 * self.S.radius, symbol=symbol)

    def natural_width(self):
        return sum(item["width"] for item in self.items.values())

    def place(self, x0, y0, stretch=0.0):
        """Left edge x0, middle lane at y0; every gap `stretch` inches wider than it needs."""
        x = x0
        for item in self.items.values():
            width = item["width"] + (stretch if item["kind"] == "gap" else 0.0)
            item.update(x0=x, x1=x + width, xc=x + width / 2)
            x += width
            for key, lane in item.get("nodes", []):
                self.boxes[key] = (item["xc"], y0 + lane * self.S.lane, item["width"], self.S.box_size(key)[1])
        self.x0, self.x1, self.y0 = x0, x, y0

    def __getitem__(self, name):
        return self.items[name]

    def stages(self):
        return sorted({item["stage"] for item in self.items.values() if item["stage"] is not None})

    def span(self, stage):
        """x extent of a stage's items."""
        mine = [item for item in self.items.values() if item["stage"] == stage]
        return mine[0]["x0"], mine[-1]["x1"]

    def gap_of(self, label):
        """The gap that holds `label`, and whether the label is its second (drawn below)."""
        for item in self.items.values():
            if label in item.get("labels", []):
                return item, item["labels"].index(label) == 1
        raise KeyError(f"no gap of the row holds the label {label!r}")

    def top(self):
        labels = [self.y0 + self.label_extent(item, 0) for item in self.items.values()]
        return max([y + h / 2 for _, y, _, h in self.boxes.values()] + labels)

    def bottom(self):
        labels = [self.y0 - self.label_extent(item, 1) for item in self.items.values()]
        return min([y - h / 2 for _, y, _, h in self.boxes.values()] + labels)

    def left(self, key, dy=0.0):
        x, y, w, _ = self.boxes[key]
        return (x - w / 2, y + dy)

    def right(self, key, dy=0.0):
        x, y, w, _ = self.boxes[key]
        return (x + w / 2, y + dy)

    def residual_y(self):
        """Height of the line that carries the residual stream under the row's boxes."""
        return self.bottom() - 0.22
