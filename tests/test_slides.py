"""The slide decks of ``make slides`` (tools/slides.py): one slide per section of each notebook and one below it per
step, nothing of the deep dives, the solutions or the Colab cells, no nbgrader markers, every file local; and one
deck in headless Chromium (reveal.js started, MathJax rendered, nothing fetched from outside)."""

from __future__ import annotations

import html
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

import slides
from site_helpers import CHROMIUM_ARGS, CHROMIUM_NAMES, HOME, STEMS, tiny_notebook, unavailable

LANGUAGES = ("en", "zh_CN")


@pytest.fixture(scope="module")
def decks(tmp_path_factory) -> Path:
    """``make slides`` into a temporary folder: the decks of the committed notebooks, both editions."""
    out = tmp_path_factory.mktemp("slides") / "slides"
    written = slides.build(HOME, out, STEMS)
    assert [p.name for p in written["en"]] == [slides.deck_name(s) for s in STEMS]
    return out


def deck_path(decks: Path, stem: str, lang: str) -> Path:
    path = decks / slides.EDITIONS[lang].folder / slides.deck_name(stem)
    if not path.is_file():
        pytest.skip(f"no {lang} deck of {stem}: its translation is incomplete (python tools/i18n.py check)")
    return path


def source(stem: str, lang: str) -> nbformat.NotebookNode:
    """The notebook a deck is made of (the Chinese one translated as tools/slides.py translates it)."""
    nb = nbformat.read(HOME / f"{stem}.ipynb", as_version=4)
    return nb if lang == "en" else slides.edition_notebook(HOME / f"{stem}.ipynb", lang)


def core_cells(nb) -> list:
    """The cells a deck shows: before ``## Deep dives``, neither a solution nor a Colab cell."""
    deep = slides.deep_dives_start(nb.cells)
    return [c for i, c in enumerate(nb.cells) if not slides.is_skipped(c, i, deep)]


class Deck(HTMLParser):
    """A deck as nbconvert writes it: ``slides``, one list per top-level ``<section>`` of the cells (``jp-Cell``)
    on each of its vertical slides; ``headings``, (tag, words) of every h1 to h3; ``code``, the text of each
    code cell's input (Pygments' ``div.highlight.hl-<lexer>``; a code block of markdown has no ``hl-``);
    ``tags``, every start tag with its attributes."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.slides, self.headings, self.code, self.tags = [], [], [], []
        self.in_slides, self.sections, self.capture = False, 0, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = attrs.get("class", "").split()
        parent = self.tags[-1] if self.tags else ("", {})
        self.tags.append((tag, attrs))
        if tag == "div" and "slides" in classes:
            self.in_slides = True
        elif tag == "section" and self.in_slides:
            if self.sections == 0:
                self.slides.append([])
            elif self.sections == 1:
                self.slides[-1].append(0)
            self.sections += 1
        elif tag == "div" and "jp-Cell" in classes and self.slides and self.slides[-1]:
            self.slides[-1][-1] += 1
        elif self.capture is None and tag in ("h1", "h2", "h3"):
            self.capture = (tag, [])
        elif self.capture is None and tag == "pre" and any(c.startswith("hl-") for c in parent[1].get("class", "").split()):
            self.capture = ("pre", [])

    def handle_endtag(self, tag):
        if tag == "section" and self.sections:
            self.sections -= 1
        elif self.capture and tag == self.capture[0]:
            kind, parts = self.capture
            if kind == "pre":
                self.code.append("".join(parts))
            else:
                self.headings.append((kind, " ".join("".join(parts).split())))
            self.capture = None

    def handle_data(self, data):
        if self.capture:
            self.capture[1].append(data)


def read_deck(path: Path) -> Deck:
    return Deck(path.read_text(encoding="utf-8"))


def heading_text(markdown_heading: str) -> str:
    """A markdown heading's words as the deck shows them (no ``#``, no backticks)."""
    return " ".join(markdown_heading.lstrip("#").replace("`", "").split())


# --------------------------------------------------------------------------- the decks as files


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("stem", STEMS)
def test_one_slide_per_section_with_the_title_first(decks, stem, lang):
    """The title slide, then one slide per ``##`` heading of the core path in order (Before you start, Setup, the
    sections ``N. ...``, Summary, Exercises); each section's steps are slides below it, never empty."""
    deck, nb = read_deck(deck_path(decks, stem, lang)), source(stem, lang)
    cells = [c for c in core_cells(nb) if c.cell_type == "markdown"]
    sections = [heading_text(c.source.lstrip().split("\n")[0]) for c in cells if c.source.lstrip().startswith("## ")]
    title = heading_text(nb.cells[0].source.split("\n")[0])
    assert len(deck.slides) == 1 + len(sections), f"{len(deck.slides)} slides for the title and {len(sections)} sections"
    h1 = [text for kind, text in deck.headings if kind == "h1"]
    h2 = [text for kind, text in deck.headings if kind == "h2"]
    assert h1 == [title], f"the title slide shows {h1}"
    assert h2 == sections, "the sections' slides are not the notebook's ## headings, in order"
    numbered = [s for s in sections if re.match(r"\d+\. ", s)]
    assert numbered and [int(s.split(".")[0]) for s in numbered] == list(range(1, len(numbered) + 1))
    assert all(s and all(s) for s in deck.slides), f"a slide without a cell: {deck.slides}"
    assert sum(map(len, deck.slides)) > len(deck.slides), "no section has a step on a slide of its own"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("stem", STEMS)
def test_the_core_path_is_shown_and_nothing_else(decks, stem, lang):
    """Every code cell of the core path is on a slide; no code of a deep dive or of a
    solution, no deep dive's heading, no Colab cell, no solution's text."""
    path = deck_path(decks, stem, lang)
    deck, nb, text = read_deck(path), source(stem, lang), path.read_text(encoding="utf-8")
    shown = [c.strip("\n") for c in deck.code]
    core = [c.source.strip("\n") for c in core_cells(nb) if c.cell_type == "code"]
    assert shown == core, "the decks' code is not the core path's code cells, in order"
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    deep = slides.deep_dives_start(nb.cells)
    left_out = [c for i, c in enumerate(nb.cells) if slides.is_skipped(c, i, deep)]
    for cell in left_out:
        code = cell.source.strip("\n")
        if cell.cell_type == "code" and code not in core:
            assert code not in shown, f"left-out code is on a slide: {code[:80]!r}"
        for line in cell.source.split("\n"):
            if re.match(r"#{2,3} ", line):
                assert ("h2", heading_text(line)) not in deck.headings and ("h3", heading_text(line)) not in deck.headings
    assert "colab.research.google.com" not in text and "<details" not in text and "<summary" not in text


@pytest.mark.parametrize("stem", STEMS)
def test_the_figures_of_the_markdown_are_embedded(decks, stem):
    """Each figure that a core markdown cell shows (a cell attachment) is an image of the deck, embedded."""
    deck, nb = read_deck(decks / slides.deck_name(stem)), source(stem, "en")
    images = {html.unescape(a.get("alt", "")): a.get("src", "") for tag, a in deck.tags if tag == "img"}
    shown = [alt for c in core_cells(nb) if c.cell_type == "markdown"
             for alt, src in re.findall(r"!\[([^\]]*)\]\((attachment:[^)]*)\)", c.source)]
    assert shown, f"{stem} shows no figure on its slides"
    for alt in shown:
        assert images.get(alt, "").startswith("data:image/png;base64,"), f"figure {alt!r} is not embedded"


def test_every_deck_loads_only_local_files(decks):
    """Scripts, style sheets and images: relative paths to files that exist (or data: URIs); the style sheets
    import nothing from outside; reveal.js and MathJax are there once, with their licences."""
    paths = sorted(decks.rglob("*.slides.html"))
    assert len(paths) >= len(STEMS)
    for path in paths:
        for tag, attrs in read_deck(path).tags:
            url = attrs.get("src") or (attrs.get("href") if tag == "link" else None)
            if tag not in ("script", "link", "img", "source", "iframe", "video", "audio") or not url:
                continue
            assert not re.match(r"[a-z]+:|//", url) or url.startswith("data:"), f"{path.name}: <{tag}> loads {url[:80]}"
            if not url.startswith("data:"):
                assert (path.parent / url).resolve().is_file(), f"{path.name}: <{tag}> {url} is missing"
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""(@import|url\()\s*["']?(https?:)?//""", text), f"{path.name} imports from outside"
    for css in (decks / slides.STATIC).rglob("*.css"):
        for url in re.findall(r"""url\(\s*["']?([^"')]+)""", css.read_text(encoding="utf-8")):
            if url.startswith("data:"):
                continue
            assert not re.match(r"[a-z]+:|//", url), f"{css.name} loads {url}"
            assert (css.parent / url.split("#")[0].split("?")[0]).resolve().is_file(), f"{css.name}: {url} is missing"
    static = decks / slides.STATIC
    assert {p.relative_to(decks).parts[0] for p in decks.rglob("*") if p.is_file()} <= \
        {slides.STATIC, slides.EDITIONS["zh_CN"].folder, *(slides.deck_name(s) for s in STEMS)}
    assert (static / "reveal.js" / "LICENSE").is_file() and (static / "mathjax" / "LICENSE").is_file()


# --------------------------------------------------------------------------- the rules, on a tiny notebook


def test_slide_types_of_a_tiny_notebook():
    """Title and ``##`` headings start slides; a step's markdown a slide below; its code joins it; the Colab cells,
    the solutions and the deep dives are skipped; the notebook itself is left as it is."""
    nb = tiny_notebook()
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    colab = md("**Google Colab:** [open this notebook there](https://colab.research.google.com/x)")
    colab["id"] = "colab-link"
    step = code("x = 6 * 7\nprint(x)", execution_count=9)
    nb.cells[1:1] = [colab, md("## 1. A step\n\nWhy it is needed: $x = 42$."), step, md("**Check.** It is 42.")]
    before = nbformat.writes(nb)
    shown = slides.slideshow(nb)
    assert nbformat.writes(nb) == before, "slideshow() changed the notebook it was given"
    kinds = [(c.cell_type, c.metadata.slideshow.slide_type) for c in shown.cells]
    assert kinds == [("markdown", "slide"), ("markdown", "skip"), ("markdown", "slide"), ("code", "-"),
                     ("markdown", "subslide"), ("code", "-"), ("markdown", "slide"), ("markdown", "skip"),
                     ("code", "skip"), ("markdown", "-"), ("code", "skip"), ("markdown", "skip"), ("code", "skip"),
                     ("markdown", "skip")]
    assert shown.cells[3].source == "x = 6 * 7\nprint(x)"
    assert shown.metadata.title == "01 · A tiny page"


def test_a_long_markdown_cell_is_cut_between_paragraphs():
    """A cell taller than a slide becomes several, cut at blank lines only; a line ending in ``:`` stays with the
    formula it introduces, and the heading with its first paragraph; the parts hold all of the cell."""
    prose = " ".join(["A sentence of the why, long enough to fill part of a line."] * 9)
    text = (f"## 2. A long section\n\n{prose}\n\n{prose}\n\nThe formula:\n\n$$\nx = \\frac{{a}}{{b}}\n$$\n\n"
            f"{prose}\n\n```python\nprint(1)\n\nprint(2)\n```")
    parts = slides.split_markdown(text)
    assert len(parts) > 1 and "\n\n".join(parts) == text
    assert parts[0].startswith("## 2. A long section\n\nA sentence")
    assert any(p.count("The formula:\n\n$$") == 1 for p in parts), "the formula was cut from its introduction"
    assert all(p.count("```") % 2 == 0 and p.count("$$") % 2 == 0 for p in parts), "a part cuts a block in two"
    assert slides.split_markdown("## 1. Short\n\nOne paragraph.") == ["## 1. Short\n\nOne paragraph."]


def test_a_table_with_a_pipe_in_its_code_stays_a_table():
    """``<|eot_id|>`` in a table's code span is written as HTML, so that nbconvert's Markdown keeps the table."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    text = "Stop tokens:\n\n| id | name |\n| --- | --- |\n| 128009 | `<|eot_id|>`, `x` |\n\nNot `a|b` here."
    fixed = slides.table_code(text)
    assert fixed.split("\n")[4] == "| 128009 | <code>&lt;&#124;eot_id&#124;&gt;</code>, `x` |"
    assert fixed.endswith("Not `a|b` here.")
    rendered = markdown2html_mistune(fixed)
    assert "<table>" in rendered and "<td><code>&lt;|eot_id|&gt;</code>, <code>x</code></td>" in rendered


def test_clear_errors(tmp_path):
    """A missing or never-run notebook, and an output folder that holds other files, stop with a SlidesError."""
    with pytest.raises(slides.SlidesError, match="is missing"):
        slides.build(tmp_path, tmp_path / "out", ["01_tiny"])
    nb = tiny_notebook()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, tmp_path / "01_tiny.ipynb")
    with pytest.raises(slides.SlidesError, match="never executed"):
        slides.build(tmp_path, tmp_path / "out", ["01_tiny"], languages=("en",))
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(slides.SlidesError, match="refusing"):
        slides.build(tmp_path, tmp_path / "busy", ["01_tiny"], languages=("en",))
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"


# --------------------------------------------------------------------------- in Chromium


@pytest.mark.slow
def test_a_deck_in_chromium_from_disk(decks):
    """Notebook 03's deck from file://: reveal.js starts, MathJax typesets every formula without an error, the
    figures load, every slide fits the deck (shrunk a little at most, none scrolls), nothing is fetched from
    outside the folder, and the formula of section 2 is drawn on its slide."""
    exe = os.environ.get("LLAMA3_CHROMIUM") or next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)
    if exe is None:
        unavailable(f"no Chromium found (looked for {', '.join(CHROMIUM_NAMES)}, or LLAMA3_CHROMIUM=path)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed (pip install -r requirements.txt)")
    path = decks / slides.deck_name(STEMS[2])
    deck = read_deck(path)
    section = next(i for i, s in enumerate([h for k, h in deck.headings if k in ("h1", "h2")]) if s.startswith("2. "))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            requests, errors = [], []
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_function("document.documentElement.dataset.slides === 'ready'"
                                   " && document.documentElement.dataset.math", timeout=30_000)
            state = page.evaluate("""() => ({
              math: document.documentElement.dataset.math,
              ready: Reveal.isReady(),
              total: Reveal.getTotalSlides(),
              rendered: document.querySelectorAll('mjx-container svg').length,
              errors: document.querySelectorAll('mjx-container [data-mjx-error]').length,
              images: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).length,
              scrolling: document.querySelectorAll('section.llama3-scroll').length,
            })""")
            page.evaluate(f"Reveal.slide({section}, 0)")
            drawn = page.evaluate("""() => Array.from(Reveal.getCurrentSlide().querySelectorAll('mjx-container[display="true"]'))
              .map(m => m.getBoundingClientRect().width)""")
        finally:
            browser.close()
    assert not errors, errors
    assert state["math"] == "done" and state["ready"], state
    assert state["total"] == sum(map(len, deck.slides)), state
    assert state["rendered"] > 0 and state["errors"] == 0, state
    assert state["images"] == 0, f"{state['images']} images did not load"
    assert state["scrolling"] == 0, "a slide is too tall even with its text shrunk (tools/slides.py BUDGET)"
    assert drawn and all(w > 100 for w in drawn), f"section 2's formula is not drawn on its slide: widths {drawn}"
    outside = [u for u in requests if not u.startswith(("file:", "data:"))]
    assert not outside, f"fetched from outside the deck's folder: {outside}"
