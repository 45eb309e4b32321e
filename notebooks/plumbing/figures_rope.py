"""Figure layout for notebook 04 (RoPE): axes, colours, labels. It teaches nothing.

Every number drawn here is computed in the notebook and passed in; these functions only draw it.
Colours are the Okabe-Ito palette (readable with the common forms of colour blindness).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from .figure_style import BLACK, BLUE, VERMILION, styled


@styled
def wavelength_figure(wavelengths, context_length: int, seqlen: int):
    """The wavelengths 2*pi/theta_i against the pair index i, on a log scale.

    Args:
        wavelengths: [head_dim/2] tensor (tokens per full turn).
        context_length: the trained context in tokens (a dashed line); seqlen: this prompt's length (dotted).
    """
    fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
    ax.plot(range(len(wavelengths)), wavelengths, "o", ms=3, color=BLUE, label="wavelength 2π/θ_i")
    ax.axhline(context_length, color=VERMILION, ls="--", label=f"context: {context_length:,} tokens")
    ax.axhline(seqlen, color=BLACK, ls=":", label=f"this prompt: {seqlen} tokens")
    ax.set(
        yscale="log",
        xlabel="pair index i",
        ylabel="wavelength (tokens per full turn)",
        title="Slow pairs never complete a turn within the context",
    )
    ax.legend(loc="upper left")
    return fig


@styled
def unit_circle_figure(freqs_cis, freqs, pairs, max_positions: int = 20):
    """One panel per pair in ``pairs``: the points freqs_cis[m, i] on the unit circle, labelled by position m.

    Args:
        freqs_cis: [seqlen, head_dim/2] complex tensor; freqs: [head_dim/2] (for the titles).
        pairs: pair indices to draw; max_positions: label at most this many positions.
    """
    import torch

    fig, axes = plt.subplots(1, len(pairs), figsize=(6 * len(pairs), 5.4), layout="constrained")
    circle = torch.linspace(0, 2 * math.pi, 200)
    shown = min(freqs_cis.shape[0], max_positions)
    for ax, i in zip(axes, pairs):
        z = freqs_cis[:shown, i]
        ax.plot(circle.cos(), circle.sin(), color="0.8", lw=1)
        dots = ax.scatter(z.real, z.imag, c=range(shown), cmap="viridis", s=36, zorder=3)
        for m in range(shown):
            ax.annotate(str(m), (1.13 * z[m].real.item(), 1.13 * z[m].imag.item()), ha="center", va="center", fontsize=8)
        ax.set(
            aspect="equal",
            xlim=(-1.35, 1.35),
            ylim=(-1.35, 1.35),
            xlabel="first number of the pair (real part)",
            ylabel="second number of the pair (imaginary part)",
            title=f"pair {i}: θ_{i} = {freqs[i].item():.3g} rad/token",
        )
    fig.colorbar(dots, ax=axes, shrink=0.7, label="position m (tokens)")
    fig.suptitle("Position m turns pair i by m·θ_i radians: a fast pair goes round, a slow one covers an arc")
    return fig


@styled
def distance_figure(S, distances, curves: dict):
    """Left: the score matrix S[m, n] as an image. Right: score against distance, one curve per label.

    Args:
        S: [span, span] scores of a constructed query at position m and key at position n.
        distances: [k] distances d (tokens); curves: label -> [k] scores of one constructed query and key
            (every pair 1 + i), divided by the score at d = 0. For other queries and keys the score need not
            fall with the distance; RoFormer bounds it only from above.
    """
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
    image = ax1.imshow(S, cmap="cividis")
    fig.colorbar(image, ax=ax1, label="score S[m, n]")
    ax1.set(
        xlabel="key position n (tokens)",
        ylabel="query position m (tokens)",
        title="Constructed q and k: S[m, n] is constant\nalong every diagonal (fixed m − n)",
    )
    for (label, curve), colour in zip(curves.items(), (BLUE, VERMILION, BLACK)):
        ax2.plot(distances, curve, color=colour, lw=1, label=label)
    ax2.set(
        xscale="log",
        xlabel="distance d = m − n (tokens)",
        ylabel="score / score at distance 0",
        title="One constructed query and key, every pair 1 + i:\ntheir score falls with the distance",
    )
    ax2.legend(loc="lower left", fontsize=9)
    return fig


@styled
def scaling_figure(wavelengths: dict, bands: tuple):
    """Wavelengths against the pair index, one series per label, with the two band edges of apply_scaling.

    Args:
        wavelengths: label -> [head_dim/2] wavelengths (tokens per full turn).
        bands: (high_freq_wavelen, low_freq_wavelen) in tokens, e.g. (2048, 8192).
    """
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    for (label, w), (marker, colour) in zip(wavelengths.items(), (("o", BLACK), ("s", BLUE), ("^", VERMILION))):
        ax.plot(range(len(w)), w, marker, ms=3, mfc="none" if marker != "o" else colour, color=colour, ls="none", label=label)
    high, low = bands
    for y, text in ((high, f"{high:g} tokens: below, unchanged"), (low, f"{low:g} tokens: above, divided by the factor")):
        ax.axhline(y, color="0.6", ls="--", lw=1)
        ax.text(0, y * 1.25, text, fontsize=8, color="0.3")
    ax.set(
        yscale="log",
        xlabel="pair index i",
        ylabel="wavelength 2π/θ_i (tokens)",
        title=f"apply_scaling changes only the pairs whose wavelength exceeds {high:g} tokens",
    )
    ax.legend(loc="lower right")
    return fig


@styled
def head_by_distance_figure(by_distance: dict, title: str):
    """A real head's mean score against the distance m - n, one curve per label (with and without RoPE).

    Args:
        by_distance: label -> [k] mean scores at distances 0 ... k - 1 (tokens).
        title: which model, layer and head.
    """
    fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
    for (label, curve), (colour, marker) in zip(by_distance.items(), ((BLUE, "o"), (VERMILION, "s"))):
        ax.plot(range(len(curve)), curve, marker=marker, ms=4, color=colour, label=label)
    ax.axvline(1, color="0.8", lw=6, zorder=0)
    ax.set(
        xlabel="distance m − n (tokens; 1 = the previous token)",
        ylabel="mean score q_m · k_n / √head_dim",
        xticks=range(0, len(curve), 2),
        title=title,
    )
    ax.legend(loc="lower left")
    return fig
