"""Which cell goes on which slide: a notebook and its rows of tools/slides_cuts.toml made into the deck's notebook.

The table's fields are described in docs/instructor.md (Slides). Everything here is pure except :func:`load_cuts`.

Raises:
    SlidesError: the table is unreadable, or a slide names a cell that is missing or may not be shown.
"""

from __future__ import annotations

import copy
import html
import io
import re
import textwrap
import tokenize
import tomllib
import unicodedata
from pathlib import Path

import nbformat

from tools.site_stage import SiteError

__all__ = [
    "SlidesError",
    "CUTS",
    "slideshow",
    "sections_table",
    "load_cuts",
    "left_out",
    "is_check",
    "table_code",
    "code_lines",
    "cut_outputs",
    "deep_dives_start",
]

CUTS = Path(__file__).resolve().parent / "slides_cuts.toml"
LANGUAGES = ("en", "zh_CN")  # the order of a slide's [English, Chinese] texts in the table
SKIPPED_IDS = {"colab-link", "colab-setup"}
SOLUTION = "solution"
HIDE_INPUT = "slides-output-only"  # a tag: the slide shows the cell's output (a figure) without its code
DEEP_DIVES = re.compile(r"^##\s+(?:.*·\s*)?Deep dives\s*$")  # "## Deep dives", "## 深入探讨 · Deep dives"
CHECK = re.compile(r"(?:\bplumbing\.|(?<![\w.]))check\(")  # plumbing.check(...), check(...)
SETUP = re.compile(r"\bplumbing\.setup\(")  # the setup cell; its section is left out
CODE_LINES = 10  # the most lines of code on a slide
CODE_CHARS = 70  # characters of code per line at the deck's code size; a longer line loses its comment
OUTPUT_LINES = 5  # an output longer than this shows its first lines and "…" (a slide's ``output`` says otherwise)
ELLIPSIS = "…"


class SlidesError(SiteError):
    """The decks cannot be built; the message says why and what to do."""


# --------------------------------------------------------------------------- which cell goes on which slide


def deep_dives_start(cells: list) -> int:
    """Index of the ``## Deep dives`` heading cell in ``cells`` (``len(cells)`` when there is none)."""
    return next(
        (
            i
            for i, c in enumerate(cells)
            if c.cell_type == "markdown" and c.source.strip() and DEEP_DIVES.match(c.source.strip().splitlines()[0])
        ),
        len(cells),
    )


def is_skipped(cell, index: int, deep: int) -> bool:
    """Whether the cell at ``index`` is a deep dive's, a Colab cell or a solution (``deep``: the Deep dives index)."""
    return index >= deep or cell.get("id") in SKIPPED_IDS or SOLUTION in cell.metadata.get("tags", [])


def is_check(cell) -> bool:
    """Whether ``cell`` is code that calls ``plumbing.check(`` or ``check(``."""
    return cell.cell_type == "code" and bool(CHECK.search(cell.source))


def section_starts(cells: list) -> list[int]:
    """For each cell, the index of the ``##`` heading cell of its section (0 before the first)."""
    out, start = [], 0
    for i, c in enumerate(cells):
        if c.cell_type == "markdown" and c.source.lstrip().startswith("## "):
            start = i
        out.append(start)
    return out


def left_out(cells: list) -> set[int]:
    """Indices of the cells on no slide and in no notes: deep dives, Colab cells, solutions, the Setup section."""
    deep, starts = deep_dives_start(cells), section_starts(cells)
    setup = {starts[i] for i, c in enumerate(cells) if c.cell_type == "code" and SETUP.search(c.source)}
    return {i for i, c in enumerate(cells) if is_skipped(c, i, deep) or (starts[i] in setup and starts[i] > 0)}


def blocks(markdown: str) -> list[str]:
    """``markdown`` cut at blank lines, never inside a fenced code block or a ``$$`` display formula."""
    out, current, fence, math = [], [], False, False
    for line in markdown.split("\n"):
        stripped = line.strip()
        if not stripped and not fence and not math:
            if current:
                out.append("\n".join(current))
                current = []
            continue
        current.append(line)
        if stripped.startswith("```"):
            fence = not fence
        elif not fence and stripped.count("$$") % 2:
            math = not math
    if current:
        out.append("\n".join(current))
    return out


def solution_words(cells: list) -> set[str]:
    """The words of the solutions' folds, ``<summary>Solution</summary>`` (``解答`` in Chinese)."""
    return {
        m.strip()
        for c in cells
        if c.cell_type == "markdown" and SOLUTION in c.metadata.get("tags", [])
        for m in re.findall(r"<summary>(.*?)</summary>", c.source)
    }


def notes_text(markdown: str, words: set[str]) -> str:
    """``markdown`` as speaker notes: without figures and the paragraphs that point at the folded solutions."""
    marks = [f"**{w}**" for w in words if w]
    kept = [b for b in blocks(re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown)) if b.strip() and not any(m in b for m in marks)]
    return table_code("\n\n".join(kept))


def table_code(markdown: str) -> str:
    """``markdown`` with each code span of a table row that holds a ``|`` (``<|eot_id|>``) written as HTML: nbconvert's
    Markdown (mistune) takes that ``|`` for a column border and shows the whole table as text."""

    def code(m: re.Match) -> str:
        return f"<code>{html.escape(m.group(1)).replace('|', '&#124;')}</code>" if "|" in m.group(1) else m.group(0)

    return "\n".join(re.sub(r"`([^`\n]+)`", code, line) if line.lstrip().startswith("|") else line for line in markdown.split("\n"))


def text_width(text: str) -> float:
    """Width of ``text`` in characters of code: a wide (CJK) character counts as two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def clip(line: str, chars: int = CODE_CHARS) -> str:
    """``line`` cut to ``chars`` characters' width, ending in "…" when cut."""
    if text_width(line) <= chars:
        return line
    out = ""
    for ch in line:
        if text_width(out + ch) > chars - 1:
            break
        out += ch
    return out + ELLIPSIS


def line_numbers(spec: str) -> list[int]:
    """The line numbers of a slide's ``lines``: ``"3-9"``, ``"1, 5-7"`` (from 1, inclusive)."""
    out = []
    for part in str(spec).split(","):
        first, _, last = part.strip().partition("-")
        out += range(int(first), int(last or first) + 1)
    return out


def code_lines(source: str, spec: str | None = None) -> str:
    """The lines ``spec`` (:func:`line_numbers`; all when None) of ``source``, a line wider than
    :data:`CODE_CHARS` without its end-of-line comment."""
    lines = source.rstrip("\n").split("\n")
    comments = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and tok.start[1] > 0 and lines[tok.start[0] - 1][: tok.start[1]].strip():
                comments[tok.start[0] - 1] = tok.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    lines = [line[: comments[i]].rstrip() if i in comments and len(line) > CODE_CHARS else line for i, line in enumerate(lines)]
    numbers = line_numbers(spec) if spec else range(1, len(lines) + 1)
    return textwrap.dedent("\n".join(lines[n - 1] for n in numbers if 0 < n <= len(lines))).strip("\n")


def cut_text(text, lines: int, wrap: bool = False) -> str:
    """An output's text: its first ``lines`` lines, each cut to the slide's width unless ``wrap``, and "…" when
    lines were left out."""
    rows = ("".join(text) if isinstance(text, list) else text).rstrip("\n").split("\n")
    shown = [r if wrap else clip(r) for r in rows[:lines]]
    return "\n".join(shown + ([ELLIPSIS] if len(rows) > lines else [])) + "\n"


def cut_outputs(outputs: list, lines: int | None, wrap: bool = False) -> list:
    """Copies of a code cell's ``outputs`` as a slide shows them: figures whole, text cut (:func:`cut_text`);
    none when ``lines`` is 0; ``None``: :data:`OUTPUT_LINES`."""
    if lines == 0:
        return []
    lines = OUTPUT_LINES if lines is None else lines
    out = []
    for output in copy.deepcopy(outputs):
        if output.get("output_type") == "stream":
            output["text"] = cut_text(output["text"], lines, wrap)
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output["data"]
            if "image/png" in data:
                output["data"] = nbformat.from_dict({"image/png": data["image/png"]})
            elif "text/plain" in data:
                output["data"] = nbformat.from_dict({"text/plain": cut_text(data["text/plain"], lines, wrap)})
            else:
                continue
        else:  # an error
            continue
        out.append(output)
    return out


def new_cell(kind: str, source: str, slide_type: str, **fields):
    """A new markdown or code cell of the deck's notebook with ``metadata.slideshow.slide_type``."""
    cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(source, **fields)
    cell.metadata["slideshow"] = {"slide_type": slide_type}
    return cell


def slide_cells(slide: dict, cells: list, ids: dict, language: str) -> list:
    """The cells of one slide of the table: its title and text, its block, its code cell, and no notes yet.

    Raises:
        SlidesError: the slide names a cell that is missing or of the wrong kind.
    """
    pick = LANGUAGES.index(language)
    title = slide["title"][pick] if "title" in slide else cells[ids[slide["section"]]].source.lstrip().split("\n")[0][3:]
    text = [f"## {title}"] + ([slide["text"][pick]] if slide.get("text") else [])
    attachments = None
    if "block" in slide:
        name, _, number = slide["block"].partition(":")
        cell = cells[ids[name]]
        parts = blocks(cell.source)
        if cell.cell_type != "markdown" or not number.isdigit() or not 1 <= int(number) <= len(parts):
            raise SlidesError(f"slide {label(slide)!r}: block {slide['block']!r} is not a block of a markdown cell")
        text.append(table_code(parts[int(number) - 1]))
        attachments = {k: v for k, v in (cell.get("attachments") or {}).items() if f"attachment:{k}" in text[-1]}
    out = [new_cell("markdown", "\n\n".join(text), "slide")]
    if attachments:
        out[0]["attachments"] = attachments
    if "cell" in slide:
        cell = cells[ids[slide["cell"]]]
        if cell.cell_type != "code":
            raise SlidesError(f"slide {label(slide)!r}: cell {slide['cell']} is not a code cell")
        lines = None if cell.metadata.get("llama3_stub") else slide.get("lines")  # a stub: whole
        shown = new_cell(
            "code",
            code_lines(cell.source, lines),
            "-",
            outputs=cut_outputs(cell.get("outputs", []), slide.get("output"), slide.get("wrap", False)),
            execution_count=cell.get("execution_count"),
        )
        if not slide.get("input", True):
            shown.metadata["tags"] = [HIDE_INPUT]
        out.append(shown)
    return out


def label(slide: dict) -> str:
    """A slide of the table as its error messages name it."""
    return slide["title"][0] if "title" in slide else f"section {slide.get('section')}"


def slideshow(nb, slides: list[dict], language: str = "en") -> nbformat.NotebookNode:
    """The deck's notebook: the title slide of the executed notebook ``nb``, then ``slides`` (the table's list
    for it), each with its speaker notes; ``nb`` is left as it is.

    A slide's notes are the cells it names in ``notes`` and the other markdown cells of its section before its
    cell; prose after a section's last slide goes to that slide, a section without slides to the slide before.
    Setup sections, checks, solutions, Colab cells and deep dives are on no slide and in no notes.

    Raises:
        SlidesError: a slide names a cell that is missing, that is a setup, check, solution, Colab or deep-dive
            cell, or comes before the slide before it; or the table has no slide.
    """
    cells, words = nb.cells, solution_words(nb.cells)
    ids = {c.get("id"): i for i, c in enumerate(cells)}
    hidden, starts = left_out(cells), section_starts(cells)
    if not slides:
        raise SlidesError("the table has no slide for it")
    anchors, notes, whole, taken = [], [], set(), {}
    for slide in slides:
        named = [slide[k].partition(":")[0] for k in ("cell", "block", "section") if k in slide]
        own = [(name, int(n) if n.isdigit() else None) for name, _, n in (e.partition(":") for e in slide.get("notes", []))]
        for name in named + [name for name, _ in own]:
            if name not in ids:
                raise SlidesError(f"slide {label(slide)!r}: no cell {name!r} in the notebook")
            if ids[name] in hidden or is_check(cells[ids[name]]) or SETUP.search(cells[ids[name]].source):
                raise SlidesError(f"slide {label(slide)!r}: cell {name!r} is a setup, check, solution, Colab or deep-dive cell")
        indices = [ids[n] for n in named] or [ids[n] for n, _ in own]  # where the slide is in the notebook
        if not indices:
            raise SlidesError(f"slide {label(slide)!r} names no cell")
        if anchors and min(indices) < anchors[-1]:
            raise SlidesError(f"slide {label(slide)!r} comes before the slide above it in the notebook")
        anchors.append(min(indices))
        notes.append([(ids[name], n) for name, n in own])
        for name, n in own:
            (whole.add(ids[name]) if n is None else taken.setdefault(ids[name], set()).add(n))
    title = cells[0]
    title_notes = []
    for i, c in enumerate(cells):
        if c.cell_type != "markdown" or i in hidden or i in whole or i == 0:
            continue
        same = [k for k, a in enumerate(anchors) if starts[a] == starts[i]]
        after = [k for k in same if anchors[k] >= i]
        before = [k for k, a in enumerate(anchors) if a < i]
        target = after[0] if after else (same[-1] if same else (before[-1] if before else None))
        (title_notes if target is None else notes[target]).append((i, None))

    def prose(i: int, n: int | None) -> str:  # a cell's prose, or its block n, without what other slides took
        parts = blocks(cells[i].source)
        kept = [parts[n - 1]] if n else [b for k, b in enumerate(parts, 1) if k not in taken.get(i, ())]
        return notes_text("\n\n".join(kept), words)

    heading, *rest = blocks(title.source)
    figure = [b for b in rest if "](attachment:" in b]
    first = new_cell("markdown", "\n\n".join([heading] + figure), "slide")
    if title.get("attachments"):
        first["attachments"] = copy.deepcopy(title.attachments)
    out = [first, new_cell("markdown", notes_text("\n\n".join(b for b in rest if b not in figure), words), "notes")]
    out += [new_cell("markdown", prose(i, n), "notes") for i, n in title_notes]
    for slide, own in zip(slides, notes):
        out += slide_cells(slide, cells, ids, language)
        out += [
            new_cell("markdown", text, "notes")
            for text in (prose(i, n) for i, n in sorted(own, key=lambda e: (e[0], e[1] or 0)))
            if text.strip()
        ]
    deck = nbformat.v4.new_notebook(cells=out, metadata=copy.deepcopy(nb.metadata))
    deck.metadata["title"] = heading.lstrip("# ").strip()
    return deck


def sections_table(nb) -> list[dict]:
    """The slides of a notebook the table does not cut: one per ``##`` section shown, its prose in the notes."""
    hidden = left_out(nb.cells)
    return [
        {"section": c.get("id")}
        for i, c in enumerate(nb.cells)
        if i not in hidden and c.cell_type == "markdown" and c.source.lstrip().startswith("## ")
    ]


def load_cuts(path: Path = CUTS) -> dict[str, list[dict]]:
    """The table of slides: notebook stem -> its slides.

    Raises:
        SlidesError: the file is missing or not TOML.
    """
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SlidesError(f"cannot read the slides' table {path}: {e}") from None
