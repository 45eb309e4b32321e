"""Figure helpers for notebook 06 (feed-forward): layout and colours only.

The notebook computes every curve and grid itself (SiLU, ReLU, the gated product); these
functions only draw what they are given, so they teach nothing and hold no formula.
"""

from __future__ import annotations

from .figure_style import OKABE_ITO, styled


@styled
def activations(x, curves: dict, minimum: tuple[float, float] | None = None):
    """Two panels: the activation curves over ``x``, and a close-up of the region around 0.

    Args:
        x: 1-D tensor of inputs.
        curves: label -> 1-D tensor of the same length as ``x`` (at most 7 curves), drawn in order.
        minimum: optional (x, y) of a point to mark and label on both panels (SiLU's minimum).

    Returns:
        The matplotlib figure (the caller shows it).
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.3), layout="constrained")
    styles = ["-", "--", ":", "-.", "-", "--", ":"]
    for ax, (lo, hi) in zip(axes, ((float(x.min()), float(x.max())), (-4.0, 2.0))):
        for k, (label, y) in enumerate(curves.items()):
            ax.plot(x, y, styles[k], color=OKABE_ITO[[5, 6, 3, 7, 1, 2, 0][k]], lw=2, label=label)
        if minimum is not None:
            ax.plot(*minimum, "o", color=OKABE_ITO[0], ms=5)
        ax.axhline(0, color="0.6", lw=0.8)
        ax.axvline(0, color="0.6", lw=0.8)
        ax.set_xlim(lo, hi)
        ax.set_xlabel("input x")
    axes[0].set(ylabel="output", title="SiLU follows ReLU far from 0")
    axes[1].set(ylim=(-0.5, 2.0), title="Close to 0: smooth, and slightly negative below 0")
    if minimum is not None:
        axes[1].annotate(f"minimum ({minimum[0]:.3f}, {minimum[1]:.3f})", minimum, xytext=(8, -16), textcoords="offset points", fontsize=9)
    axes[0].legend(loc="upper left")
    return fig


@styled
def gate_effect(g, u, product, slopes: dict):
    """Two panels: the gated product SiLU(g) * u as an image over (g, u), and lines of it for fixed g.

    Args:
        g: 1-D tensor of gate values (x axis of the image).
        u: 1-D tensor of up values (y axis of the image).
        product: [len(u), len(g)] tensor, product[i, j] = SiLU(g[j]) * u[i].
        slopes: fixed gate value -> SiLU of it (a float or 0-D tensor); each is drawn as the line slope * u.

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6), layout="constrained")
    limit = float(product.abs().max())
    image = ax1.imshow(
        product,
        origin="lower",
        cmap="PuOr_r",
        vmin=-limit,
        vmax=limit,
        aspect="auto",
        extent=(float(g[0]), float(g[-1]), float(u[0]), float(u[-1])),
    )
    ax1.contour(g, u, product, levels=[-4, -2, -1, -0.25, 0.25, 1, 2, 4], colors="0.25", linewidths=0.6)
    fig.colorbar(image, ax=ax1, label="SiLU(gate) × up")
    ax1.set(
        xlabel="gate (a number of ffn_input @ w1.T)",
        ylabel="up (the same position of ffn_input @ w3.T)",
        title="Negative gate: a small negative factor, going to 0; positive gate: up passes, scaled",
    )
    for k, (gate, slope) in enumerate(slopes.items()):
        slope = float(slope)
        ax2.plot(u, slope * u, color=OKABE_ITO[[6, 1, 3, 5, 7][k % 5]], lw=2, label=f"gate = {gate:g} (slope {slope:.2f})")
    ax2.axhline(0, color="0.6", lw=0.8)
    ax2.axvline(0, color="0.6", lw=0.8)
    ax2.set(xlabel="up", ylabel="output", title="For a fixed gate, the output is up times SiLU(gate)")
    ax2.legend(loc="upper left", fontsize=9)
    return fig
