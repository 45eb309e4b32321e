"""Figure layout for notebook 03 (RMSNorm): axes, colours, labels. It teaches nothing.

Every number drawn here is computed in the notebook and passed in; these functions only draw it.
Colours are the Okabe-Ito palette (readable with the common forms of colour blindness).
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from .figure_style import BLUE, GREEN, GREY, VERMILION, styled


@styled
def normalisation_figure(before, divided, after_gain, gain, mean_squares, rms_after, eps):
    """Draw what RMSNorm does, on constructed inputs only (no weights).

    Left panel: vectors of d = 2 numbers before RMSNorm, after dividing by their RMS (on the circle of
    radius sqrt(2), where the RMS is 1) and after the gain (an ellipse with half-axes sqrt(2) * gain).
    Right panel: the RMS after dividing, sqrt(m / (m + eps)), against the mean square m (log scale).

    Args:
        before, divided, after_gain: [k, 2] tensors, the same k vectors at the three stages.
        gain: [2] tensor, the gain used for ``after_gain``.
        mean_squares: [p] tensor of mean squares m; rms_after: [p] tensor, the RMS after dividing at each m.
        eps: the epsilon used (``norm_eps``).

    Returns the ``Figure``; the notebook shows it with ``plt.show()``.
    """
    import math

    import torch

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(12, 5.4), layout="constrained")
    circle = torch.linspace(0, 2 * math.pi, 200)
    radius = math.sqrt(2)  # a vector of 2 numbers with RMS 1 has length sqrt(2)
    ax0.plot(radius * circle.cos(), radius * circle.sin(), color=GREY, lw=1, ls="--")
    ax0.plot(radius * gain[0] * circle.cos(), radius * gain[1] * circle.sin(), color=GREY, lw=1, ls=":")
    for start, end in zip(before, divided):
        ax0.plot([start[0], end[0]], [start[1], end[1]], color="0.85", lw=0.8, zorder=1)
    ax0.scatter(before[:, 0], before[:, 1], color=BLUE, s=22, zorder=3, label="before: any length")
    ax0.scatter(divided[:, 0], divided[:, 1], color=GREEN, s=22, zorder=3, label="divided by its RMS: RMS 1")
    ax0.scatter(
        after_gain[:, 0],
        after_gain[:, 1],
        color=VERMILION,
        marker="x",
        s=26,
        zorder=3,
        label=f"times the gain g = ({gain[0].item():g}, {gain[1].item():g})",
    )
    lim = 1.1 * float(max(before.abs().max(), divided.abs().max(), after_gain.abs().max()))
    ax0.set(
        aspect="equal",
        xlim=(-lim, lim),
        ylim=(-lim, lim),
        xlabel="first number",
        ylabel="second number",
        title="Constructed vectors of 2 numbers: the direction stays,\nthe length is set by the RMS, then by g",
    )
    ax0.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)

    ax1.plot(mean_squares, rms_after, color=BLUE, lw=2, label="sqrt(m / (m + eps))")
    ax1.axvline(eps, color=VERMILION, ls="--", lw=1, label=f"m = eps = {eps:g}")
    ax1.axhline(1.0, color="black", lw=0.8, ls=":", label="1")
    ax1.set(
        xscale="log",
        ylim=(0, 1.08),
        xlabel="mean square m of a token (before dividing)",
        ylabel="RMS after dividing",
        title="The RMS after dividing is sqrt(m / (m + eps)):\nabout 1 when m is far above eps",
    )
    ax1.legend(loc="upper left", fontsize=8)
    return fig
