"""Figure helpers for notebook 02 (embedding lookup): layout and colours only.

Nothing here is part of what the notebook teaches: the notebook computes every tensor and these
functions only draw them. :func:`draw_one_hot_product` and :func:`draw_shared_rows` draw things that
do not depend on the weights (a constructed example, the token ids); :func:`draw_rows_heatmap` draws
weight values and is used in a deep dive only.
"""

from __future__ import annotations

from collections.abc import Sequence

from .figure_style import LIGHT_GREY, OKABE_ITO, styled

COLOURS = OKABE_ITO[1:]  # black left out: it is the text colour


def _colours_by_id(token_ids: Sequence[int], only_repeated: bool = False) -> dict[int, str]:
    """One colour per distinct id, in order of first occurrence (only ids that occur twice or more if asked)."""
    counts: dict[int, int] = {}
    for t in token_ids:
        counts[t] = counts.get(t, 0) + 1
    chosen = [t for t in counts if counts[t] > 1] if only_repeated else list(counts)
    return {t: COLOURS[k % len(COLOURS)] for k, t in enumerate(chosen)}


def _grid(ax, x0: float, values, fills: Sequence[Sequence[str | None]], fmt: str = "{:g}") -> None:
    """Draw a matrix as a grid of unit cells with its values written in; row r is at y = -r."""
    from matplotlib.patches import Rectangle

    n_rows, n_cols = len(values), len(values[0])
    for r in range(n_rows):
        for c in range(n_cols):
            fill = fills[r][c]
            ax.add_patch(
                Rectangle((x0 + c, -r - 1), 1, 1, facecolor=fill or "white", edgecolor="#666666", linewidth=0.6, alpha=0.8 if fill else 1.0)
            )
            ax.text(x0 + c + 0.5, -r - 0.5, fmt.format(values[r][c]), ha="center", va="center", fontsize=8)


@styled
def draw_one_hot_product(one_hot, table, product, token_ids):
    """Draw ``one_hot @ table = product`` for a small constructed example; return the figure.

    Args:
        one_hot: [T, V] matrix of 0 and 1, one 1 per row (at the row's id).
        table: [V, d] table.
        product: [T, d], the product ``one_hot @ table``.
        token_ids: the T ids; each distinct id gets one colour, used for its 1 in ``one_hot``, its row
            of ``table`` and the rows of ``product`` that copy it.
    """
    import matplotlib.pyplot as plt

    ids = [int(t) for t in token_ids]
    colour = _colours_by_id(ids)
    n_tokens, vocab = len(one_hot), len(table)
    dim = len(table[0])
    o_fill = [[colour[ids[m]] if int(one_hot[m][j]) == 1 else None for j in range(vocab)] for m in range(n_tokens)]
    e_fill = [[colour.get(j) for _ in range(dim)] for j in range(vocab)]
    x_fill = [[colour[ids[m]] for _ in range(dim)] for m in range(n_tokens)]
    x_o, x_e = 0.0, vocab + 1.6
    x_x = x_e + dim + 1.6
    fig, ax = plt.subplots(figsize=(10, 0.9 + 0.42 * max(vocab, n_tokens)))
    _grid(ax, x_o, one_hot.tolist(), o_fill, "{:.0f}")
    _grid(ax, x_e, table.tolist(), e_fill, "{:.0f}")
    _grid(ax, x_x, product.tolist(), x_fill, "{:.0f}")
    for m in range(n_tokens):
        ax.text(x_o - 0.2, -m - 0.5, f"m={m} (id {ids[m]})", ha="right", va="center", fontsize=8)
    for j in range(vocab):
        ax.text(x_o + j + 0.5, 0.25, str(j), ha="center", va="bottom", fontsize=7, color="#444444")
        ax.text(x_e - 0.15, -j - 0.5, f"id {j}", ha="right", va="center", fontsize=7, color="#444444")
    middle = -min(vocab, n_tokens) / 2
    ax.text(x_e - 1.1, middle, "@", ha="center", va="center", fontsize=16)
    ax.text(x_x - 0.8, middle, "=", ha="center", va="center", fontsize=16)
    for x0, cols, title in [
        (x_o, vocab, f"O: one-hot rows [{n_tokens}, {vocab}]"),
        (x_e, dim, f"E: the table [{vocab}, {dim}]"),
        (x_x, dim, f"O E [{n_tokens}, {dim}] = E[tokens]"),
    ]:
        ax.text(x0 + cols / 2, 1.0, title, ha="center", va="bottom", fontsize=9)
    ax.set_xlim(x_o - 3.2, x_x + dim + 0.2)
    ax.set_ylim(-max(vocab, n_tokens) - 0.3, 1.8)
    ax.set_aspect("equal")
    ax.axis("off")  # a diagram of matrices: cells, not a measured quantity
    ax.set_title("A one-hot matrix times a table copies rows (constructed example, not Llama weights)", fontsize=10)
    return fig


@styled
def draw_shared_rows(token_ids: Sequence[int], pieces: Sequence[str], max_shown: int = 32):
    """Draw which table row each position reads: positions on the left, distinct ids on the right.

    Ids that occur more than once are coloured (one colour each, thick lines); the others are grey.
    Only the first ``max_shown`` positions are drawn. Depends on the ids only, never on weights.
    """
    import matplotlib.pyplot as plt

    ids = [int(t) for t in token_ids[:max_shown]]
    colour = _colours_by_id(ids, only_repeated=True)
    distinct = list(dict.fromkeys(ids))  # ids in order of first occurrence
    n, u = len(ids), len(distinct)
    scale = (n - 1) / (u - 1) if u > 1 else 0.0  # spread the rows over the same height
    row_y = {t: -k * scale for k, t in enumerate(distinct)}
    first_piece: dict[int, str] = {}
    for t, piece in zip(ids, pieces):
        first_piece.setdefault(t, piece)

    def short(text: str) -> str:
        text = ascii(text)
        return text if len(text) <= 18 else text[:15] + "..."

    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.3 * max(n, 2)))
    for m, t in enumerate(ids):
        c = colour.get(t, LIGHT_GREY)
        ax.plot([0.05, 0.95], [-m, row_y[t]], color=c, lw=2.2 if t in colour else 1.0, zorder=1)
        ax.text(0.0, -m, f"m={m}: {short(pieces[m])}", ha="right", va="center", fontsize=8)
    for t in distinct:
        ax.text(
            1.0,
            row_y[t],
            f"row {t} {short(first_piece[t])}",
            ha="left",
            va="center",
            fontsize=8,
            color="black" if t in colour else "#555555",
            fontweight="bold" if t in colour else "normal",
        )
    ax.text(0.0, 1.0, "positions (tokens)", ha="right", va="bottom", fontsize=9)
    ax.text(1.0, 1.0, "rows of tok_embeddings.weight", ha="left", va="bottom", fontsize=9)
    shown = f"first {n} of {len(token_ids)} positions" if n < len(token_ids) else f"{n} positions, {u} distinct ids"
    ax.set_title(f"Which table row each position reads ({shown})\ncoloured: ids that occur more than once", fontsize=10)
    ax.set_xlim(-0.9, 1.9)
    ax.set_ylim(-max(n - 1, 1) - 0.7, 1.6)
    ax.axis("off")  # a diagram: positions and row labels, not a measured quantity
    return fig


@styled
def draw_rows_heatmap(block, labels: Sequence[str], total_dims: int, title: str):
    """Heatmap of rows (positions) by dimensions, with a diverging colour map centred on 0.

    Args:
        block: [rows, dims] float tensor or array, the values to draw.
        labels: one label per row.
        total_dims: how many dimensions the full rows have (for the axis label).
        title: the figure's title (it must say "synthetic stand-in" when the values are the stand-in's).
    """
    import matplotlib.pyplot as plt

    limit = float(abs(block).max()) or 1.0  # symmetric colour scale around 0
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.25 * len(labels)))
    image = ax.imshow(block, cmap="PuOr", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlabel(f"dimension (first {block.shape[1]} of {total_dims})")
    ax.set_ylabel("position: token")
    fig.colorbar(image, ax=ax, label="value (no unit)")
    ax.set_title(title, fontsize=10)
    return fig
