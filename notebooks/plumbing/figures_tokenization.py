"""Figure helpers for notebook 01 (tokenization): layout and colours only.

Nothing here is part of what the notebook teaches. The notebook computes the token ids and their
bytes; :func:`draw_tokens` only places them on a page: one coloured span per token over the text,
with the token's id below it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .figure_style import MONO_FONT, ORANGE, PURPLE, SKY_BLUE, styled


def drawable_code_points() -> set[int]:
    """Unicode code points that :data:`MONO_FONT` can draw (others are written as escapes)."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return set(FT2Font(font_manager.findfont(MONO_FONT)).get_charmap())


def token_label(token_bytes: bytes, drawable: set[int], max_label: int = 18) -> str:
    """Readable text of one token for the figure.

    A space is drawn as ``·``, a line break as ``↵``, a tab as ``⇥``. Bytes that are only part of a
    UTF-8 character, and characters the font cannot draw (for example Chinese), are written as
    escapes such as ``\\xe9`` or ``\\u4f60``. Labels longer than ``max_label`` characters are cut
    with ``…``.
    """
    text = token_bytes.decode("utf-8", errors="backslashreplace")
    text = text.replace(" ", "·").replace("\n", "↵").replace("\t", "⇥")
    text = "".join(c if c.isprintable() and ord(c) in drawable else c.encode("unicode_escape").decode("ascii") for c in text)
    return text if len(text) <= max_label else text[: max_label - 1] + "…"


def layout_spans(
    labels: Sequence[str], token_ids: Sequence[int], cells_per_line: int = 80, max_lines: int = 5
) -> list[tuple[int, int, int, str, int]]:
    """Place tokens on lines of monospace character cells.

    Returns one ``(line, first cell, width in cells, label, id)`` per token that fits on
    ``max_lines`` lines; a span is wide enough for its label and its id, plus one cell of gap.
    """
    spans, line, x = [], 0, 0
    for label, token_id in zip(labels, token_ids):
        width = max(len(label), len(str(token_id))) + 1
        if x + width > cells_per_line:
            line, x = line + 1, 0
        if line == max_lines:
            break
        spans.append((line, x, width, label, token_id))
        x += width
    return spans


@styled
def draw_tokens(
    token_ids: Sequence[int], token_bytes: Sequence[bytes], special_ids, max_shown: int = 64, cells_per_line: int = 80, max_lines: int = 5
):
    """Draw tokens as coloured spans over their text, each with its id below; return the figure.

    Args:
        token_ids: the ids, in order.
        token_bytes: the bytes of each id (at least the first ``max_shown``).
        special_ids: the ids of the special tokens (drawn in purple); ordinary
            tokens alternate orange and blue so that neighbours can be told apart.
        max_shown: at most this many tokens are drawn (and at most ``max_lines`` lines).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    drawable = drawable_code_points()
    shown_ids = list(token_ids[:max_shown])
    labels = [token_label(b, drawable) for b in token_bytes[: len(shown_ids)]]
    spans = layout_spans(labels, shown_ids, cells_per_line, max_lines)
    n_lines = spans[-1][0] + 1
    fig, ax = plt.subplots(figsize=(11, 0.8 + 0.7 * n_lines))  # 0.7 inch per line of text
    for k, (line, x, width, label, token_id) in enumerate(spans):
        colour = PURPLE if token_id in special_ids else (ORANGE, SKY_BLUE)[k % 2]
        top = -2.6 * line
        ax.add_patch(Rectangle((x, top - 1), width - 0.2, 1, facecolor=colour, alpha=0.55, linewidth=0))
        ax.text(x + (width - 0.2) / 2, top - 0.5, label, ha="center", va="center", fontsize=12, family=MONO_FONT, parse_math=False)
        ax.text(x + (width - 0.2) / 2, top - 1.5, str(token_id), ha="center", va="center", fontsize=9, color="#333333")
    n = len(token_ids)
    shown = f"first {len(spans)} of {n} tokens shown" if len(spans) < n else f"{n} token{'s' * (n > 1)}"
    ax.set_title(f"The prompt as tokens: each coloured span is one token, its id below ({shown})")
    ax.set_xlim(0, cells_per_line)
    ax.set_ylim(-2.6 * n_lines + 0.6, 0.1)
    ax.axis("off")  # a text diagram: positions are character cells, not a measured quantity
    return fig
