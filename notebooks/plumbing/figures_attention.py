"""Figure layout for notebook 05 (attention): axes, colours, labels. It teaches nothing.

Every number drawn here is computed in the notebook and passed in; these functions only draw it.
Colours are the Okabe-Ito palette (readable with the common forms of colour blindness). Token texts are
shown with ``ascii()`` escapes, so that no font needs glyphs for every script.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap

from .figure_style import BLUE, VERMILION, styled
MAX_LABELLED = 24  # above this many tokens, the axes show positions only


def token_labels(pieces) -> list[str] | None:
    """Tick labels "m 'text'" for each token, or ``None`` when there are too many to read.

    Args:
        pieces: the text of each token (``inputs.pieces``).
    """
    if len(pieces) > MAX_LABELLED:
        return None
    return [f"{m} {ascii(piece)}" for m, piece in enumerate(pieces)]


def _token_axes(ax, pieces):
    """Label both axes of a [seqlen, seqlen] image: query position m down, key position n across."""
    labels = token_labels(pieces)
    if labels is not None:
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set(xlabel="key position n (the token looked at)", ylabel="query position m (the token looking)")


@styled
def mask_figure(mask, pieces):
    """Draw a causal mask: dark where the entry is -inf (masked), white where it is 0.

    Args:
        mask: [seqlen, seqlen] tensor of 0 and -inf (any float dtype).
        pieces: the text of each token, for the axes.

    Returns the ``Figure``; the notebook shows it with ``plt.show()``.
    """
    seqlen = mask.shape[0]
    blocked = mask.float().isinf().float()
    fig, ax = plt.subplots(figsize=(6.6, 6.2), layout="constrained")
    ax.imshow(blocked, cmap=ListedColormap(["white", "0.35"]), vmin=0, vmax=1)
    if seqlen <= MAX_LABELLED:
        for m in range(seqlen):
            for n in range(seqlen):
                text, colour = ("−∞", "white") if blocked[m, n] else ("0", "0.3")
                ax.text(n, m, text, ha="center", va="center", fontsize=6, color=colour)
    _token_axes(ax, pieces)
    ax.set_title(f"The causal mask for this prompt ({seqlen} token{'s' if seqlen != 1 else ''}):\n"
                 "−∞ above the diagonal (n > m), 0 on and below it", fontsize=10)
    return fig


@styled
def weights_figure(weights, pieces, head: int, standin: bool):
    """Draw one head's attention weights [seqlen, seqlen]; exact zeros above the diagonal in grey.

    Args:
        weights: [seqlen, seqlen] tensor (after softmax).
        pieces: the text of each token, for the axes.
        head: the head's index, for the title.
        standin: True on the synthetic stand-in (the title then says so).

    Returns the ``Figure``; the notebook shows it with ``plt.show()``.
    """
    import torch

    w = weights.float()
    seqlen = w.shape[0]
    above = torch.ones(seqlen, seqlen, dtype=torch.bool).triu(1)
    shown = torch.where(above, torch.nan, w)  # NaN cells take the colour map's "bad" colour
    cmap = matplotlib.colormaps["cividis"].with_extremes(bad="0.85")
    fig, ax = plt.subplots(figsize=(7.2, 6.2), layout="constrained")
    image = ax.imshow(shown, cmap=cmap, vmin=0, vmax=max(float(w.max()), 1e-12))
    fig.colorbar(image, ax=ax, shrink=0.8, label="attention weight (grey: exactly 0, masked)")
    _token_axes(ax, pieces)
    source = "SYNTHETIC STAND-IN weights: values say nothing about Llama 3" if standin else "real weights"
    ax.set_title(f"Attention weights of head {head}, layer 0 ({source}).\nMeaningful on any weights: the grey "
                 "zeros above the diagonal; each row sums to 1", fontsize=9)
    return fig


@styled
def uniform_figure(last_row_weights, standin: bool):
    """Draw the last token's weights in every head against the uniform 1/seqlen.

    Args:
        last_row_weights: [n_heads, seqlen] tensor, row seqlen-1 of each head's weights.
        standin: True on the synthetic stand-in (the title then says so).

    Returns the ``Figure``; the notebook shows it with ``plt.show()``.
    """
    w = last_row_weights.float()
    n_heads, seqlen = w.shape
    fig, ax = plt.subplots(figsize=(9, 4.2), layout="constrained")
    for h in range(n_heads):
        ax.plot(range(seqlen), w[h], color=BLUE, alpha=0.25, lw=1, marker="o", ms=2)
    ax.axhline(1 / seqlen, color=VERMILION, ls="--", lw=1.5, label=f"uniform: 1 / seqlen = 1/{seqlen}")
    ax.set(xlabel="key position n", ylabel="weight of the last token on position n", ylim=(0, None))
    source = "synthetic stand-in: random weights" if standin else "real weights"
    ax.set_title(f"The last token's weights in all {n_heads} heads of layer 0 ({source})", fontsize=10)
    ax.legend(loc="lower right")
    return fig
