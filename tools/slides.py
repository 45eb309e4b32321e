"""Slides (``make slides``): every notebook of the series as a reveal.js lecture deck, in both editions, offline.

    python tools/slides.py                      # the committed notebooks (they carry their outputs) -> build/slides/
    python tools/slides.py --src build --out DIR
    python tools/slides.py --student            # the students' decks -> build/slides-student/ (no graded code)

The slides are cut by hand in tools/slides_cuts.toml: per notebook, a list of slides, each with its title and at
most about 40 words of text (English and Chinese), and what it shows of the notebook: a code cell (or some of
its lines, at most 10) with its output cut to its first lines, a figure output alone, or a block of a markdown
cell (a formula, a figure). A deck is the title slide (the notebook's heading and figure), then the table's
slides, one after the other. Each slide's speaker notes (reveal.js ``<aside class="notes">``, key S) hold the
notebook's prose for that step: the markdown cells a slide names in ``notes``, and every other markdown cell of
its section that comes before the slide's cell (or, for the prose at a section's end, after the section's last
slide). The Setup section, setup and check cells (``plumbing.check(...)``), solutions, the Colab cells and the
deep dives are on no slide and in no notes. The Chinese deck is the same table over the translated notebook. A
notebook the table lacks gets one slide per section, its prose in the notes. The students' decks (``--student``)
show each graded cell as the student edition has it, its stub in place of its code (tools/student.py), whole.

The template (tools/slides_template/llama3_slides/) is nbconvert's ``reveal`` with every outside file made
local: reveal.js from the PyPI package sphinx-revealjs (which ships reveal.js's own ``dist/`` and
``plugin/``), MathJax 3 from django-static-mathjax (the copy the course site uses), no jQuery, require.js or
Mermaid. The figures are the notebooks' cell attachments and outputs, embedded in the page. Type sizes are
set for a 1024 x 768 projector: code at least 20 px there.

Reads:
    the series, ``plumbing.series_notebooks()``, as executed copies ``--src/NN_name.ipynb`` (default
    ``notebooks/``); the Chinese edition is each one translated by tools/i18n.py from
    ``locale/zh_CN/LC_MESSAGES/NN_name.po`` (``site_stage.edition_notebook``: what ``python tools/i18n.py
    build`` writes into notebooks/zh/ and what the site shows); tools/slides_cuts.toml; the installed packages
    sphinx-revealjs and django-static-mathjax; the template in tools/slides_template/.
Writes:
    ``--out`` (default ``build/slides/``), replaced as a whole: ``NN_name.slides.html`` per notebook,
    ``zh/NN_name.slides.html`` for each notebook whose translation is complete (the others are named in a
    note), and once ``_static/reveal.js/`` and ``_static/mathjax/`` with their licences. Every path in a
    deck is relative: the folder works from ``file://`` and from any static server, and loads nothing from
    outside it. tools/build_site.py puts the same decks into the site (:func:`site_decks`).
Raises:
    SlidesError (a SiteError; printed as one line, exit status 2): a notebook missing from ``--src`` or
    never executed, a notebook without slides in the table or a slide naming a cell that is missing or may not
    be shown, sphinx-revealjs or django-static-mathjax not installed, nbconvert failing on a notebook, or an
    ``--out`` folder that holds something other than decks.
"""

from __future__ import annotations

import argparse
import copy
import html
import importlib.util
import io
import os
import re
import shutil
import sys
import textwrap
import time
import tokenize
import tomllib
import unicodedata
from pathlib import Path

import nbformat

import plumbing
from site_stage import EDITIONS, REPO_ROOT, SiteError, edition_notebook

__all__ = ["SlidesError", "build", "site_decks", "slideshow", "load_cuts", "left_out", "is_check", "table_code",
           "write_deck", "deck_name", "copy_assets", "reveal_dir", "mathjax_dir"]

TEMPLATES = Path(__file__).resolve().parent / "slides_template"
TEMPLATE = "llama3_slides"
CUTS = Path(__file__).resolve().parent / "slides_cuts.toml"
STATIC = "_static"  # the assets' folder in the decks' root folder: _static/reveal.js/, _static/mathjax/
WIDTH, HEIGHT = 1280, 720  # the deck's size in CSS pixels (16:9); reveal.js scales it to the window
#: what the decks use of reveal.js (sphinx-revealjs's ``_static/revealjs/``): the core, the white theme with its
#: fonts, the speaker-notes plugin (key S), the licence
REVEAL_FILES = ["LICENSE", "dist/reveal.css", "dist/reveal.js", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js"]
MATHJAX_FILE = "es5/tex-svg-full.js"  # TeX input, SVG output: no font files to fetch (as tools/book/local_mathjax.py)

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
# Pure functions: they read and write no file, change none of their arguments and raise nothing of their own
# (except slideshow(), which says so).


def deep_dives_start(cells: list) -> int:
    """Index of the ``## Deep dives`` heading cell in ``cells`` (``len(cells)`` when there is none)."""
    return next((i for i, c in enumerate(cells)
                 if c.cell_type == "markdown" and c.source.strip() and DEEP_DIVES.match(c.source.strip().splitlines()[0])),
                len(cells))


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
    return {m.strip() for c in cells if c.cell_type == "markdown" and SOLUTION in c.metadata.get("tags", [])
            for m in re.findall(r"<summary>(.*?)</summary>", c.source)}


def notes_text(markdown: str, words: set[str]) -> str:
    """``markdown`` as speaker notes: without figures and without the paragraphs that point at the folded
    solutions (``... **Solution** ...``)."""
    marks = [f"**{w}**" for w in words if w]
    kept = [b for b in blocks(re.sub(r"!\[[^\]]*\]\([^)]*\)", "", markdown))
            if b.strip() and not any(m in b for m in marks)]
    return table_code("\n\n".join(kept))


def table_code(markdown: str) -> str:
    """``markdown`` with each code span of a table row that holds a ``|`` (``<|eot_id|>``) written as HTML: nbconvert's
    Markdown (mistune) takes that ``|`` for a column border and shows the whole table as text."""
    def code(m: re.Match) -> str:
        return f"<code>{html.escape(m.group(1)).replace('|', '&#124;')}</code>" if "|" in m.group(1) else m.group(0)

    return "\n".join(re.sub(r"`([^`\n]+)`", code, line) if line.lstrip().startswith("|") else line
                     for line in markdown.split("\n"))


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
            if tok.type == tokenize.COMMENT and tok.start[1] > 0 and lines[tok.start[0] - 1][:tok.start[1]].strip():
                comments[tok.start[0] - 1] = tok.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    lines = [line[:comments[i]].rstrip() if i in comments and len(line) > CODE_CHARS else line
             for i, line in enumerate(lines)]
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
        shown = new_cell("code", code_lines(cell.source, lines), "-",
                         outputs=cut_outputs(cell.get("outputs", []), slide.get("output"), slide.get("wrap", False)),
                         execution_count=cell.get("execution_count"))
        if not slide.get("input", True):
            shown.metadata["tags"] = [HIDE_INPUT]
        out.append(shown)
    return out


def label(slide: dict) -> str:
    """A slide of the table as its error messages name it."""
    return slide["title"][0] if "title" in slide else f"section {slide.get('section')}"


def slideshow(nb, slides: list[dict], language: str = "en") -> nbformat.NotebookNode:
    """The deck's notebook: the title slide of the executed notebook ``nb``, then ``slides`` (the table's list
    for it), each with its speaker notes (see the module docstring); ``nb`` is left as it is.

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
                raise SlidesError(f"slide {label(slide)!r}: cell {name!r} is a setup, check, solution, Colab "
                                  "or deep-dive cell")
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
        out += [new_cell("markdown", text, "notes") for text in (prose(i, n) for i, n in sorted(own, key=lambda e: (e[0], e[1] or 0)))
                if text.strip()]
    deck = nbformat.v4.new_notebook(cells=out, metadata=copy.deepcopy(nb.metadata))
    deck.metadata["title"] = heading.lstrip("# ").strip()
    return deck


def sections_table(nb) -> list[dict]:
    """The slides of a notebook the table does not cut: one per ``##`` section shown, its prose in the notes."""
    hidden = left_out(nb.cells)
    return [{"section": c.get("id")} for i, c in enumerate(nb.cells)
            if i not in hidden and c.cell_type == "markdown" and c.source.lstrip().startswith("## ")]


def load_cuts(path: Path = CUTS) -> dict[str, list[dict]]:
    """The table of slides: notebook stem -> its slides.

    Raises:
        SlidesError: the file is missing or not TOML.
    """
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SlidesError(f"cannot read the slides' table {path}: {e}") from None


# --------------------------------------------------------------------------- the packages' files


def package_folder(module: str, package: str) -> Path:
    """The folder of the installed top-level ``module`` (from the PyPI package ``package``), not imported.

    Raises:
        SlidesError: the package is not installed.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SlidesError(f"the Python package {package} is not installed: make setup (or pip install -r requirements.lock)")
    return Path(next(iter(spec.submodule_search_locations)))


def reveal_dir() -> Path:
    """reveal.js as sphinx-revealjs ships it (``dist/``, ``plugin/``, ``LICENSE``).

    Raises:
        SlidesError: sphinx-revealjs is not installed, or lacks a file the decks use.
    """
    folder = package_folder("sphinx_revealjs", "sphinx-revealjs") / "_static" / "revealjs"
    missing = [name for name in REVEAL_FILES if not (folder / name).exists()]
    if missing:
        raise SlidesError(f"{folder} lacks {', '.join(missing)}: reinstall sphinx-revealjs (requirements.lock)")
    return folder


def mathjax_dir() -> Path:
    """MathJax's distribution in django-static-mathjax (the course site's MathJax).

    Raises:
        SlidesError: django-static-mathjax is not installed, or lacks ``es5/tex-svg-full.js``.
    """
    folder = package_folder("mathjax", "django-static-mathjax") / "static" / "mathjax"
    if not (folder / MATHJAX_FILE).is_file():
        raise SlidesError(f"{folder / MATHJAX_FILE} is missing: reinstall django-static-mathjax (requirements.lock)")
    return folder


def copy_assets(static: Path) -> None:
    """Copy reveal.js (:data:`REVEAL_FILES`) into ``static/reveal.js/`` and MathJax into ``static/mathjax/``.

    Raises:
        SlidesError: see :func:`reveal_dir` and :func:`mathjax_dir`.
    """
    reveal, mathjax = reveal_dir(), mathjax_dir()
    for name in REVEAL_FILES:
        src, dest = reveal / name, static / "reveal.js" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest)
    (static / "mathjax").mkdir(parents=True, exist_ok=True)
    shutil.copy2(mathjax / MATHJAX_FILE, static / "mathjax" / Path(MATHJAX_FILE).name)
    shutil.copy2(mathjax / "LICENSE", static / "mathjax" / "LICENSE")


# --------------------------------------------------------------------------- decks


def deck_name(stem: str) -> str:
    """The deck's file name: ``NN_name.slides.html`` (nbconvert's own naming)."""
    return f"{stem}.slides.html"


def exporter():
    """nbconvert's slides exporter with this project's template (tools/slides_template/, read when it exports),
    the deck's size, and no execution prompts."""
    from nbconvert import SlidesExporter

    exp = SlidesExporter(extra_template_basedirs=[str(TEMPLATES)], template_name=TEMPLATE,
                         reveal_theme="white", reveal_transition="slide", reveal_number="c/t",
                         reveal_width=str(WIDTH), reveal_height=str(HEIGHT),
                         exclude_input_prompt=True, exclude_output_prompt=True, exclude_anchor_links=True)
    exp.log.setLevel("ERROR")  # "Alternative text is missing": the figures' outputs have none
    from nbconvert.preprocessors import TagRemovePreprocessor

    exp.register_preprocessor(TagRemovePreprocessor(remove_input_tags={HIDE_INPUT}), enabled=True)
    return exp


def write_deck(nb, dest: Path, static: Path, slides: list[dict], language: str = "en", exp=None) -> Path:
    """Write the deck of the executed notebook ``nb`` cut as ``slides`` (its table) to ``dest``, its reveal.js and
    MathJax taken from the folder ``static`` (:func:`copy_assets`) by relative paths; ``language`` sets the
    page's language and the slides' texts.

    Raises:
        SlidesError: see :func:`slideshow`; or nbconvert failed on the notebook.
    """
    exp = exp or exporter()
    up = Path(os.path.relpath(static, dest.parent)).as_posix()
    exp.reveal_url_prefix = f"{up}/reveal.js"
    exp.mathjax_url = f"{up}/mathjax/{Path(MATHJAX_FILE).name}"
    exp.language_code = EDITIONS[language].lang.split("-")[0]
    try:
        body, _ = exp.from_notebook_node(slideshow(nb, slides, language), resources={"metadata": {"name": dest.name.split(".")[0]}})
    except SlidesError as e:
        raise SlidesError(f"{dest.name}: {e}") from None
    except Exception as e:  # nbconvert's and its filters' errors, of many types
        raise SlidesError(f"nbconvert could not make the deck {dest.name}: {type(e).__name__}: {e}") from e
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(body, encoding="utf-8")
    return dest


def executed(path: Path) -> nbformat.NotebookNode:
    """The executed notebook at ``path``.

    Raises:
        SlidesError: it is missing or never ran.
    """
    if not path.is_file():
        raise SlidesError(f"{path} is missing: the decks are made from the executed notebooks of the series "
                          "(notebooks/ carries their outputs; `make run` executes them into build/).")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if code and not any(c.get("execution_count") or c.get("outputs") for c in code):
        raise SlidesError(f"{path} was never executed: its deck would show no outputs (`make refresh` or `make run`).")
    return nb


def student_version(nb, stem: str, language: str) -> nbformat.NotebookNode:
    """``nb`` with each graded cell's code replaced by the student edition's stub (its outputs kept), marked
    ``llama3_stub`` so that its slide shows it whole."""
    from plumbing.grading import stub
    from plumbing.grading_steps import STEPS

    out = copy.deepcopy(nb)
    steps = {s.cell: s for s in STEPS.get(stem[:2], [])}
    for cell in out.cells:
        step = steps.get(cell.get("id"))
        if step is not None and cell.cell_type == "code":
            cell.source = stub(cell, step.task if language == "en" else step.task_zh)
            cell.metadata["llama3_stub"] = True
    return out


def edition_decks(src: Path, stems: list[str], language: str) -> tuple[dict[str, nbformat.NotebookNode], list[str]]:
    """The notebooks of ``language``'s decks, stem -> notebook, and the stems left out (translation incomplete).

    Reads ``src/NN_name.ipynb`` and, for a translated edition, its catalogue (tools/i18n.py).

    Raises:
        SlidesError: see :func:`executed`.
    """
    notebooks, left = {}, []
    for stem in stems:
        nb = executed(src / f"{stem}.ipynb")
        if language == "en":
            notebooks[stem] = nb
            continue
        try:
            notebooks[stem] = edition_notebook(src / f"{stem}.ipynb", language)
        except SiteError:
            left.append(stem)
    return notebooks, left




def write_decks(decks: dict[Path, tuple], static: Path, cuts: dict) -> list[Path]:
    """Write every deck, ``dest -> (notebook, language, stem)``, cut by the table ``cuts``, with the assets in
    ``static`` (a notebook the table lacks: :func:`sections_table`); return the decks.

    Raises:
        SlidesError: see :func:`copy_assets` and :func:`write_deck`.
    """
    copy_assets(static)
    exp = exporter()
    return [write_deck(nb, dest, static, cuts.get(stem) or sections_table(nb), language, exp)
            for dest, (nb, language, stem) in decks.items()]


def site_decks(src: Path, site: Path, editions: dict[str, tuple[str, list[str]]]) -> list[Path]:
    """The decks of the course site (tools/build_site.py): for each edition, ``language -> (its folder in
    the site, its notebooks)``, the decks of its notebooks in ``site/<folder>/slides/`` (English
    ``site/slides/``, Chinese ``site/zh/slides/``), the assets once in ``site/slides/_static/``.

    Reads ``src/NN_name.ipynb`` (executed), tools/slides_cuts.toml and, for a translated edition, the
    catalogues of tools/i18n.py.

    Raises:
        SlidesError: see :func:`load_cuts` and :func:`write_decks`; or a notebook of ``editions`` has no complete translation.
    """
    decks = {}
    for language, (folder, stems) in editions.items():
        notebooks, left = edition_decks(Path(src), stems, language)
        if left:
            raise SlidesError(f"no complete {EDITIONS[language].label} translation of {', '.join(left)}")
        for stem, nb in notebooks.items():
            decks[site / folder / "slides" / deck_name(stem)] = (nb, language, stem)
    return write_decks(decks, site / "slides" / STATIC, load_cuts())


def is_decks_folder(out: Path) -> bool:
    """Whether ``out`` is missing, empty, or holds only what :func:`build` writes."""
    if not out.exists():
        return True
    return all(p.name in (STATIC, "zh") or p.name.endswith(".slides.html") for p in out.iterdir())


def build(src: Path = REPO_ROOT / "notebooks", out: Path = REPO_ROOT / "build" / "slides",
          stems: list[str] | None = None, languages: tuple[str, ...] = ("en", "zh_CN"),
          cuts: Path = CUTS, student: bool = False) -> dict[str, list[Path]]:
    """Write the decks of the executed notebooks ``src/NN_name.ipynb``, cut by the table ``cuts``, into ``out``, replaced as a whole (see
    the module docstring): ``out/NN_name.slides.html``, ``out/<folder>/NN_name.slides.html`` for each other
    edition of ``languages`` (``zh/``), ``out/_static/``; with ``student``, the students' decks (:func:`student_version`).

    Returns:
        language -> its decks, in order; a notebook whose translation is incomplete has none.

    Raises:
        SlidesError: see the module docstring.
    """
    src, out = Path(src), Path(out)
    stems = [p.stem for p in plumbing.series_notebooks()] if stems is None else list(stems)
    if not stems:
        raise SlidesError("The series has no notebooks (notebooks/NN_*.ipynb).")
    if not is_decks_folder(out):
        raise SlidesError(f"{out} holds files other than decks; refusing to replace it with the decks.")
    decks, written = {}, {}
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    for language in languages:
        notebooks, _ = edition_decks(src, stems, language)
        if student:
            notebooks = {stem: student_version(nb, stem, language) for stem, nb in notebooks.items()}
        folder = tmp / EDITIONS[language].folder
        written[language] = [out / EDITIONS[language].folder / deck_name(stem) for stem in notebooks]
        decks.update({folder / deck_name(stem): (nb, language, stem) for stem, nb in notebooks.items()})
    try:
        write_decks(decks, tmp / STATIC, load_cuts(cuts))
        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return written


def main(argv: list[str] | None = None) -> int:
    """``make slides``: :func:`build` with the command line's folders; exit status 2 with one line on a SlidesError."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=REPO_ROOT / "notebooks",
                        help="folder of executed NN_*.ipynb (default notebooks/, which carry their outputs)")
    parser.add_argument("--out", type=Path, default=None,
                        help="the decks' folder, replaced whole (default build/slides/, or build/slides-student/)")
    parser.add_argument("--student", action="store_true",
                        help="the students' decks: each graded cell as the student edition has it (its stub)")
    args = parser.parse_args(argv)
    args.out = args.out or REPO_ROOT / "build" / ("slides-student" if args.student else "slides")
    start = time.perf_counter()
    stems = [p.stem for p in plumbing.series_notebooks()]
    try:
        written = build(args.src, args.out, stems, student=args.student)
    except SlidesError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{len(decks)} in {EDITIONS[lang].label}" for lang, decks in written.items())
    print(f"decks written in {args.out}: {counts} ({time.perf_counter() - start:.1f} s); open "
          f"{args.out / deck_name(stems[0])} (space for the next slide, S for the speaker notes)")
    uncut = [stem for stem in stems if not load_cuts().get(stem)]
    if uncut:
        print(f"note: {', '.join(uncut)} not in {CUTS.name}: a slide per section, the prose in the notes")
    for lang, decks in written.items():
        left = [stem for stem in stems if args.out / EDITIONS[lang].folder / deck_name(stem) not in decks]
        if left:
            print(f"note: no {EDITIONS[lang].label} deck of {', '.join(left)}, whose translation is incomplete "
                  "(python tools/i18n.py check)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
