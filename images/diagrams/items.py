"""The parts of a diagram's entry in data.py's NOTEBOOKS: the layout items, placed left to right (columns, gaps,
operations), the connections drawn between them in order (arrows, forks, feeds, merges, circles, residuals, joins),
the entry itself (:class:`Notebook`), and the boxes' lines."""

from dataclasses import dataclass, field

SMALL = "small"  # a Gap's width: the style's small gap


# ---------------------------------------------------------------- layout items, placed left to right
@dataclass(frozen=True)
class Col:
    """A column of boxes: nodes = [(key, lane)], lanes +1 (upper), 0, -1 (lower); stacked: a stack of three."""

    name: str
    nodes: list
    stacked: bool = False


@dataclass(frozen=True)
class Gap:
    """An arrow's room, as wide as its labels (see layout.Row.gap); width SMALL or inches, else the minimum."""

    name: str
    labels: list = field(default_factory=list)
    width: object = None
    lane: int = 0
    offset: float = 0.0


@dataclass(frozen=True)
class Op:
    """An operation circle."""

    name: str
    symbol: str


# ---------------------------------------------------------------- connections, drawn in order
@dataclass(frozen=True)
class Arrow:
    """From a box (its right side), a circle or the start of a gap, to a box (left side) or a circle; `label`
    sits in the gap that holds it. yah_dy: both ends raised in the you-are-here images."""

    src: str
    dst: str
    label: str = None
    yah_dy: float = 0.0


@dataclass(frozen=True)
class Fork:
    """One input split at the start of `gap` into the upper and lower boxes, with the gap's two labels."""

    gap: str
    upper: str
    lower: str


@dataclass(frozen=True)
class Feed:
    """A lane-0 box feeding the upper and lower lanes (freqs_cis into both rotations), labelled above."""

    key: str
    label: str


@dataclass(frozen=True)
class Merge:
    """The upper and lower boxes into the circle `op`; `label` to its left, `upper_label` over the upper line."""

    op: str
    upper: str
    lower: str
    label: str
    upper_label: str = None


@dataclass(frozen=True)
class Circle:
    """Draw the circle `op`."""

    op: str


@dataclass(frozen=True)
class Residual:
    """The residual stream under the row into the circle `into`: branched off at the start of the gap `branch`,
    or coming from the box `source` of an earlier notebook (the overview draws it from there)."""

    into: str
    label: str
    branch: str = None
    source: str = None


@dataclass(frozen=True)
class Join:
    """src (an input box of a you-are-here image) to dst, up through `gap`; not drawn when src is not in the row."""

    src: str
    dst: str
    gap: str


@dataclass(frozen=True)
class Notebook:
    """Everything the diagrams of one notebook need."""

    title: str  # the band's and the strip's title
    colour: str
    ends_with: list  # what the notebook ends with: the text of its step in the strip
    row: int  # its row of the overview
    inputs: list  # what its you-are-here image starts from: [(key, lane)], white boxes
    nodes: dict  # key -> (lines in the overview, lines in the you-are-here image); a line is (text, kind)
    labels: dict  # name -> (overview, you-are-here) or (overview, you-are-here full, you-are-here short)
    layout: list  # Col, Gap, Op; the first item is the gap its incoming arrow crosses
    steps: list  # Arrow, Fork, Feed, Merge, Circle, Residual, Join


def _tensor(name, shape, dtype, sym, *notes):
    """A box of the overview: name, shape (separate lines for [dim]-like shapes), symbolic shape, notes."""
    return [(name, "name"), (shape, "mono"), (sym, "sym"), (dtype, "mono"), *[(n, "note") for n in notes]]


def _short(name, shape_dtype, *notes):
    """A box of a you-are-here image: name, shape and dtype on one line, notes."""
    return [(name, "name"), (shape_dtype, "mono"), *[(n, "note") for n in notes]]


def _wide(name, shape_dtype, sym, *notes):
    """An overview box whose shape and dtype share a line."""
    return [(name, "name"), (shape_dtype, "mono"), (sym, "sym"), *[(n, "note") for n in notes]]
