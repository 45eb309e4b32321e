"""Draw the diagrams used by the notebooks and write them as PNG files next to this script.

Run from the repository root:

    .venv/bin/python images/make_diagrams.py

Writes images/path_overview.png, images/you_are_here_01.png ... _04.png,
images/rope_pairs.png and images/rmsnorm_axes.png.  The output is deterministic:
running the script twice gives byte-identical files (no date or version is stored).
Shapes are those of Meta-Llama-3-8B for the 17-token prompt
"the answer to the ultimate question of life, the universe, and everything is ".
"""

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

plt.style.use("default")  # ignore any local matplotlibrc, so every machine draws the same picture

OUT = Path(__file__).resolve().parent
DPI = 120

# Okabe-Ito colour-blind-safe palette
ORANGE, SKY, GREEN, YELLOW = "#E69F00", "#56B4E9", "#009E73", "#F0E442"
BLUE, VERMILLION, PURPLE, BLACK = "#0072B2", "#D55E00", "#CC79A7", "#000000"
GREY, LIGHT_GREY = "#9A9A9A", "#F2F2F2"
MONO = "DejaVu Sans Mono"

NOTEBOOKS = {  # notebook -> (title, colour)
    1: ("01 tokenization", ORANGE),
    2: ("02 embedding lookup", SKY),
    3: ("03 RMSNorm", GREEN),
    4: ("04 RoPE on layer 0's queries and keys", PURPLE),
}


def tint(colour, amount):
    """Blend `colour` with white; amount=1 gives the colour, 0 gives white."""
    rgb = matplotlib.colors.to_rgb(colour)
    return tuple(1 - amount * (1 - c) for c in rgb)


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


# ---------------------------------------------------------------- the path, notebooks 01..04
# column centres; the last gap is wider to leave room for freqs_cis
COLS = [0.95, 3.65, 6.35, 9.05, 11.75, 15.05]
XLIM = (0.0, 16.0)
# name -> (notebook, column, y, full-size lines, compact lines); a line is (text, kind).
# freqs_cis sits half-way between columns 4 and 5, below the row (its y depends on the size).
NODES = {
    "text": (1, 0, 0.0, [("text", "name"), ("str", "mono"), ('"the answer to the', "note"),
                         ("ultimate question of", "note"), ("life, the universe,", "note"),
                         ('and everything is "', "note")],
             [("text", "name"), ("str", "mono")]),
    "tokens": (1, 1, 0.0, [("tokens", "name"), ("[17]", "mono"), ("[seq]", "sym"), ("int64", "mono")],
               [("tokens", "name"), ("[17] int64", "mono")]),
    "unnorm": (2, 2, 0.0, [("token_embeddings_", "name"), ("unnormalized", "name"), ("[17, 4096]", "mono"),
                           ("[seq, dim]", "sym"), ("bf16", "mono")],
               [("token_embeddings_", "name"), ("unnormalized", "name"), ("[17, 4096] bf16", "mono")]),
    "norm": (3, 3, 0.0, [("token_embeddings", "name"), ("[17, 4096]", "mono"), ("[seq, dim]", "sym"),
                         ("bf16", "mono")],
             [("token_embeddings", "name"), ("[17, 4096] bf16", "mono")]),
    "xq": (4, 4, 0.55, [("xq", "name"), ("[17, 32, 128] bf16", "mono"), ("[seq, n_heads, head_dim]", "sym")],
           [("xq", "name"), ("[17, 32, 128]", "mono"), ("bf16", "mono")]),
    "xk": (4, 4, -0.55, [("xk", "name"), ("[17, 8, 128] bf16", "mono"), ("[seq, n_kv_heads, head_dim]", "sym")],
           [("xk", "name"), ("[17, 8, 128]", "mono"), ("bf16", "mono")]),
    "xq_rot": (4, 5, 0.55, [("xq_rotated", "name"), ("[17, 32, 128] bf16", "mono"),
                            ("[seq, n_heads, head_dim]", "sym")],
               [("xq_rotated", "name"), ("[17, 32, 128]", "mono"), ("bf16", "mono")]),
    "xk_rot": (4, 5, -0.55, [("xk_rotated", "name"), ("[17, 8, 128] bf16", "mono"),
                             ("[seq, n_kv_heads, head_dim]", "sym")],
               [("xk_rotated", "name"), ("[17, 8, 128]", "mono"), ("bf16", "mono")]),
    "freqs": (4, 4.5, None, [("freqs_cis", "name"), ("[17, 64] complex64", "mono"),
                              ("[seq, head_dim / 2]", "sym"), (r"$\cos m\theta_i + i \sin m\theta_i$", "note")],
              [("freqs_cis", "name"), ("[17, 64] complex64", "mono")]),
}
INPUT_OF = {2: "tokens", 3: "unnorm", 4: "norm"}  # the box a notebook starts from


def draw_path(highlight=None, compact=False):
    """highlight=None: every notebook in colour, with bands; highlight=k: notebook k only."""
    if compact:
        width, height, ylim, w, freqs_y = 10.0, 2.5, (-2.1, 1.45), 1.7, -1.6
        font = {"name": (7, "bold", MONO), "mono": (7, "normal", MONO), "op": 7, "band": 8}
        heights = {"text": 0.75, "unnorm": 1.0, "freqs": 0.75}
    else:
        width, height, ylim, w, freqs_y = 16.0, 4.7, (-3.05, 1.65), 1.65, -1.85
        font = {"name": (9.5, "bold", MONO), "mono": (9, "normal", MONO), "sym": (7, "normal", "DejaVu Sans"),
                "note": (7.5, "italic", "DejaVu Sans"), "op": 7.5, "band": 10}
        heights = {"text": 1.45, "unnorm": 1.2, "freqs": 0.95}
    fig, ax = canvas(width, height, XLIM, ylim)

    def on(stage):  # is this part drawn in colour?
        return highlight is None or highlight == stage

    # notebook bands: each ends just right of the last box that notebook produces
    edges = [COLS[0] - w / 2 - 0.12] + [COLS[c] + w / 2 + 0.12 for c in (1, 2, 3, 5)]
    for nb, (title, colour) in NOTEBOOKS.items():
        x0, x1 = edges[nb - 1], edges[nb]
        if on(nb):
            ax.add_patch(Rectangle((x0, ylim[0] + (0.55 if not compact else 0.05)), x1 - x0,
                                   ylim[1] - ylim[0] - (0.6 if not compact else 0.1),
                                   facecolor=tint(colour, 0.16), edgecolor="none", zorder=-2))
        label = title if highlight != nb else "▶ " + title
        ax.text((x0 + x1) / 2, ylim[1] - 0.12, label, ha="center", va="top", fontsize=font["band"],
                fontweight="bold" if highlight == nb else "normal", color=BLACK if on(nb) else GREY)

    boxes = {}
    for key, (nb, col, y, full_lines, compact_lines) in NODES.items():
        x = (COLS[math.floor(col)] + COLS[math.ceil(col)]) / 2
        y = freqs_y if y is None else y
        h = heights.get(key, 0.85 if key.startswith("x") else 1.0)
        if compact and key.startswith("x"):
            h = 0.8
        lines = [(text,) + font[kind] for text, kind in (compact_lines if compact else full_lines)]
        w_box = w + 0.3 if key == "freqs" else w  # freqs_cis has room to be wider
        boxes[key] = (x, y, w_box, h)
        colour = NOTEBOOKS[nb][1]
        if on(nb):
            box(ax, x, y, w_box, h, lines, face=tint(colour, 0.35), edge=colour, lw=1.6)
        elif highlight is not None and INPUT_OF.get(highlight) == key:
            box(ax, x, y, w_box, h, lines, face="white", edge=BLACK)
        else:
            box(ax, x, y, w_box, h, lines, face=LIGHT_GREY, edge=GREY, text=GREY)

    def right(key, dy=0.0):
        x, y, w_, _ = boxes[key]
        return (x + w_ / 2, y + dy)

    def left(key, dy=0.0):
        x, y, w_, _ = boxes[key]
        return (x - w_ / 2, y + dy)

    def op(nb, start, end, text, above=True):
        colour = BLACK if on(nb) else GREY
        arrow(ax, start, end, colour)
        xm, ym = (start[0] + end[0]) / 2, start[1]
        ax.annotate(text, (xm, ym), xytext=(0, 4 if above else -4), textcoords="offset points",
                    ha="center", va="bottom" if above else "top", fontsize=font["op"], family=MONO,
                    color=colour, linespacing=1.15)

    full = not compact
    op(1, right("text"), left("tokens"), "tiktoken\nBPE" if full else "BPE")
    op(2, right("tokens"), left("unnorm"), "tok_embeddings\n.weight\n[tokens]" if full else "lookup")
    op(3, right("unnorm"), left("norm"),
       "RMSNorm with\nlayers.0.\nattention_norm\n.weight" if full else "RMSNorm")
    op(4, right("norm", 0.3), left("xq", 0.3 - 0.55), "@ wq.T\n+ reshape" if full else "@ wq.T")
    op(4, right("norm", -0.3), left("xk", 0.55 - 0.3), "@ wk.T\n+ reshape" if full else "@ wk.T", above=False)
    c4 = BLACK if on(4) else GREY
    arrow(ax, right("xq"), left("xq_rot"), c4)
    arrow(ax, right("xk"), left("xk_rot"), c4)
    # freqs_cis feeds both rotations: a line up from its box with a dot where it meets each arrow
    fx, fy, _, fh = boxes["freqs"]
    ax.plot([fx, fx], [fy + fh / 2, 0.55], color=c4, lw=1.3, zorder=1)
    ax.plot([fx, fx], [0.55, -0.55], "o", color=c4, ms=4.5, zorder=2)
    ax.text(fx + 0.1, 0.0, "RoPE:\nmultiply by\nfreqs_cis" if full else "× freqs_cis", ha="left",
            va="center", fontsize=font["op"], family=MONO, color=c4, linespacing=1.15)
    if full:
        ax.text(XLIM[0] + 0.2, ylim[0] + 0.25,
                "wq = layers.0.attention.wq.weight [4096, 4096];  wk = layers.0.attention.wk.weight "
                "[1024, 4096];  dim = 4096, n_heads = 32, n_kv_heads = 8, head_dim = 128;  "
                r"seq = 17 tokens;  $m$ = position,  $\theta_i = 500000^{-2i/128},\ i = 0 \ldots 63$",
                ha="left", va="bottom", fontsize=8, color=BLACK)
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
    save(draw_path(), "path_overview.png")
    for nb in NOTEBOOKS:
        save(draw_path(highlight=nb, compact=True), f"you_are_here_{nb:02d}.png")
    save(draw_rope_pairs(), "rope_pairs.png")
    save(draw_rmsnorm_axes(), "rmsnorm_axes.png")


if __name__ == "__main__":
    main()
