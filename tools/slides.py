"""Slides (``make slides``): every notebook of the series as a reveal.js deck, in both editions, offline.

    python tools/slides.py                      # the committed notebooks (they carry their outputs) -> build/slides/
    python tools/slides.py --src build --out DIR

A deck is nbconvert's slides exporter run on a copy of the executed notebook whose cells this module gives
slide metadata (``slideshow.slide_type``; the committed notebooks carry none):

- the title cell (``# NN · ...``) is the title slide; every ``## ...`` heading starts a slide (``Before you
  start``, ``Setup``, the sections ``## N. ...``, ``Summary``, ``Exercises``);
- inside a section each step is a slide below it (reveal.js's vertical slides): a markdown cell (the why,
  the formula, a check's sentence) with the code cell that follows it, its output showing the result's
  shape, when the two fit on one slide; a markdown cell too long for one slide is cut at blank lines into
  several (a line ending in ``:`` stays with what it introduces);
- left out (``skip``): the Colab link and setup cells (ids ``colab-link``, ``colab-setup``), every cell
  tagged ``solution``, and everything from the ``## Deep dives`` heading on; the sentence of the exercises
  that points at the collapsed solutions goes too;
- no execution prompts.

The template (tools/slides_template/llama3_slides/) is nbconvert's ``reveal`` with every outside file made
local: reveal.js from the PyPI package sphinx-revealjs (which ships reveal.js's own ``dist/`` and
``plugin/``), MathJax 3 from django-static-mathjax (the copy the course site uses), no jQuery, require.js or
Mermaid. The figures are the notebooks' cell attachments and outputs, embedded in the page. A slide too
tall for the deck shrinks its text a little, then scrolls (the template's script).

Reads:
    the series, ``plumbing.series_notebooks()``, as executed copies ``--src/NN_name.ipynb`` (default
    ``notebooks/``); the Chinese edition is each one translated by tools/i18n.py from
    ``locale/zh_CN/LC_MESSAGES/NN_name.po`` (``site_stage.edition_notebook``: what ``python tools/i18n.py
    build`` writes into notebooks/zh/ and what the site shows); the installed packages sphinx-revealjs and
    django-static-mathjax; the template in tools/slides_template/.
Writes:
    ``--out`` (default ``build/slides/``), replaced as a whole: ``NN_name.slides.html`` per notebook,
    ``zh/NN_name.slides.html`` for each notebook whose translation is complete (the others are named in a
    note), and once ``_static/reveal.js/`` and ``_static/mathjax/`` with their licences. Every path in a
    deck is relative: the folder works from ``file://`` and from any static server, and loads nothing from
    outside it. tools/build_site.py puts the same decks into the site (:func:`site_decks`).
Raises:
    SlidesError (a SiteError; printed as one line, exit status 2): a notebook missing from ``--src`` or
    never executed, sphinx-revealjs or django-static-mathjax not installed, nbconvert failing on a
    notebook, or an ``--out`` folder that holds something other than decks.
"""

from __future__ import annotations

import argparse
import base64
import copy
import html
import importlib.util
import os
import re
import shutil
import struct
import sys
import time
import unicodedata
from pathlib import Path

import nbformat

import plumbing
from site_stage import EDITIONS, REPO_ROOT, SiteError, edition_notebook

__all__ = ["SlidesError", "build", "site_decks", "slideshow", "split_markdown", "table_code", "write_deck", "deck_name",
           "copy_assets", "reveal_dir", "mathjax_dir"]

TEMPLATES = Path(__file__).resolve().parent / "slides_template"
TEMPLATE = "llama3_slides"
STATIC = "_static"  # the assets' folder in the decks' root folder: _static/reveal.js/, _static/mathjax/
WIDTH, HEIGHT = 1280, 720  # the deck's size in CSS pixels (16:9); reveal.js scales it to the window
#: what the decks use of reveal.js (sphinx-revealjs's ``_static/revealjs/``): the core, the white theme with its
#: fonts, the speaker-notes plugin (key S), the licence
REVEAL_FILES = ["LICENSE", "dist/reveal.css", "dist/reveal.js", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js"]
MATHJAX_FILE = "es5/tex-svg-full.js"  # TeX input, SVG output: no font files to fetch (as tools/book/local_mathjax.py)

SKIPPED_IDS = {"colab-link", "colab-setup"}
SOLUTION = "solution"
DEEP_DIVES = re.compile(r"^##\s+(?:.*·\s*)?Deep dives\s*$")  # "## Deep dives", "## 深入探讨 · Deep dives"

# How much fits on one slide: estimates in CSS pixels of the deck (the sizes of the template's llama3_slides.css);
# the template's script shrinks, then scrolls, a slide that is taller after all.
BUDGET = 650  # of the deck's 720
LINE = 35  # a line of text: 24 px, line height 1.45
GAP = 14  # between paragraphs
CHARS_PER_LINE = 108  # characters of prose per line (a CJK character counts as WIDE_CHAR)
WIDE_CHAR = 2.2
HEADINGS = {1: 92, 2: 62, 3: 55}  # a heading of level 1, 2, 3 with its margins
CODE_LINE = 22  # a line of code or output: 17 px, line height 1.3
CODE_CHARS = 112  # characters per line of code before it wraps
CODE_BOX = 30  # the frame around a cell's code
OUTPUT_BOX = 10
TABLE_ROW = 32
MATH_ROW = 55  # a row of a display formula
WIDE = 1216  # the width of a slide's content
FIGURE_HEIGHT = (430, 470)  # the tallest a figure is shown: in markdown, in an output (CSS max-height)
MAX_OUTPUT_LINES = 24  # an output longer than this is counted as this (the slide scrolls)


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
    """Whether the cell at ``index`` stays out of the deck (``deep``: the Deep dives heading's index)."""
    return index >= deep or cell.get("id") in SKIPPED_IDS or SOLUTION in cell.metadata.get("tags", [])


def text_width(text: str) -> float:
    """Width of ``text`` in characters of Latin prose: a wide (CJK) character counts as :data:`WIDE_CHAR`."""
    return sum(WIDE_CHAR if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


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


def png_size(data) -> tuple[int, int]:
    """Width and height of a base64 PNG (a cell attachment or an output), from its header; (0, 0) if not a PNG."""
    try:
        head = base64.b64decode("".join(data) if isinstance(data, list) else data)[:24]
    except (ValueError, TypeError):
        return 0, 0
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    return struct.unpack(">II", head[16:24])


def figure_height(width: int, height: int, tallest: int) -> float:
    """Height a figure of ``width`` x ``height`` pixels is shown at: narrowed to the slide, at most ``tallest``."""
    if not width or not height:
        return tallest
    return min(height * min(1.0, WIDE / width), tallest) + 10


def block_height(block: str, images: dict | None = None) -> float:
    """Estimated height of one markdown block in CSS pixels; ``images``: attachment name -> its PNG's size."""
    lines = block.split("\n")
    first = lines[0].strip()
    if first.startswith("```"):
        return 20 + CODE_LINE * len(lines)
    if first.startswith("$$"):
        return 20 + MATH_ROW * (1 + block.count("\\\\"))
    if first.startswith("#"):
        return HEADINGS.get(len(first) - len(first.lstrip("#")), LINE)
    figures = re.findall(r"!\[[^\]]*\]\(([^)]*)\)", block)
    height = sum(figure_height(*(images or {}).get(src.removeprefix("attachment:"), (0, 0)), FIGURE_HEIGHT[0])
                 for src in figures)
    if first.startswith("|"):
        return height + TABLE_ROW * (len(lines) - 1) + GAP
    prose = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", block)
    prose = re.sub(r"\]\([^)]*\)", "]", prose)  # a link shows its words, not its address
    items = [i for i in re.split(r"\n(?=\s*(?:\d+\.|[-*])\s)", prose) if i.strip()]  # a list item starts a line
    return height + GAP + sum(LINE * max(1, -(-text_width(" ".join(i.split())) // CHARS_PER_LINE)) for i in items)


def markdown_height(markdown: str, images: dict | None = None) -> float:
    """Estimated height of a markdown cell in CSS pixels (``images`` as for :func:`block_height`)."""
    return sum(block_height(b, images) for b in blocks(markdown))


def code_height(cell) -> float:
    """Estimated height of a code cell, its code and outputs, in CSS pixels."""
    lines = sum(max(1, -(-len(line) // CODE_CHARS)) for line in cell.source.rstrip("\n").split("\n"))
    height, shown = CODE_BOX + CODE_LINE * lines, 0
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/png" in data:
            height += figure_height(*png_size(data["image/png"]), FIGURE_HEIGHT[1])
        elif any(k.startswith("image/") for k in data):
            height += FIGURE_HEIGHT[1]
        else:
            text = output.get("text") or data.get("text/plain") or ""
            shown += len(("".join(text) if isinstance(text, list) else text).rstrip("\n").split("\n"))
    return height + (OUTPUT_BOX + CODE_LINE * min(shown, MAX_OUTPUT_LINES) if shown else 0)


def split_markdown(markdown: str, budget: float = BUDGET, images: dict | None = None) -> list[str]:
    """``markdown`` as parts that each fit one slide: its blocks packed in order; a heading, and a block
    that ends with ``:``, stay with the block after them. One part when it fits whole."""
    parts, current, height = [], [], 0.0
    units = blocks(markdown)
    groups, pending = [], []
    for block in units:
        pending.append(block)
        last = block.rstrip().split("\n")[-1].rstrip()
        if not (block.lstrip().startswith("#") or last.endswith(":") or last.endswith("：")):
            groups.append(pending)
            pending = []
    if pending:
        groups.append(pending)
    for group in groups:
        h = sum(block_height(b, images) for b in group)
        if current and height + h > budget:
            parts.append("\n\n".join(current))
            current, height = [], 0.0
        current += group
        height += h
    if current:
        parts.append("\n\n".join(current))
    return parts


def solution_words(cells: list) -> set[str]:
    """The words of the solutions' folds, ``<summary>Solution</summary>`` (``解答`` in Chinese)."""
    return {m.strip() for c in cells if c.cell_type == "markdown" and SOLUTION in c.metadata.get("tags", [])
            for m in re.findall(r"<summary>(.*?)</summary>", c.source)}


def without_solution_pointer(markdown: str, words: set[str]) -> str:
    """``markdown`` without its paragraphs that point at the folded solutions (``... **Solution** ...``)."""
    marks = [f"**{w}**" for w in words if w]
    kept = [b for b in blocks(markdown) if not any(m in b for m in marks)]
    return "\n\n".join(kept) if len(kept) < len(blocks(markdown)) else markdown


def table_code(markdown: str) -> str:
    """``markdown`` with each code span of a table row that holds a ``|`` (``<|eot_id|>``) written as HTML: nbconvert's
    Markdown (mistune) takes that ``|`` for a column border and shows the whole table as text."""
    def code(m: re.Match) -> str:
        return f"<code>{html.escape(m.group(1)).replace('|', '&#124;')}</code>" if "|" in m.group(1) else m.group(0)

    return "\n".join(re.sub(r"`([^`\n]+)`", code, line) if line.lstrip().startswith("|") else line
                     for line in markdown.split("\n"))


def part_cell(cell, source: str, index: int):
    """A markdown cell holding ``source``, a part of ``cell``, with the attachments it shows."""
    part = copy.deepcopy(cell)
    part.source = source
    part["id"] = f"{cell.get('id', 'cell')}-part{index}"
    if cell.get("attachments"):
        shown = {name: data for name, data in cell.attachments.items() if f"attachment:{name}" in source}
        if shown:
            part["attachments"] = shown
        else:
            part.pop("attachments", None)
    return part


def set_type(cell, slide_type: str) -> None:
    """Set ``cell``'s ``metadata.slideshow.slide_type`` (the one function here that changes its argument)."""
    cell.metadata["slideshow"] = nbformat.from_dict({**cell.metadata.get("slideshow", {}), "slide_type": slide_type})


def slideshow(nb, budget: float = BUDGET) -> nbformat.NotebookNode:
    """A copy of the executed notebook ``nb`` with the slide metadata of its deck (see the module docstring).

    Reads and writes nothing; ``nb`` is left as it is. The copy's cells are ``nb``'s, in order, with
    ``metadata.slideshow.slide_type`` set on each (``slide``: the title and each ``##`` heading; ``subslide``:
    a step below it; ``-``: a cell that joins the step before it, when both fit on one slide; ``skip``), the
    code cells' nbgrader markers removed and long markdown cells cut into parts; its ``metadata.title`` is
    the title cell's heading.

    Raises:
        SlidesError: the notebook has no cell to show.
    """
    out = copy.deepcopy(nb)
    deep = deep_dives_start(out.cells)
    words = solution_words(out.cells)
    cells, title_seen = [], False
    room, last = 0.0, None  # what is left on the current slide, and the kind of its last cell
    for index, cell in enumerate(out.cells):
        if is_skipped(cell, index, deep) or cell.cell_type not in ("code", "markdown"):
            set_type(cell, "skip")
            cells.append(cell)
            continue
        if cell.cell_type == "code":
            height = code_height(cell)
            joins = height <= room
            set_type(cell, "-" if joins else "subslide")
            room, last = (room if joins else budget) - height, "code"
            cells.append(cell)
            continue
        source = table_code(without_solution_pointer(cell.source, words))
        first = source.lstrip().split("\n")[0]
        if not title_seen and first.startswith("# "):
            title_seen = True
            out.metadata["title"] = first[2:].strip()
            kind = "slide"
        else:
            kind = "slide" if first.startswith("## ") else "subslide"
        images = {name: png_size(data.get("image/png", "")) for name, data in (cell.get("attachments") or {}).items()}
        height = markdown_height(source, images)
        if kind == "subslide" and last == "markdown" and height <= room:  # prose that goes on (the next exercise)
            cell.source = source
            set_type(cell, "-")
            cells.append(cell)
            room -= height
            continue
        parts = split_markdown(source, budget, images)
        for n, part in enumerate(parts):
            piece = cell if len(parts) == 1 else part_cell(cell, part, n)
            piece.source = part
            set_type(piece, kind if n == 0 else "subslide")
            cells.append(piece)
        room, last = (budget - markdown_height(parts[-1], images) if parts else 0.0), "markdown"
    out.cells = cells
    if all(c.metadata.slideshow.slide_type == "skip" for c in cells):
        raise SlidesError("the notebook has no cell to show on a slide")
    return out


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
    return exp


def write_deck(nb, dest: Path, static: Path, language: str = "en", exp=None) -> Path:
    """Write the deck of the executed notebook ``nb`` to ``dest``, its reveal.js and MathJax taken from the
    folder ``static`` (:func:`copy_assets`) by relative paths; ``language`` sets the page's language.

    Raises:
        SlidesError: nbconvert failed on the notebook.
    """
    exp = exp or exporter()
    up = Path(os.path.relpath(static, dest.parent)).as_posix()
    exp.reveal_url_prefix = f"{up}/reveal.js"
    exp.mathjax_url = f"{up}/mathjax/{Path(MATHJAX_FILE).name}"
    exp.language_code = EDITIONS[language].lang.split("-")[0]
    try:
        body, _ = exp.from_notebook_node(slideshow(nb), resources={"metadata": {"name": dest.name.split(".")[0]}})
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


def write_decks(decks: dict[Path, tuple], static: Path) -> list[Path]:
    """Write every deck, ``dest -> (notebook, language)``, with the assets in ``static``; return the decks.

    Raises:
        SlidesError: see :func:`copy_assets` and :func:`write_deck`.
    """
    copy_assets(static)
    exp = exporter()
    return [write_deck(nb, dest, static, language, exp) for dest, (nb, language) in decks.items()]


def site_decks(src: Path, site: Path, editions: dict[str, tuple[str, list[str]]]) -> list[Path]:
    """The decks of the course site (tools/build_site.py): for each edition, ``language -> (its folder in
    the site, its notebooks)``, the decks of its notebooks in ``site/<folder>/slides/`` (English
    ``site/slides/``, Chinese ``site/zh/slides/``), the assets once in ``site/slides/_static/``.

    Reads ``src/NN_name.ipynb`` (executed) and, for a translated edition, the catalogues of tools/i18n.py.

    Raises:
        SlidesError: see :func:`write_decks`; or a notebook of ``editions`` has no complete translation.
    """
    decks = {}
    for language, (folder, stems) in editions.items():
        notebooks, left = edition_decks(Path(src), stems, language)
        if left:
            raise SlidesError(f"no complete {EDITIONS[language].label} translation of {', '.join(left)}")
        for stem, nb in notebooks.items():
            decks[site / folder / "slides" / deck_name(stem)] = (nb, language)
    return write_decks(decks, site / "slides" / STATIC)


def is_decks_folder(out: Path) -> bool:
    """Whether ``out`` is missing, empty, or holds only what :func:`build` writes."""
    if not out.exists():
        return True
    return all(p.name in (STATIC, "zh") or p.name.endswith(".slides.html") for p in out.iterdir())


def build(src: Path = REPO_ROOT / "notebooks", out: Path = REPO_ROOT / "build" / "slides",
          stems: list[str] | None = None, languages: tuple[str, ...] = ("en", "zh_CN")) -> dict[str, list[Path]]:
    """Write the decks of the executed notebooks ``src/NN_name.ipynb`` into ``out``, replaced as a whole (see
    the module docstring): ``out/NN_name.slides.html``, ``out/<folder>/NN_name.slides.html`` for each other
    edition of ``languages`` (``zh/``), ``out/_static/``.

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
        folder = tmp / EDITIONS[language].folder
        written[language] = [out / EDITIONS[language].folder / deck_name(stem) for stem in notebooks]
        decks.update({folder / deck_name(stem): (nb, language) for stem, nb in notebooks.items()})
    try:
        write_decks(decks, tmp / STATIC)
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
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "slides",
                        help="the decks' folder, replaced whole (default build/slides/)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    stems = [p.stem for p in plumbing.series_notebooks()]
    try:
        written = build(args.src, args.out, stems)
    except SlidesError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{len(decks)} in {EDITIONS[lang].label}" for lang, decks in written.items())
    print(f"decks written in {args.out}: {counts} ({time.perf_counter() - start:.1f} s); open "
          f"{args.out / deck_name(stems[0])} (arrow keys: right for the next section, down for its steps)")
    for lang, decks in written.items():
        left = [stem for stem in stems if args.out / EDITIONS[lang].folder / deck_name(stem) not in decks]
        if left:
            print(f"note: no {EDITIONS[lang].label} deck of {', '.join(left)}, whose translation is incomplete "
                  "(python tools/i18n.py check)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
