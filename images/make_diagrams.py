"""Draw the diagrams used by the notebooks and write them as PNG files next to this script.

Run from the repository root:

    .venv/bin/python images/make_diagrams.py

Writes
- images/path_overview.png: the whole path from the prompt to the next token, one coloured band per notebook;
- images/you_are_here_NN.png for every stage in STAGES: the series as a strip of seven steps with notebook NN
  marked and the others grey, and below it NN's own part of the path in detail, starting from the tensors
  the notebook starts from (white boxes);
- images/rope_pairs.png and images/rmsnorm_axes.png.

The notebooks of the series come from plumbing.series_notebooks() (the notebooks/NN_*.ipynb glob); the script
stops with an error if one of them has no entry in STAGES, so a new notebook is noticed here. The output is
deterministic: running the script twice gives byte-identical files (no date or version is stored). Shapes are
those of Meta-Llama-3-8B for the 17-token prompt
"the answer to the ultimate question of life, the universe, and everything is ".
"""

import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402
from matplotlib.patches import Circle, FancyBboxPatch, Polygon, Rectangle  # noqa: E402
from matplotlib.backends.backend_agg import RendererAgg  # noqa: E402

import plumbing  # noqa: E402

plt.style.use("default")  # ignore any local matplotlibrc, so every machine draws the same picture

OUT = Path(__file__).resolve().parent
DPI = 120

# Okabe-Ito colour-blind-safe palette
ORANGE, SKY, GREEN, YELLOW = "#E69F00", "#56B4E9", "#009E73", "#F0E442"
BLUE, VERMILLION, PURPLE, BLACK = "#0072B2", "#D55E00", "#CC79A7", "#000000"
GREY, LIGHT_GREY = "#9A9A9A", "#F2F2F2"
MONO, SANS = "DejaVu Sans Mono", "DejaVu Sans"

# notebook number -> (band title, colour, what the notebook ends with: the text of its step in the strip)
STAGES = {
    1: ("01 tokenization", ORANGE, ["tokens"]),
    2: ("02 embedding lookup", SKY, ["token_embeddings_", "unnormalized"]),
    3: ("03 RMSNorm", GREEN, ["token_embeddings"]),
    4: ("04 RoPE", PURPLE, ["xq_rotated,", "xk_rotated"]),
    5: ("05 attention", BLUE, ["h"]),
    6: ("06 feed-forward", VERMILLION, ["layer_output"]),
    7: ("07 next token", YELLOW, ["logits,", "next token"]),
}
ROWS = [(1, 2, 3, 4), (5,), (6, 7)]  # the overview's rows of stages


def tint(colour, amount):
    """Blend `colour` with white; amount=1 gives the colour, 0 gives white."""
    rgb = matplotlib.colors.to_rgb(colour)
    return tuple(1 - amount * (1 - c) for c in rgb)


def edge(colour):
    """The colour of lines and edges: Okabe-Ito's yellow is too light on white, so it is darkened."""
    if colour != YELLOW:
        return colour
    return tuple(0.72 * c for c in matplotlib.colors.to_rgb(colour))


def save(fig, name):
    fig.savefig(OUT / name, dpi=DPI, facecolor="white", metadata={"Software": None})
    plt.close(fig)
    print("wrote", OUT / name)


def canvas(width, height, xlim, ylim):
    fig = plt.figure(figsize=(width, height), facecolor="white")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")
    return fig, ax


def box(ax, x, y, w, h, lines, face="white", edge=BLACK, text=BLACK, lw=1.2):
    """Rounded box centred on (x, y); `lines` = [(string, fontsize, weight/style, family)]."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.08",
                                facecolor=face, edgecolor=edge, linewidth=lw))
    heights = [1.3 * size for _, size, _, _ in lines]
    offset = sum(heights) / 2
    for (string, size, style, family), hgt in zip(lines, heights):
        offset -= hgt / 2
        ax.annotate(string, (x, y), xytext=(0, offset), textcoords="offset points", ha="center",
                    va="center", fontsize=size, family=family, color=text,
                    fontweight="bold" if style == "bold" else "normal",
                    fontstyle="italic" if style == "italic" else "normal")
        offset -= hgt / 2


def arrow(ax, start, end, colour=BLACK, lw=1.3):
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color=colour, lw=lw, shrinkA=0, shrinkB=0,
                                mutation_scale=12))


# ---------------------------------------------------------------- the path through the model
# Coordinates are inches (the axes fill the figure and 1 data unit = 1 inch), so circles are round and
# box sizes follow the text they hold. A box's text: [(string, kind)]; the kinds' fonts are in Style.
# key -> (notebook, lines in the overview, lines in the you-are-here images)
NODES = {
    "text": (1, [("text", "name"), ("str", "mono"), ('"the answer to the', "note"), ("ultimate question of", "note"),
                 ("life, the universe,", "note"), ('and everything is "', "note")],
             [("text", "name"), ("str", "mono")]),
    "tokens": (1, [("tokens", "name"), ("[17]", "mono"), ("[seqlen]", "sym"), ("int64", "mono")],
               [("tokens", "name"), ("[17] int64", "mono")]),
    "unnorm": (2, [("token_embeddings_", "name"), ("unnormalized", "name"), ("[17, 4096]", "mono"),
                   ("[seqlen, dim]", "sym"), ("bf16", "mono")],
               [("token_embeddings_", "name"), ("unnormalized", "name"), ("[17, 4096] bf16", "mono")]),
    "norm": (3, [("token_embeddings", "name"), ("[17, 4096]", "mono"), ("[seqlen, dim]", "sym"), ("bf16", "mono")],
             [("token_embeddings", "name"), ("[17, 4096] bf16", "mono")]),
    "xq": (4, [("xq", "name"), ("[17, 32, 128] bf16", "mono"), ("[seqlen, n_heads, head_dim]", "sym")],
           [("xq", "name"), ("[17, 32, 128] bf16", "mono")]),
    "xk": (4, [("xk", "name"), ("[17, 8, 128] bf16", "mono"), ("[seqlen, n_kv_heads, head_dim]", "sym")],
           [("xk", "name"), ("[17, 8, 128] bf16", "mono")]),
    "freqs": (4, [("freqs_cis", "name"), ("[17, 64] complex64", "mono"), ("[seqlen, head_dim / 2]", "sym"),
                  (r"$\cos m\theta_i + i \sin m\theta_i$", "note")],
              [("freqs_cis", "name"), ("[17, 64] complex64", "mono")]),
    "xq_rot": (4, [("xq_rotated", "name"), ("[17, 32, 128] bf16", "mono"), ("[seqlen, n_heads, head_dim]", "sym")],
               [("xq_rotated", "name"), ("[17, 32, 128] bf16", "mono")]),
    "xk_rot": (4, [("xk_rotated", "name"), ("[17, 8, 128] bf16", "mono"), ("[seqlen, n_kv_heads, head_dim]", "sym")],
               [("xk_rotated", "name"), ("[17, 8, 128] bf16", "mono")]),
    "scores": (5, [("scores", "name"), ("[32, 17, 17] bf16", "mono"), ("[n_heads, seqlen, seqlen]", "sym")],
               [("scores", "name"), ("[32, 17, 17] bf16", "mono")]),
    "xv": (5, [("xv", "name"), ("[17, 8, 128] bf16", "mono"), ("[seqlen, n_kv_heads, head_dim]", "sym")],
           [("xv", "name"), ("[17, 8, 128] bf16", "mono")]),
    "probs": (5, [("softmax(scores)", "name"), ("[32, 17, 17] bf16", "mono"), ("attention weights", "note")],
              [("softmax(scores)", "name"), ("[32, 17, 17] bf16", "mono")]),
    "attn_out": (5, [("attention_output", "name"), ("[17, 4096]", "mono"), ("[seqlen, dim]", "sym"),
                     ("bf16", "mono")],
                 [("attention_output", "name"), ("[17, 4096] bf16", "mono")]),
    "h": (5, [("h", "name"), ("[17, 4096]", "mono"), ("[seqlen, dim]", "sym"), ("bf16", "mono")],
          [("h", "name"), ("[17, 4096] bf16", "mono")]),
    "ffn_input": (6, [("ffn_input", "name"), ("[17, 4096]", "mono"), ("[seqlen, dim]", "sym"), ("bf16", "mono")],
                  [("ffn_input", "name"), ("[17, 4096] bf16", "mono")]),
    "gate": (6, [("gate", "name"), ("[17, 14336]", "mono"), ("[seqlen, hidden_dim]", "sym"), ("bf16", "mono")],
             [("gate", "name"), ("[17, 14336] bf16", "mono")]),
    "up": (6, [("up", "name"), ("[17, 14336]", "mono"), ("[seqlen, hidden_dim]", "sym"), ("bf16", "mono")],
           [("up", "name"), ("[17, 14336] bf16", "mono")]),
    "ffn_output": (6, [("ffn_output", "name"), ("[17, 4096]", "mono"), ("[seqlen, dim]", "sym"), ("bf16", "mono")],
                   [("ffn_output", "name"), ("[17, 4096] bf16", "mono")]),
    "layer_output": (6, [("layer_output", "name"), ("[17, 4096]", "mono"), ("[seqlen, dim]", "sym"),
                         ("bf16", "mono"), ("output of layer 0", "note")],
                     [("layer_output", "name"), ("[17, 4096] bf16", "mono")]),
    "h_last": (7, [("h", "name"), ("[17, 4096]", "mono"), ("[seqlen, dim]", "sym"), ("bf16", "mono"),
                   ("after layer 31", "note")],
               [("h", "name"), ("[17, 4096] bf16", "mono"), ("after layer 31", "note")]),
    "logits": (7, [("logits", "name"), ("[17, 128256]", "mono"), ("[seqlen, vocab_size]", "sym"),
                   ("float32", "mono")],
               [("logits", "name"), ("[17, 128256] float32", "mono")]),
    "next": (7, [("next token", "name"), ("[1] int64", "mono"), ("with Meta's weights:", "note"), ('"42"', "name")],
             [("next token", "name"), ("Meta's weights:", "note"), ('"42"', "name")]),
}

# the text on the arrows: name -> (overview, you-are-here)
LABELS = {
    "bpe": ("tiktoken\nBPE", "BPE"),
    "lookup": ("tok_embeddings\n.weight\n[tokens]", "lookup"),
    "attention_norm": ("RMSNorm with\nlayers.0.\nattention_norm\n.weight", "RMSNorm"),
    "wq": ("@ wq.T\n+ reshape", "@ wq.T"),
    "wk": ("@ wk.T\n+ reshape", "@ wk.T"),
    "rope": ("RoPE: multiply\nby freqs_cis", "RoPE"),
    "scores": ("repeat_kv,\nxq @ keys.T\n/ √head_dim", "xq @ xk.T\n/ √128"),
    "wv": ("token_embeddings\n@ wv.T + reshape", "@ wv.T"),
    "softmax": ("+ causal mask,\nsoftmax\nin float32", "+ mask,\nsoftmax"),
    "weighted_sum": ("weighted sum\nof values,\nheads side\nby side", "weighted\nsum"),
    "wo": ("@ wo.T", "@ wo.T"),
    "ffn_norm": ("RMSNorm with\nlayers.0.\nffn_norm\n.weight", "ffn_norm"),
    "w1": ("@ w1.T", "@ w1.T"),
    "w3": ("@ w3.T", "@ w3.T"),
    "silu": ("silu", "silu"),
    "silu_up": ("silu(gate) * up\n[17, 14336]", "silu(gate)\n* up"),
    "w2": ("@ w2.T", "@ w2.T"),
    # 07 starts from layer_output in the overview, from tokens in its you-are-here image
    "layers": ("layers 1 … 31:\nthe same block,\nown weights", "layers 1 … 31"),
    "layers_yah": ("lookup (02), then\nthe block (03 to 06)\nfor each of the\n32 layers",
                   "lookup (02),\n32 blocks\n(03 to 06)"),
    "output": ("RMSNorm with\nnorm.weight,\n@ output.T,\n.float()", "norm,\n@ output.T"),
    "argmax": ("argmax of\nthe last row", "argmax of\nthe last row"),
    "residual_x": ("x = token_embeddings_unnormalized, kept: the residual stream (added back in 05)", ""),
    "residual_x_yah": ("x = token_embeddings_unnormalized (02), kept: the residual stream",
                       "x = token_embeddings_unnormalized (02), kept"),
    "residual_h": ("h, kept", "h, kept"),
}

# what each you-are-here image starts from: (key, lane); lanes are +1 (upper), 0, -1 (lower)
INPUTS = {1: [], 2: [("tokens", 0)], 3: [("unnorm", 0)], 4: [("norm", 0)],
          5: [("xq_rot", 1), ("xk_rot", 0), ("norm", -1)], 6: [("h", 0)], 7: [("tokens", 0)]}


_MEASURE = RendererAgg(100, 100, 72)  # at 72 dpi, one pixel is one point


def text_width(text, size, family, style="normal"):
    """Width in inches of one line of text as matplotlib lays it out."""
    prop = FontProperties(family=family, size=size, weight="bold" if style == "bold" else "normal",
                          style="italic" if style == "italic" else "normal")
    width, _, _ = _MEASURE.get_text_width_height_descent(text, prop, ismath="$" in text)
    return width / 72


class Style:
    """Fonts (points) and distances (inches) of one kind of drawing.

    yah: a you-are-here image (smaller fonts) rather than the overview; rich: the boxes and arrows say
    everything (NODES' and LABELS' first text), else the short second text.
    """

    def __init__(self, yah, rich):
        self.yah, self.rich = yah, rich
        if yah:
            self.kinds = {"name": (8, "bold", MONO), "mono": (7.5, "normal", MONO), "sym": (6.5, "normal", SANS),
                          "note": (7, "italic", SANS)}
            self.op, self.band, self.circle_font = 7.5, 9, 10
            self.lane, self.hpad, self.vpad, self.min_gap, self.radius = 0.5, 0.07, 0.07, 0.4, 0.13
            self.small_gap = 0.25
        else:
            self.kinds = {"name": (9.5, "bold", MONO), "mono": (9, "normal", MONO), "sym": (7, "normal", SANS),
                          "note": (7.5, "italic", SANS)}
            self.op, self.band, self.circle_font = 7.5, 10, 12
            self.lane, self.hpad, self.vpad, self.min_gap, self.radius = 0.62, 0.1, 0.1, 0.55, 0.15
            self.small_gap = 0.3

    def lines(self, key):
        _, full, short = NODES[key]
        return [(text,) + self.kinds[kind] for text, kind in (full if self.rich else short)]

    def box_size(self, key):
        lines = self.lines(key)
        width = max(text_width(text, size, family, style) for text, size, style, family in lines)
        return width + 2 * self.hpad, sum(1.3 * size for _, size, _, _ in lines) / 72 + 2 * self.vpad

    def label(self, name):
        return LABELS[name][0 if self.rich else 1]

    def label_width(self, name):
        return max(text_width(line, self.op, MONO) for line in self.label(name).split("\n"))


class Row:
    """Items placed left to right: columns of boxes, gaps (an arrow and its label), circles (an operation)."""

    def __init__(self, S):
        self.S, self.items, self.boxes = S, {}, {}

    def col(self, name, stage, nodes, role="stage"):
        """`nodes` = [(key, lane)]; role "input" draws white boxes (what a notebook starts from)."""
        width = max(self.S.box_size(key)[0] for key, _ in nodes)
        self.items[name] = dict(kind="col", stage=stage, nodes=nodes, width=width, role=role)

    def gap(self, name, stage, labels=(), width=None, lane=0, offset=0.0):
        """An arrow's room: as wide as its labels; labels[0] is drawn above the arrow on `lane`, labels[1]
        below the arrow on the opposite lane (a fork)."""
        needed = [self.S.label_width(label) + 0.13 + offset for label in labels]
        self.items[name] = dict(kind="gap", stage=stage, width=max([width or self.S.min_gap] + needed),
                                labels=list(labels), lane=lane)

    def label_extent(self, item, below):
        """How far the labels of a gap reach above (or below) the middle lane."""
        labels = item.get("labels", [])
        if len(labels) <= below:
            return 0.0
        lines = len(self.S.label(labels[below]).split("\n"))
        return abs(item["lane"]) * self.S.lane + (3.5 + lines * 1.15 * self.S.op) / 72

    def circle(self, name, stage):
        self.items[name] = dict(kind="circle", stage=stage, width=2 * self.S.radius)

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


FORK, BRANCH, SHADOW = 0.14, 0.16, 0.12  # inches: where a fork splits, where the residual branches off; stack


def build_stage(R, nb):
    """Append notebook nb's items to row R (its first item is the gap its incoming arrow crosses)."""
    if nb == 1:
        R.col("c_text", 1, [("text", 0)])
        R.gap("g_bpe", 1, ["bpe"])
        R.col("c_tokens", 1, [("tokens", 0)])
    elif nb == 2:
        R.gap("g_lookup", 2, ["lookup"])
        R.col("c_unnorm", 2, [("unnorm", 0)])
    elif nb == 3:
        R.gap("g_norm", 3, ["attention_norm"])
        R.col("c_norm", 3, [("norm", 0)])
    elif nb == 4:
        R.gap("g_proj", 4, ["wq", "wk"], lane=1, offset=FORK)
        R.col("c_xqk", 4, [("xq", 1), ("xk", -1)])
        R.gap("g_rope_a", 4, width=R.S.small_gap)
        R.col("c_freqs", 4, [("freqs", 0)])
        R.gap("g_rope_b", 4, width=R.S.small_gap)
        R.col("c_rot", 4, [("xq_rot", 1), ("xk_rot", -1)])
    elif nb == 5:
        R.gap("g_scores", 5, ["scores", "wv"], lane=1)
        R.col("c_scores", 5, [("scores", 1), ("xv", -1)])
        R.gap("g_softmax", 5, ["softmax"], lane=1)
        R.col("c_probs", 5, [("probs", 1)])
        R.gap("g_sum", 5, width=R.S.small_gap)
        R.circle("sum", 5)
        R.gap("g_wo", 5, ["wo"])
        R.col("c_attn_out", 5, [("attn_out", 0)])
        R.gap("g_add1", 5, width=R.S.small_gap)
        R.circle("add1", 5)
        R.gap("g_h", 5, width=R.S.small_gap)
        R.col("c_h", 5, [("h", 0)])
    elif nb == 6:
        R.gap("g_ffn_norm", 6, ["ffn_norm"], width=0.75, offset=2 * BRANCH)
        R.col("c_ffn_input", 6, [("ffn_input", 0)])
        R.gap("g_w13", 6, ["w1", "w3"], lane=1, offset=FORK)
        R.col("c_gate_up", 6, [("gate", 1), ("up", -1)])
        R.gap("g_silu", 6, ["silu"], width=0.45, lane=1)
        R.circle("mul", 6)
        R.gap("g_w2", 6, ["w2"])
        R.col("c_ffn_output", 6, [("ffn_output", 0)])
        R.gap("g_add2", 6, width=R.S.small_gap)
        R.circle("add2", 6)
        R.gap("g_layer_output", 6, width=R.S.small_gap)
        R.col("c_layer_output", 6, [("layer_output", 0)])
    elif nb == 7:
        R.gap("g_layers", 7, ["layers_yah" if R.S.yah else "layers"])
        R.col("c_h_last", 7, [("h_last", 0)])
        R.gap("g_output", 7, ["output"], offset=2 * SHADOW)
        R.col("c_logits", 7, [("logits", 0)])
        R.gap("g_argmax", 7, ["argmax"])
        R.col("c_next", 7, [("next", 0)])
    else:
        raise ValueError(f"no drawing data for notebook {nb:02d}")


def residual_y(R):
    """Height of the line that carries the residual stream under a row's boxes."""
    return R.bottom() - 0.22


def polyline(ax, points, colour=BLACK, lw=1.3, head=True):
    """Straight segments through `points`; an arrowhead at the last point."""
    body = points[:-1] if head else points
    if len(body) > 1:
        ax.plot([p[0] for p in body], [p[1] for p in body], color=colour, lw=lw, solid_joinstyle="miter",
                solid_capstyle="butt", zorder=1.5)
    if head:
        arrow(ax, points[-2], points[-1], colour, lw)


def label(ax, S, name, x, y, where="above", colour=BLACK):
    """An arrow's label: centred above or below (x, y), or to the left of it ("left")."""
    offset = {"above": (0, 3.5), "below": (0, -3.5), "left": (-4, 0)}[where]
    ax.annotate(S.label(name), (x, y), xytext=offset, textcoords="offset points",
                ha="right" if where == "left" else "center",
                va={"above": "bottom", "below": "top", "left": "center"}[where],
                fontsize=S.op, family=MONO, color=colour, linespacing=1.15)


def dot(ax, x, y, colour=BLACK):
    ax.plot([x], [y], "o", color=colour, ms=4.5, zorder=2)


def op_circle(ax, S, R, name, symbol):
    x, r = R[name]["xc"], S.radius
    ax.add_patch(Circle((x, R.y0), r, facecolor="white", edgecolor=BLACK, lw=1.3, zorder=3))
    ax.text(x, R.y0, symbol, ha="center", va="center_baseline", fontsize=S.circle_font, color=BLACK, zorder=4)


def draw_boxes(ax, S, R):
    for item in R.items.values():
        for key, _ in item.get("nodes", []):
            x, y, w, h = R.boxes[key]
            if item["role"] == "input":
                box(ax, x, y, w, h, S.lines(key), face="white", edge=BLACK)
                continue
            colour = STAGES[item["stage"]][1]
            if key == "h_last":  # the 32 blocks: a stack of boxes
                for k in (2, 1):
                    ax.add_patch(FancyBboxPatch((x - w / 2 + SHADOW / 2 * k, y - h / 2 + SHADOW / 2 * k), w, h,
                                                boxstyle="round,pad=0,rounding_size=0.08", lw=1.2, zorder=0.9,
                                                facecolor=tint(colour, 0.35), edgecolor=edge(colour)))
            box(ax, x, y, w, h, S.lines(key), face=tint(colour, 0.35), edge=edge(colour), lw=1.6)


def draw_stage(ax, S, R, nb):
    """Notebook nb's arrows and operations inside row R (its boxes are drawn by draw_boxes)."""
    y0, L = R.y0, S.lane
    if nb == 1:
        arrow(ax, R.right("text"), R.left("tokens"))
        label(ax, S, "bpe", R["g_bpe"]["xc"], y0)
    elif nb == 2:
        arrow(ax, (R["g_lookup"]["x0"], y0), R.left("unnorm"))
        label(ax, S, "lookup", R["g_lookup"]["xc"], y0)
    elif nb == 3:
        arrow(ax, (R["g_norm"]["x0"], y0), R.left("norm"))
        label(ax, S, "attention_norm", R["g_norm"]["xc"], y0)
    elif nb == 4:
        g = R["g_proj"]
        xs = g["x0"] + FORK  # the fork: one input, two projections
        polyline(ax, [(g["x0"], y0), (xs, y0)], head=False)
        polyline(ax, [(xs, y0 - L), (xs, y0 + L)], head=False)
        dot(ax, xs, y0)
        arrow(ax, (xs, y0 + L), R.left("xq"))
        arrow(ax, (xs, y0 - L), R.left("xk"))
        label(ax, S, "wq", (xs + g["x1"]) / 2, y0 + L)
        label(ax, S, "wk", (xs + g["x1"]) / 2, y0 - L, "below")
        arrow(ax, R.right("xq"), R.left("xq_rot"))
        arrow(ax, R.right("xk"), R.left("xk_rot"))
        fx, _, _, fh = R.boxes["freqs"]  # freqs_cis feeds both rotations
        ax.plot([fx, fx], [y0 + fh / 2, y0 + L], color=BLACK, lw=1.3, zorder=1)
        ax.plot([fx, fx], [y0 - fh / 2, y0 - L], color=BLACK, lw=1.3, zorder=1)
        dot(ax, fx, y0 + L)
        dot(ax, fx, y0 - L)
        label(ax, S, "rope", fx, y0 + L)
    elif nb == 5:
        g = R["g_scores"]
        arrow(ax, (g["x0"], y0 + L + (0.07 if S.yah else 0)), R.left("scores", 0.07 if S.yah else 0))
        label(ax, S, "scores", g["xc"], y0 + L + (0.07 if S.yah else 0))
        arrow(ax, (g["x0"], y0 - L), R.left("xv"))
        label(ax, S, "wv", g["xc"], y0 - L, "below")
        arrow(ax, R.right("scores"), R.left("probs"))
        label(ax, S, "softmax", R["g_softmax"]["xc"], y0 + L)
        sx, r = R["sum"]["xc"], S.radius  # weighted sum: softmax(scores) @ values
        polyline(ax, [R.right("probs"), (sx, y0 + L), (sx, y0 + r)])
        polyline(ax, [R.right("xv"), (sx, y0 - L), (sx, y0 - r)])
        op_circle(ax, S, R, "sum", "Σ")
        label(ax, S, "weighted_sum", sx - r, y0, "left")
        arrow(ax, (sx + r, y0), R.left("attn_out"))
        label(ax, S, "wo", R["g_wo"]["xc"], y0)
        ax_ = R["add1"]["xc"]
        arrow(ax, R.right("attn_out"), (ax_ - r, y0))
        op_circle(ax, S, R, "add1", "+")
        arrow(ax, (ax_ + r, y0), R.left("h"))
        # the residual connection: x, the embedding rows, added back
        yr, colour = residual_y(R), edge(STAGES[5][1])
        polyline(ax, [(R.x0, yr), (ax_, yr), (ax_, y0 - r)], colour, lw=2.0)
        if S.yah:
            dot(ax, R.x0, yr, colour)
            ax.text(R.x0, yr - 0.05, S.label("residual_x_yah"), ha="left", va="top", fontsize=S.op, family=MONO,
                    color=colour)
    elif nb == 6:
        g = R["g_ffn_norm"]
        arrow(ax, (g["x0"], y0), R.left("ffn_input"))
        label(ax, S, "ffn_norm", (g["x0"] + 2 * BRANCH + g["x1"]) / 2, y0)
        yr, colour, r = residual_y(R), edge(STAGES[6][1]), S.radius  # the residual connection: h added back
        ax2 = R["add2"]["xc"]
        xb = g["x0"] + BRANCH
        polyline(ax, [(xb, y0), (xb, yr), (ax2, yr), (ax2, y0 - r)], colour, lw=2.0)
        dot(ax, xb, y0, colour)
        ax.annotate(S.label("residual_h"), ((xb + ax2) / 2, yr), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=S.op, family=MONO, color=colour)
        g = R["g_w13"]
        xs = g["x0"] + FORK
        polyline(ax, [(g["x0"], y0), (xs, y0)], head=False)
        polyline(ax, [(xs, y0 - L), (xs, y0 + L)], head=False)
        dot(ax, xs, y0)
        arrow(ax, (xs, y0 + L), R.left("gate"))
        arrow(ax, (xs, y0 - L), R.left("up"))
        label(ax, S, "w1", (xs + g["x1"]) / 2, y0 + L)
        label(ax, S, "w3", (xs + g["x1"]) / 2, y0 - L, "below")
        mx = R["mul"]["xc"]
        polyline(ax, [R.right("gate"), (mx, y0 + L), (mx, y0 + r)])
        polyline(ax, [R.right("up"), (mx, y0 - L), (mx, y0 - r)])
        label(ax, S, "silu", (R.right("gate")[0] + mx) / 2, y0 + L)
        op_circle(ax, S, R, "mul", "×")
        label(ax, S, "silu_up", mx - r, y0, "left")
        arrow(ax, (mx + r, y0), R.left("ffn_output"))
        label(ax, S, "w2", R["g_w2"]["xc"], y0)
        arrow(ax, R.right("ffn_output"), (ax2 - r, y0))
        op_circle(ax, S, R, "add2", "+")
        arrow(ax, (ax2 + r, y0), R.left("layer_output"))
    elif nb == 7:
        g = R["g_layers"]
        arrow(ax, (g["x0"], y0), R.left("h_last"))
        label(ax, S, "layers_yah" if S.yah else "layers", g["xc"], y0)
        arrow(ax, R.right("h_last"), R.left("logits"))
        label(ax, S, "output", R["g_output"]["xc"] + SHADOW, y0)
        arrow(ax, R.right("logits"), R.left("next"))
        label(ax, S, "argmax", R["g_argmax"]["xc"], y0)


def band(ax, S, x0, x1, y0, y1, nb, marked=False):
    """A notebook's band: a tinted rectangle with its title at the top."""
    title, colour, _ = STAGES[nb]
    ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=tint(colour, 0.16), edgecolor="none", zorder=-2))
    ax.text((x0 + x1) / 2, y1 - 0.08, ("▶ " if marked else "") + title, ha="center", va="top", fontsize=S.band,
            fontweight="bold" if marked else "normal", color=BLACK)


def check_stages():
    """Every notebook of the series must have drawing data here: a new notebook is noticed, not skipped."""
    numbers = {}
    for path in plumbing.series_notebooks():
        numbers[int(re.match(r"(\d\d)_", path.name).group(1))] = path.name
    if sorted(n for row in ROWS for n in row) != sorted(STAGES):
        sys.exit("images/make_diagrams.py: ROWS must hold every stage of STAGES once")
    missing = {n: name for n, name in numbers.items() if n not in STAGES}
    if missing:
        sys.exit(f"images/make_diagrams.py: no drawing data for {', '.join(sorted(missing.values()))}: add the "
                 "notebook to STAGES, NODES, LABELS, INPUTS, build_stage and draw_stage (and to a row of ROWS)")


# ---------------------------------------------------------------- the overview: every notebook, three rows
WIDTH = 17.0
MARGIN_RESIDUAL, MARGIN_WRAP, MARGIN_ROW = 0.14, 0.3, 0.46  # x of the residual line, the wrap lines, the rows


def draw_overview():
    S = Style(yah=False, rich=True)
    rows, stretches = [], []
    for stages in ROWS:
        R = Row(S)
        for nb in stages:
            build_stage(R, nb)
        gaps = sum(item["kind"] == "gap" for item in R.items.values())
        spare = WIDTH - 2 * MARGIN_ROW - R.natural_width()
        if spare < 0:
            raise ValueError(f"overview row {stages} is {-spare:.2f} in too wide")
        R.place(MARGIN_ROW, 0.0, spare / gaps)
        rows.append(R)
        stretches.append(spare / gaps)

    # stack the rows from the top: a title strip, the boxes, the residual line; between rows the wrap lines
    title_h, y, extents = 0.4, -0.08, []
    for i, (R, stretch) in enumerate(zip(rows, stretches)):
        top = y
        R.place(MARGIN_ROW, top - title_h - (R.top() - R.y0), stretch)
        bottom = residual_y(R) - 0.14 if {5, 6} & set(R.stages()) else R.bottom() - 0.14
        extents.append((top, bottom))
        y = bottom - (0.95 if i == 0 else 0.55)
    height = -(y + 0.55 - 0.62)
    fig, ax = canvas(WIDTH, height, (0, WIDTH), (-height, 0))
    for R, (top, bottom) in zip(rows, extents):
        for nb in R.stages():
            x0, x1 = R.span(nb)
            band(ax, S, x0 - 0.08 * (x0 == R.x0), x1 + 0.08 * (x1 == R.x1), bottom, top, nb)
        draw_boxes(ax, S, R)
        for nb in R.stages():
            draw_stage(ax, S, R, nb)
    r1, r2, r3 = rows

    def along(text, x0, x1, y, colour=BLACK):
        ax.annotate(text, ((x0 + x1) / 2, y), xytext=(0, 3), textcoords="offset points", ha="center",
                    va="bottom", fontsize=S.op, family=MONO, color=colour)

    # 04 -> 05: xq_rotated and xk_rotated go down to the start of the second row
    xm = WIDTH - MARGIN_WRAP
    (xa, ya), (xb, yb) = r1.right("xq_rot"), r1.right("xk_rot")
    yw1 = extents[0][1] - 0.66
    polyline(ax, [(xa, ya), (xm, ya), (xm, yb)], head=False)
    polyline(ax, [(xb, yb), (xm, yb), (xm, yw1), (MARGIN_WRAP, yw1), (MARGIN_WRAP, r2.y0 + S.lane),
                  (r2.x0, r2.y0 + S.lane)], head=False)
    along("xq_rotated, xk_rotated: on to 05", MARGIN_WRAP, xm, yw1)
    # 05 -> 06: h
    yw2 = extents[1][1] - 0.28
    polyline(ax, [r2.right("h"), (xm, r2.y0), (xm, yw2), (MARGIN_WRAP, yw2), (MARGIN_WRAP, r3.y0),
                  (r3.x0, r3.y0)], head=False)
    along("h: on to 06", MARGIN_WRAP, xm, yw2)
    # the first residual connection: the embedding rows x, from 02, to the addition in 05
    colour = edge(STAGES[5][1])
    ux, uy, _, uh = r1.boxes["unnorm"]
    yr1 = extents[0][1] - 0.3
    polyline(ax, [(ux, uy - uh / 2), (ux, yr1), (MARGIN_RESIDUAL, yr1), (MARGIN_RESIDUAL, residual_y(r2)),
                  (r2.x0, residual_y(r2))], colour, lw=2.0, head=False)
    ax.annotate(S.label("residual_x"), (MARGIN_ROW, yr1), xytext=(0, -3), textcoords="offset points", ha="left",
                va="top", fontsize=S.op, family=MONO, color=colour)

    ax.text(MARGIN_ROW, -height + 0.42,
            "dim = 4096, n_heads = 32, n_kv_heads = 8, head_dim = 128, hidden_dim = 14336, n_layers = 32, "
            "vocab_size = 128256;  seqlen = 17 tokens;  m = position,  "
            r"$\theta_i = 500000^{-2i/128},\ i = 0 \ldots 63$", ha="left", va="center", fontsize=8)
    ax.text(MARGIN_ROW, -height + 0.17,
            "layer 0's weights (layers.0.…): attention.wq, .wo [4096, 4096];  attention.wk, .wv [1024, 4096];  "
            "feed_forward.w1, .w3 [14336, 4096];  feed_forward.w2 [4096, 14336];  the last: output.weight "
            "[128256, 4096]", ha="left", va="center", fontsize=8)
    return fig


# ---------------------------------------------------------------- you are here: the strip and one stage
YAH_WIDTH = 10.0


def stacks_fit(R):
    """Do the boxes of every column fit on their lanes without touching?"""
    for item in R.items.values():
        lanes = sorted(item.get("nodes", []), key=lambda node: -node[1])
        for (a, lane_a), (b, lane_b) in zip(lanes, lanes[1:]):
            if (R.S.box_size(a)[1] + R.S.box_size(b)[1]) / 2 + 0.08 > R.S.lane * (lane_a - lane_b):
                return False
    return True


def yah_row(nb):
    """Notebook nb's stage after the tensors it starts from: with every detail if that fits, else the short texts."""
    for rich in (True, False):
        R = Row(Style(yah=True, rich=rich))
        if INPUTS[nb]:
            R.col("c_inputs", None, INPUTS[nb], role="input")
        build_stage(R, nb)
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
    n, pitch_gap, chip_h, top, margin = len(STAGES), 0.15, 0.6, -0.1, 0.12
    chip_w = (YAH_WIDTH - 2 * margin - (n - 1) * pitch_gap) / n
    widest = max(text_width(title, 10, SANS, "bold") for title, _, _ in STAGES.values())
    title_font = min(7.5, 10 * (chip_w - 0.1) / widest)  # every title fits its step, in bold
    band_top = top - chip_h - 0.34
    title_h = 0.34
    R.place(x0, band_top - title_h - (R.top() - R.y0), stretch)
    bottom = R.bottom() - 0.12
    if nb in (5, 6):
        bottom = residual_y(R) - (0.26 if nb == 5 else 0.12)
    height = -(bottom - 0.1)
    fig, ax = canvas(YAH_WIDTH, height, (0, YAH_WIDTH), (-height, 0))
    colour = STAGES[nb][1]
    chips = {}
    for i, (k, (title, c, ends_with)) in enumerate(sorted(STAGES.items())):
        cx0 = margin + i * (chip_w + pitch_gap)
        chips[k] = cx0
        here = k == nb
        ax.add_patch(FancyBboxPatch((cx0, top - chip_h), chip_w, chip_h, boxstyle="round,pad=0,rounding_size=0.06",
                                    facecolor=tint(c, 0.35) if here else LIGHT_GREY,
                                    edgecolor=edge(c) if here else GREY, lw=1.6 if here else 1.0))
        lines = [(title, title_font, "bold" if here else "normal", SANS)] + [(t, 7, "normal", MONO) for t in ends_with]
        heights = [1.3 * size / 72 for _, size, _, _ in lines]
        yy = top - chip_h / 2 + sum(heights) / 2
        for (t, size, weight, family), hh in zip(lines, heights):
            ax.text(cx0 + chip_w / 2, yy - hh / 2, t, ha="center", va="center", fontsize=size, family=family,
                    fontweight=weight, color=BLACK if here else GREY)
            yy -= hh
        if i:
            arrow(ax, (cx0 - pitch_gap + 0.03, top - chip_h / 2), (cx0 - 0.03, top - chip_h / 2), GREY, 1.0)
    # the detail: the notebook's band, joined to its step in the strip
    bx0, bx1 = R.span(nb)
    bx0, bx1 = bx0 - 0.06 * ("c_inputs" not in R.items), bx1 + 0.06
    cx0 = chips[nb]
    ax.add_patch(Polygon([(cx0, top - chip_h), (cx0 + chip_w, top - chip_h), (bx1, band_top), (bx0, band_top)],
                         closed=True, facecolor=tint(colour, 0.1), edgecolor="none", zorder=-3))
    band(ax, S, bx0, bx1, bottom, band_top, nb, marked=True)
    draw_boxes(ax, S, R)
    draw_stage(ax, S, R, nb)
    if nb == 5:  # the keys join the queries on their way to the scores
        g, L = R["g_scores"], S.lane
        xk = g["x0"] + 0.12
        polyline(ax, [R.right("xk_rot"), (xk, R.y0), (xk, R.y0 + L - 0.09), R.left("scores", -0.09)])
    return fig


# ---------------------------------------------------------------- RoPE pairing, Meta vs HF
PAIR_COLOUR = {0: ORANGE, 1: SKY, 2: GREEN, 3: BLUE, 63: PURPLE}  # pair i -> colour, same in both layouts


def draw_rope_pairs():
    fig, ax = canvas(12.5, 6.0, (0, 12.5), (0, 6.0))
    cell = 0.42

    def row(y, dims, pair_of):
        """Cells for some of one head's 128 dims (None = '…'), labelled with their pair. Returns x of each dim."""
        xs, x = {}, 0.5
        for d in dims:
            if d is None:
                ax.text(x + 0.1, y + cell / 2, "…", ha="center", va="center", fontsize=12)
                x += 0.2 + 0.06
                continue
            ax.add_patch(Rectangle((x, y), cell, cell, facecolor=tint(PAIR_COLOUR[pair_of(d)], 0.55),
                                   edgecolor=BLACK, lw=0.8))
            ax.text(x + cell / 2, y + cell / 2, str(d), ha="center", va="center", fontsize=8.5, family=MONO)
            xs[d] = x + cell / 2
            x += cell + 0.06
        return xs

    # Meta: interleaved, pair i = dims (2i, 2i+1)
    ax.text(0.5, 5.8, "Meta layout (apply_rotary_emb in Meta's llama/model.py): adjacent dimensions form a pair",
            fontsize=11, fontweight="bold", va="top")
    ax.text(0.5, 5.45, "view_as_complex(x.reshape(..., 64, 2)):  pair i = dims (2i, 2i+1)  →  complex number "
            "x[2i] + i·x[2i+1]", fontsize=9.5, va="top", family=MONO)
    xs = row(4.45, [0, 1, 2, 3, 4, 5, 6, 7, None, 126, 127], lambda d: d // 2)
    for i in PAIR_COLOUR:
        x0, x1, y = xs[2 * i] - cell / 2, xs[2 * i + 1] + cell / 2, 4.38
        ax.plot([x0, x0, x1, x1], [y, y - 0.1, y - 0.1, y], color=PAIR_COLOUR[i], lw=1.6)
        ax.text((x0 + x1) / 2, y - 0.17, f"pair {i}\nangle $m\\theta_{{{i}}}$", ha="center", va="top",
                fontsize=8.5)

    # Hugging Face: rotate_half, pair i = dims (i, i+64)
    ax.text(0.5, 3.1, "Hugging Face layout (rotate_half in transformers' modeling_llama.py): "
            "dimension i pairs with i + 64", fontsize=11, fontweight="bold", va="top")
    ax.text(0.5, 2.75, "x * cos + rotate_half(x) * sin,  rotate_half(x) = cat(−x[64:], x[:64]):  "
            "pair i = dims (i, i+64)", fontsize=9.5, va="top", family=MONO)
    y = 1.2
    xs = row(y, [0, 1, 2, 3, None, 63, 64, 65, 66, 67, None, 127], lambda d: d % 64)
    for k, i in enumerate(PAIR_COLOUR):
        x0, x1, top, rise = xs[i], xs[i + 64], y + cell + 0.04, 0.22 + 0.12 * k
        ax.plot([x0, x0, x1, x1], [top, top + rise, top + rise, top], color=PAIR_COLOUR[i], lw=1.6)
        for d in (i, i + 64):
            ax.text(xs[d], y - 0.07, f"pair\n{i}", ha="center", va="top", fontsize=8, linespacing=1.0)

    # one pair, rotated in its own plane
    cx, cy, r = 10.55, 4.2, 1.0
    theta_63 = 500000 ** (-126 / 128)
    exponent = math.floor(math.log10(theta_63))
    ax.annotate("", xy=(cx + 1.3, cy), xytext=(cx - 0.3, cy), arrowprops=dict(arrowstyle="-|>", color=GREY, lw=0.8))
    ax.annotate("", xy=(cx, cy + 1.25), xytext=(cx, cy - 0.3), arrowprops=dict(arrowstyle="-|>", color=GREY, lw=0.8))
    a0, turn = math.radians(15), math.radians(50)
    p = (cx + r * math.cos(a0), cy + r * math.sin(a0))
    arrow(ax, (cx, cy), p, BLACK, 1.6)
    arrow(ax, (cx, cy), (cx + r * math.cos(a0 + turn), cy + r * math.sin(a0 + turn)), PURPLE, 1.8)
    arc = [a0 + turn * t / 20 for t in range(21)]
    ax.plot([cx + 0.45 * math.cos(a) for a in arc], [cy + 0.45 * math.sin(a) for a in arc], color=PURPLE, lw=1.2)
    ax.text(cx + 0.5 * math.cos(a0 + turn / 2) + 0.05, cy + 0.5 * math.sin(a0 + turn / 2), r"$m\theta_i$",
            fontsize=10, va="bottom")
    ax.text(p[0] + 0.05, p[1] - 0.05, "(a, b)", fontsize=9, va="top")
    ax.text(cx + 1.35, cy, "a", fontsize=9, color=GREY, va="center")
    ax.text(cx + 0.07, cy + 1.25, "b", fontsize=9, color=GREY, va="center")
    ax.text(cx + 0.2, cy - 0.55,
            "pair i at position m, as a complex number:\n"
            "a, b = x[2i], x[2i+1] in Meta's layout,\nor x[i], x[i+64] in Hugging Face's\n"
            r"$(a + ib)\cdot$ freqs_cis[m, i]" "\n"
            r"$= (a + ib)(\cos m\theta_i + i \sin m\theta_i)$" "\n\n"
            r"$\theta_i = 500000^{-2i/128},\ i = 0 \ldots 63$" "\n"
            rf"$\theta_0 = 1,\ \theta_{{63}} \approx {theta_63 / 10 ** exponent:.1f} \times 10^{{{exponent}}}$",
            fontsize=9, va="top", ha="center", linespacing=1.6)
    ax.text(0.5, 0.3, "Both layouts apply the same 64 rotations; they differ only in which two of the 128 "
            "dimensions form each pair.\nHugging Face's conversion script permutes the rows of wq and wk so "
            "that its checkpoint, used with rotate_half, gives the same attention scores as Meta's.",
            fontsize=9, va="center")
    return fig


# ---------------------------------------------------------------- RMSNorm: which axis
def draw_rmsnorm_axes():
    fig, ax = canvas(12.6, 4.1, (0, 12.6), (0.3, 4.4))
    cols, cw, ch = 9, 0.42, 0.34
    rows = ["token 0", "token 1", "token 2", None, "token 15", "token 16"]  # None = '⋮'
    row_colours = [ORANGE, SKY, GREEN, None, BLUE, PURPLE]
    y_top = 3.45

    def matrix(x0, per_row):
        for r, name in enumerate(rows):
            y = y_top - (r + 1) * ch
            if name is None:
                ax.text(x0 + 3.5 * cw, y + ch / 2, "⋮", ha="center", va="center", fontsize=10)
                continue
            ax.text(x0 - 0.1, y + ch / 2, name, ha="right", va="center", fontsize=8.5)
            for c in range(cols):
                if c == cols - 2:  # a column of '…' for the hidden dims
                    ax.text(x0 + (c + 0.5) * cw, y + ch / 2, "…", ha="center", va="center", fontsize=9)
                    continue
                colour = row_colours[r] if per_row else YELLOW
                ax.add_patch(Rectangle((x0 + c * cw, y), cw, ch, facecolor=tint(colour, 0.5),
                                       edgecolor="white", lw=1.0))
        arrow(ax, (x0, y_top + 0.12), (x0 + cols * cw, y_top + 0.12), BLACK, 1.0)
        ax.text(x0 + cols * cw / 2, y_top + 0.2, "4096 values per token (last axis, dim=-1)",
                ha="center", va="bottom", fontsize=8.5)

    # left: RMSNorm, one statistic per row
    ax.text(0.3, 4.25, "RMSNorm (Llama): each token normalised over its own 4096 values", fontsize=11,
            fontweight="bold", va="top")
    x0 = 1.1
    matrix(x0, per_row=True)
    for r, name in enumerate(rows):
        y = y_top - (r + 0.5) * ch
        if name is not None:
            arrow(ax, (x0 + cols * cw + 0.08, y), (x0 + cols * cw + 0.48, y), row_colours[r], 1.1)
            ax.text(x0 + cols * cw + 0.55, y, f"rms[{name.split()[1]}]", ha="left", va="center",
                    fontsize=8.5, family=MONO)
        else:
            ax.text(x0 + cols * cw + 0.8, y, "⋮", ha="center", va="center", fontsize=10)
    ax.text(0.3, 1.15, "rms = sqrt(mean(x², dim=-1, keepdim=True) + norm_eps)  → [17, 1]\n"
            "out = x / rms * attention_norm.weight           → [17, 4096]\n"
            "norm_eps = 1e-5; a token's result does not depend on other tokens",
            fontsize=8.5, va="top", family=MONO, linespacing=1.5)

    # right: the wrong version, one statistic over everything
    ax.text(6.5, 4.25, "Not RMSNorm: one mean over all 17 × 4096 values", fontsize=11,
            fontweight="bold", va="top")
    x0, xr = 7.3, 7.3 + cols * cw + 0.12
    matrix(x0, per_row=False)
    ym = y_top - len(rows) * ch / 2
    ax.plot([xr, xr], [y_top, y_top - len(rows) * ch], color=BLACK, lw=1.1)
    arrow(ax, (xr, ym), (xr + 0.4, ym), BLACK, 1.1)
    ax.text(xr + 0.47, ym, "s: one\nnumber", ha="left", va="center", fontsize=8.5)
    ax.text(6.5, 1.15, "s = sqrt(mean(x²) + norm_eps)  → one scalar\n"
            "every token is divided by the same s, so a token's\n"
            "result changes when other tokens in the prompt change",
            fontsize=8.5, va="top", family=MONO, linespacing=1.5)
    ax.plot([6.25, 6.25], [0.4, 4.25], color=GREY, lw=0.8)
    return fig


def main():
    check_stages()
    save(draw_overview(), "path_overview.png")
    for nb in STAGES:
        save(draw_you_are_here(nb), f"you_are_here_{nb:02d}.png")
    save(draw_rope_pairs(), "rope_pairs.png")
    save(draw_rmsnorm_axes(), "rmsnorm_axes.png")


if __name__ == "__main__":
    main()
