"""The two figures of single ideas: RoPE's pairing of dimensions in Meta's layout, and one pair rotated
(rope_pairs.png) and the axis RMSNorm normalises over (rmsnorm_axes.png)."""

import math

from matplotlib.patches import Rectangle

from . import layout
from .language import tr
from .layout import BLACK, BLUE, GREEN, GREY, ORANGE, PURPLE, SKY, YELLOW, tint, weight
from .shapes import arrow, canvas

# ---------------------------------------------------------------- RoPE pairing, Meta's layout
PAIR_COLOUR = {0: ORANGE, 1: SKY, 2: GREEN, 3: BLUE, 63: PURPLE}  # pair i -> colour


def draw_rope_pairs():
    fig, ax = canvas(12.5, 4.0, (0, 12.5), (0, 4.0))
    cell = 0.42

    def row(y, dims, pair_of):
        """Cells for some of one head's 128 dims (None = '…'), labelled with their pair. Returns x of each dim."""
        xs, x = {}, 0.5
        for d in dims:
            if d is None:
                ax.text(x + 0.1, y + cell / 2, "…", ha="center", va="center", fontsize=12)
                x += 0.2 + 0.06
                continue
            ax.add_patch(Rectangle((x, y), cell, cell, facecolor=tint(PAIR_COLOUR[pair_of(d)], 0.55), edgecolor=BLACK, lw=0.8))
            ax.text(x + cell / 2, y + cell / 2, str(d), ha="center", va="center", fontsize=8.5, family=layout.MONO)
            xs[d] = x + cell / 2
            x += cell + 0.06
        return xs

    # Meta: interleaved, pair i = dims (2i, 2i+1)
    heading = tr("Meta layout (apply_rotary_emb in llama_models/llama3/model.py): adjacent dimensions form a pair")
    ax.text(0.5, 3.8, heading, fontsize=11, fontweight=weight(heading, "bold"), va="top")
    ax.text(
        0.5,
        3.45,
        "view_as_complex(x.reshape(..., 64, 2)):  " + tr("pair i = dims (2i, 2i+1)  →  complex number ") + "x[2i] + i·x[2i+1]",
        fontsize=9.5,
        va="top",
        family=layout.MONO,
    )
    xs = row(2.45, [0, 1, 2, 3, 4, 5, 6, 7, None, 126, 127], lambda d: d // 2)
    for i in PAIR_COLOUR:
        x0, x1, y = xs[2 * i] - cell / 2, xs[2 * i + 1] + cell / 2, 2.38
        ax.plot([x0, x0, x1, x1], [y, y - 0.1, y - 0.1, y], color=PAIR_COLOUR[i], lw=1.6)
        ax.text((x0 + x1) / 2, y - 0.17, tr("pair {i}\nangle $m\\theta_{{{i}}}$").format(i=i), ha="center", va="top", fontsize=8.5)

    # one pair, rotated in its own plane
    cx, cy, r = 10.55, 2.45, 1.0
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
    ax.text(cx + 0.5 * math.cos(a0 + turn / 2) + 0.05, cy + 0.5 * math.sin(a0 + turn / 2), r"$m\theta_i$", fontsize=10, va="bottom")
    ax.text(p[0] + 0.05, p[1] - 0.05, "(a, b)", fontsize=9, va="top")
    ax.text(cx + 1.35, cy, "a", fontsize=9, color=GREY, va="center")
    ax.text(cx + 0.07, cy + 1.25, "b", fontsize=9, color=GREY, va="center")
    ax.text(
        cx + 0.2,
        cy - 0.5,
        tr("pair i at position m, as a complex number:") + "\n"
        "a, b = x[2i], x[2i+1]\n"
        r"$(a + ib)\cdot$ freqs_cis[m, i]"
        "\n"
        r"$= (a + ib)(\cos m\theta_i + i \sin m\theta_i)$"
        "\n"
        r"$\theta_i = 500000^{-2i/128},\ i = 0 \ldots 63$"
        "\n"
        rf"$\theta_0 = 1,\ \theta_{{63}} \approx {theta_63 / 10**exponent:.1f} \times 10^{{{exponent}}}$",
        fontsize=9,
        va="top",
        ha="center",
        linespacing=1.6,
    )
    ax.text(
        0.5,
        0.55,
        tr(
            "Every position m uses the same 64 frequencies θ_i; the angle m·θ_i grows with the position.\n"
            "A query at position m turns its pair i by mθ_i, a key at position n by nθ_i; position 0 is not rotated."
        ),
        fontsize=9,
        va="center",
    )
    return fig


# ---------------------------------------------------------------- RMSNorm: which axis
def draw_rmsnorm_axes():
    fig, ax = canvas(12.6, 4.1, (0, 12.6), (0.3, 4.4))
    cols, cw, ch = 9, 0.42, 0.34
    rows = [0, 1, 2, None, 15, 16]  # the tokens shown; None = '⋮'
    row_colours = [ORANGE, SKY, GREEN, None, BLUE, PURPLE]
    y_top = 3.45

    def matrix(x0, per_row):
        for r, name in enumerate(rows):
            y = y_top - (r + 1) * ch
            if name is None:
                ax.text(x0 + 3.5 * cw, y + ch / 2, "⋮", ha="center", va="center", fontsize=10)
                continue
            ax.text(x0 - 0.1, y + ch / 2, tr("token {n}").format(n=name), ha="right", va="center", fontsize=8.5)
            for c in range(cols):
                if c == cols - 2:  # a column of '…' for the hidden dims
                    ax.text(x0 + (c + 0.5) * cw, y + ch / 2, "…", ha="center", va="center", fontsize=9)
                    continue
                colour = row_colours[r] if per_row else YELLOW
                ax.add_patch(Rectangle((x0 + c * cw, y), cw, ch, facecolor=tint(colour, 0.5), edgecolor="white", lw=1.0))
        arrow(ax, (x0, y_top + 0.12), (x0 + cols * cw, y_top + 0.12), BLACK, 1.0)
        ax.text(x0 + cols * cw / 2, y_top + 0.2, tr("4096 values per token (last axis, dim=-1)"), ha="center", va="bottom", fontsize=8.5)

    # left: RMSNorm, one statistic per row
    heading = tr("RMSNorm (Llama): each token normalised over its own 4096 values")
    ax.text(0.3, 4.25, heading, fontsize=11, fontweight=weight(heading, "bold"), va="top")
    x0 = 1.1
    matrix(x0, per_row=True)
    for r, name in enumerate(rows):
        y = y_top - (r + 0.5) * ch
        if name is not None:
            arrow(ax, (x0 + cols * cw + 0.08, y), (x0 + cols * cw + 0.48, y), row_colours[r], 1.1)
            ax.text(x0 + cols * cw + 0.55, y, f"rms[{name}]", ha="left", va="center", fontsize=8.5, family=layout.MONO)
        else:
            ax.text(x0 + cols * cw + 0.8, y, "⋮", ha="center", va="center", fontsize=10)
    ax.text(
        0.3,
        1.15,
        "rms = sqrt(mean(x², dim=-1, keepdim=True) + norm_eps)  → [17, 1]\n"
        "out = x / rms * attention_norm.weight           → [17, 4096]\n"
        + tr("norm_eps = 1e-5; a token's result does not depend on other tokens"),
        fontsize=8.5,
        va="top",
        family=layout.MONO,
        linespacing=1.5,
    )

    # right: the wrong version, one statistic over everything
    heading = tr("Not RMSNorm: one mean over all 17 × 4096 values")
    ax.text(6.5, 4.25, heading, fontsize=11, fontweight=weight(heading, "bold"), va="top")
    x0, xr = 7.3, 7.3 + cols * cw + 0.12
    matrix(x0, per_row=False)
    ym = y_top - len(rows) * ch / 2
    ax.plot([xr, xr], [y_top, y_top - len(rows) * ch], color=BLACK, lw=1.1)
    arrow(ax, (xr, ym), (xr + 0.4, ym), BLACK, 1.1)
    ax.text(xr + 0.47, ym, tr("s: one\nnumber"), ha="left", va="center", fontsize=8.5)
    ax.text(
        6.5,
        1.15,
        tr("s = sqrt(mean(x²) + norm_eps)  → one scalar")
        + "\n"
        + tr("every token is divided by the same s, so a token's\nresult changes when other tokens in the prompt change"),
        fontsize=8.5,
        va="top",
        family=layout.MONO,
        linespacing=1.5,
    )
    ax.plot([6.25, 6.25], [0.4, 4.25], color=GREY, lw=0.8)
    return fig
