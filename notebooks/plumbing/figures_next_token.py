"""Figure helpers for notebook 07 (all layers to the next token): layout and colours only.

The notebook computes every number it shows (the RMS of the residual stream per layer and position);
these functions only draw what they are given, so they teach nothing and hold no formula.
"""

from __future__ import annotations

from .figure_style import OKABE_ITO, styled


@styled
def residual_rms(rms, pieces, title: str):
    """One line per position: the RMS of its row of the residual stream before layer 0 and after each layer.

    Args:
        rms: [n_layers + 1, seqlen] tensor; row 0 is the embedding rows, row l + 1 the stream after layer l.
        pieces: the seqlen token texts, for the legend (the first and the last position are labelled).
        title: the figure's title (it must say "synthetic stand-in" when the weights are the stand-in).

    Returns:
        The matplotlib figure (the caller shows it).
    """
    import matplotlib.pyplot as plt

    values = rms.detach().float()
    n_points, seqlen = values.shape
    fig, ax = plt.subplots(figsize=(11, 4.4), layout="constrained")
    cmap = plt.get_cmap("cividis")
    for m in range(seqlen):
        first, last = m == 0, m == seqlen - 1
        colour = OKABE_ITO[6] if last else OKABE_ITO[5] if first else cmap(0.25 + 0.5 * m / max(seqlen - 1, 1))
        label = f"position {m}: {pieces[m]!r}" if first or last else None
        ax.plot(
            range(n_points),
            values[:, m],
            color=colour,
            lw=2.2 if first or last else 0.9,
            alpha=1.0 if first or last else 0.6,
            label=label,
            zorder=3 if first or last else 2,
        )
    ax.set_yscale("log")
    ax.set_xlim(0, n_points - 1)
    ticks = sorted(set(range(0, n_points, max(1, (n_points - 1) // 8))) | {n_points - 1})
    ax.set_xticks(ticks, ["emb." if t == 0 else str(t - 1) for t in ticks])
    ax.set_xlabel("after layer (emb.: the embedding rows, before layer 0)")
    ax.set_ylabel("RMS of the row (log scale)")
    ax.set_title(title)
    if any(line.get_label() and not str(line.get_label()).startswith("_") for line in ax.get_lines()):
        ax.legend(loc="upper left", fontsize=9)
    ax.grid(True, which="major", color="0.9")
    return fig


@styled
def logit_lens_figure(ranks, token: str, title: str):
    """The rank of one token among the vocabulary when the stream is read after each layer (1 = the top token).

    Args:
        ranks: [n_layers + 1] ranks; entry 0 reads the embedding rows, entry l + 1 the stream after layer l.
        token: the token's text, for the labels; title: which model and prompt.

    Returns:
        The matplotlib figure (the caller shows it).
    """
    import matplotlib.pyplot as plt

    from .figure_style import BLUE

    values = [int(r) for r in ranks]
    fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
    ax.plot(range(len(values)), values, marker="o", ms=4, color=BLUE)
    ax.set(yscale="log", xlabel="layers run (0: the embedding rows alone)", ylabel=f"rank of {token!r} (1 = the top token)", title=title)
    ax.set_yticks([1, 10, 100, 1000, 10000], ["1", "10", "100", "1,000", "10,000"])
    ax.invert_yaxis()
    return fig
