"""Figure layout for notebook 05 (attention): axes, colours, labels. It teaches nothing.

Every number drawn here is computed in the notebook and passed in; these functions only draw it.
Colours are the Okabe-Ito palette (readable with the common forms of colour blindness). Token texts are
shown with ``ascii()`` escapes, so that no font needs glyphs for every script.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap
import torch

from .figure_style import styled

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
        mask: [seqlen, seqlen] tensor of 0 and -inf (any float dtype), or None (Meta's mask for a single
            token: nothing masked).
        pieces: the text of each token, for the axes.

    Returns the ``Figure``; the notebook shows it with ``plt.show()``.
    """
    if mask is None:
        mask = torch.zeros(1, 1)
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
    ax.set_title(
        f"The causal mask for this prompt ({seqlen} token{'s' if seqlen != 1 else ''}):\n−∞ above the diagonal (n > m), 0 on and below it",
        fontsize=10,
    )
    return fig


@styled
def real_heads_figure(weights, found: dict, pieces, model: str):
    """Heatmaps of a few heads of a trained model, side by side; exact zeros above the diagonal in grey.

    Args:
        weights: [n_layers, n_heads, seqlen, seqlen] attention weights.
        found: title -> (layer, head), the heads to draw.
        pieces: the text of each token, for the axes (labelled up to 40 tokens).
        model: which model, for the title.

    Returns the ``Figure``; the notebook shows it with ``plt.show()``.
    """
    import torch

    seqlen = weights.shape[-1]
    fig, axes = plt.subplots(1, len(found), figsize=(6.4 * len(found), 6.4), layout="constrained")
    cmap = matplotlib.colormaps["cividis"].with_extremes(bad="0.85")
    above = torch.ones(seqlen, seqlen, dtype=torch.bool).triu(1)
    for ax, (title, (layer, head)) in zip(axes, found.items()):
        shown = torch.where(above, torch.nan, weights[layer, head].float())  # NaN cells: the "bad" colour
        image = ax.imshow(shown, cmap=cmap, vmin=0, vmax=1)
        if seqlen <= 40:
            labels = [ascii(piece)[1:-1] for piece in pieces]
            ax.set_xticks(range(seqlen), labels, rotation=90, fontsize=7)
            ax.set_yticks(range(seqlen), labels, fontsize=7)
        ax.set(
            xlabel="key position n (the token looked at)",
            ylabel="query position m (the token looking)",
            title=f"{title}: layer {layer}, head {head}",
        )
    fig.colorbar(image, ax=axes, shrink=0.7, label="attention weight (grey: masked, exactly 0)")
    fig.suptitle(f"Two heads of {model}, found by a rule")
    return fig
