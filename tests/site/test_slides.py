"""The lecture decks of ``make slides`` (tools/slides.py, cut by tools/slides_cuts.toml): speaker notes on every
slide, no setup, check or solution cell, at most ~45 words and 10 lines of code per slide, the real model's slides
saying it is not Llama 3, every file local; and every deck in headless Chromium at 1024 x 768 (nothing wider or
taller than its slide, code at least 20 px)."""

from __future__ import annotations

import html
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

import plumbing
from tools import slides
from tools import slides_cut
from tools import slides_html
from tools.pdf_print import CHROMIUM_ARGS, CHROMIUM_NAMES  # the browser and settings the PDFs are printed with
from site_helpers import HOME, STEMS, code_cell, tiny_notebook, unavailable

LANGUAGES = ("en", "zh_CN")
MAX_WORDS = 45  # the table's texts are at most about 40 words
NOT_LLAMA3 = {"en": "not Llama 3", "zh_CN": "不是 Llama 3"}


@pytest.fixture(scope="module")
def decks(tmp_path_factory) -> Path:
    """``make slides`` into a temporary folder: the decks of the committed notebooks, both editions."""
    out = tmp_path_factory.mktemp("slides") / "slides"
    written = slides.build(HOME, out, STEMS)
    assert [p.name for p in written["en"]] == [slides_html.deck_name(s) for s in STEMS]
    return out


def deck_path(decks: Path, stem: str, lang: str) -> Path:
    path = decks / slides.EDITIONS[lang].folder / slides_html.deck_name(stem)
    if not path.is_file():
        pytest.skip(f"no {lang} deck of {stem}: its translation is incomplete (python tools/i18n.py check)")
    return path


class Deck(HTMLParser):
    """A deck as nbconvert writes it: ``slides``, one dict per innermost ``<section>``: ``words`` (its text outside
    code, formulas and notes), ``code`` (each code cell's input, Pygments' ``div.hl-<lexer>``), ``notes`` (the text
    of its ``aside.notes``); ``tags``, every start tag with its attributes."""

    VOID = {"img", "br", "hr", "meta", "link", "input", "source", "col", "area", "base", "wbr"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.slides, self.tags, self.stack = [], [], []
        self.feed(text)

    def inside(self, test) -> bool:
        """Whether an open element passes ``test(tag, attrs)``."""
        return any(test(tag, attrs) for tag, attrs in self.stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag in self.VOID:
            return
        if tag == "section":
            self.slides.append({"words": [], "code": [], "notes": []})
        elif tag == "pre" and any(c.startswith("hl-") for c in (self.stack[-1][1].get("class") or "").split()):
            self.slides[-1]["code"].append("")
        self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        while any(t == tag for t, _ in self.stack):
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not self.slides or not self.inside(lambda t, a: t == "section"):
            return
        slide = self.slides[-1]
        if self.inside(lambda t, a: t == "aside"):
            slide["notes"].append(data)
        elif self.inside(lambda t, a: t == "pre") and self.code_pre():
            slide["code"][-1] += data
        elif not self.inside(lambda t, a: t in ("pre", "script", "style")):
            slide["words"].append(data)

    def code_pre(self) -> bool:
        """Whether the data being read is in a code cell's input (not an output, not markdown)."""
        return any(t == "div" and any(c.startswith("hl-") for c in (a.get("class") or "").split()) for t, a in self.stack)


def read_deck(path: Path) -> list[dict]:
    """The slides of the deck at ``path`` (sections that hold others are left out)."""
    return [s for s in Deck(path.read_text(encoding="utf-8")).slides if s["words"] or s["code"] or s["notes"]]


def words(slide: dict) -> list[str]:
    """The words a slide shows outside code, with TeX formulas counted as one word."""
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " formula ", " ".join(slide["words"]), flags=re.S)
    return text.split()


# --------------------------------------------------------------------------- the decks as files


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("stem", STEMS)
def test_every_slide_has_notes_and_little_on_it(decks, stem, lang):
    """A title slide and the table's slides; each has speaker notes, at most 10 lines of code and (English) at
    most about 45 words."""
    deck = read_deck(deck_path(decks, stem, lang))
    assert len(deck) == 1 + len(slides_cut.load_cuts()[stem]), "the deck's slides are not the title and the table's"
    for n, slide in enumerate(deck):
        title = " ".join(words(slide)[:8])
        assert "".join(slide["notes"]).strip(), f"slide {n} ({title}) has no speaker notes"
        assert all(len(c.strip("\n").split("\n")) <= slides_cut.CODE_LINES for c in slide["code"]), f"slide {n}: too much code"
        if lang == "en" and n:
            assert len(words(slide)) <= MAX_WORDS, f"slide {n} ({title}): {len(words(slide))} words"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("stem", STEMS)
def test_no_setup_check_solution_or_deep_dive_on_a_slide(decks, stem, lang):
    """Every line of code on a slide comes from a core code cell that neither sets up nor checks; no solution, no
    deep dive, no Colab cell anywhere in the deck, notes included."""
    path = deck_path(decks, stem, lang)
    nb = nbformat.read(HOME / f"{stem}.ipynb", as_version=4)
    hidden = slides_cut.left_out(nb.cells)
    allowed = [
        c.source
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and i not in hidden and not slides_cut.is_check(c) and not slides_cut.SETUP.search(c.source)
    ]
    text = path.read_text(encoding="utf-8")
    for slide in read_deck(path):
        for code in slide["code"]:
            assert not slides_cut.CHECK.search(code) and not slides_cut.SETUP.search(code), code
            for line in code.strip("\n").split("\n"):
                assert any(line.strip() in cell for cell in allowed), f"{line!r} is not from a shown code cell"
    assert "BEGIN SOLUTION" not in text and "colab.research.google.com" not in text and "<details" not in text
    deep = slides_cut.deep_dives_start(nb.cells)
    for cell in nb.cells[deep:]:
        for line in cell.source.split("\n"):
            if cell.cell_type == "markdown" and re.match(r"#{2,3} ", line):
                heading = re.escape(html.escape(line.lstrip("# ").replace("`", ""), quote=False))
                assert not re.search(rf"<h[1-6][^>]*>\s*{heading}", text), f"a deep dive's heading is in the deck: {line}"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("stem", STEMS[1:])
def test_the_real_model_is_shown_and_named(decks, stem, lang):
    """Notebooks 02 to 08 have a slide of the real model (SmolLM2), with its output or figure; every slide that shows
    it says it is not Llama 3."""
    deck = read_deck(deck_path(decks, stem, lang))
    real = [s for s in deck if "SmolLM2" in " ".join(s["words"])]
    assert real, f"{stem} has no slide of the real model"
    for slide in real:
        assert NOT_LLAMA3[lang] in " ".join(slide["words"]), "a SmolLM2 slide does not say it is not Llama 3"


def test_every_deck_loads_only_local_files(decks):
    """Scripts, style sheets and images: relative paths to files that exist (or data: URIs); reveal.js and MathJax
    are there once, with their licences."""
    paths = sorted(decks.rglob("*.slides.html"))
    assert len(paths) >= len(STEMS)
    for path in paths:
        for tag, attrs in Deck(path.read_text(encoding="utf-8")).tags:
            url = attrs.get("src") or (attrs.get("href") if tag == "link" else None)
            if tag not in ("script", "link", "img", "source", "iframe", "video", "audio") or not url:
                continue
            assert not re.match(r"[a-z]+:|//", url) or url.startswith("data:"), f"{path.name}: <{tag}> loads {url[:80]}"
            if not url.startswith("data:"):
                assert (path.parent / url).resolve().is_file(), f"{path.name}: <{tag}> {url} is missing"
    static = decks / slides_html.STATIC
    assert {p.relative_to(decks).parts[0] for p in decks.rglob("*") if p.is_file()} <= {
        slides_html.STATIC,
        slides.EDITIONS["zh_CN"].folder,
        *(slides_html.deck_name(s) for s in STEMS),
    }
    assert (static / "reveal.js" / "LICENSE").is_file() and (static / "mathjax" / "LICENSE").is_file()


# --------------------------------------------------------------------------- the rules, on a tiny notebook


def tiny() -> nbformat.NotebookNode:
    """A tiny executed notebook with cell ids: a setup section, a section with prose, code and a check."""
    nb = tiny_notebook()
    md = nbformat.v4.new_markdown_cell
    cells = [
        md("## Setup\n\nWhat setup does."),
        code_cell("inputs = plumbing.setup()", "ready\n", 5),
        md("## 1. A step\n\nWhy it is needed.\n\n$$x = 42$$"),
        code_cell("x = 6 * 7\nprint(x)", "42\n", 6),
        md("**Check.** It is 42."),
        code_cell('plumbing.check("x", x, 42)', "ok\n", 7),
    ]
    nb.cells[1:2] = cells
    for n, cell in enumerate(nb.cells):
        cell["id"] = f"c{n}"
    return nb


def test_a_tiny_deck():
    """The title slide, then the table's slides with their notes: the step's prose before its code, the check's
    sentence after it; nothing of the setup, the check cell, the solutions or the deep dives."""
    nb = tiny()
    before = nbformat.writes(nb)
    table = [
        {"title": ["The formula", "公式"], "block": "c3:3"},
        {"title": ["The code", "代码"], "text": ["Six times seven.", "六乘以七。"], "cell": "c4", "output": 1},
        {"title": ["Exercises", "练习"], "notes": ["c7"]},
    ]
    deck = slides_cut.slideshow(nb, table)
    assert nbformat.writes(nb) == before, "slideshow() changed the notebook it was given"
    kinds = [(c.cell_type, c.metadata.slideshow.slide_type) for c in deck.cells]
    assert kinds == [
        ("markdown", "slide"),
        ("markdown", "notes"),
        ("markdown", "slide"),
        ("markdown", "notes"),
        ("markdown", "slide"),
        ("code", "-"),
        ("markdown", "notes"),
        ("markdown", "slide"),
        ("markdown", "notes"),
        ("markdown", "notes"),
    ]
    assert deck.cells[2].source == "## The formula\n\n$$x = 42$$"
    assert "Why it is needed." in deck.cells[3].source and "It is 42." in deck.cells[6].source
    assert deck.cells[5].source == "x = 6 * 7\nprint(x)"
    text = nbformat.writes(deck)
    assert "What setup does" not in text and "plumbing.check" not in text and "forty-two" not in text
    assert "deep" not in text.lower() and "Exercise 2" in text
    zh = slides_cut.slideshow(nb, table, "zh_CN")
    assert zh.cells[4].source.startswith("## 代码\n\n六乘以七。")


def test_a_notebook_the_table_lacks_gets_a_slide_per_section(tmp_path):
    """Without entries in the table, a deck is the title and one slide per section shown, the prose in the notes."""
    nbformat.write(tiny(), tmp_path / "01_tiny.ipynb")
    written = slides.build(tmp_path, tmp_path / "out", ["01_tiny"], languages=("en",))
    deck = read_deck(written["en"][0])
    assert [" ".join(words(s)) for s in deck] == ["01 · A tiny page", "1. A step", "Exercises"]
    assert "Why it is needed." in "".join(deck[1]["notes"]) and "six times seven" in "".join(deck[2]["notes"])


def test_cut_code_and_outputs():
    """Lines picked and dedented, a too-wide line without its comment; outputs cut to their first lines and width."""
    source = "def f(x):\n    y = x + 1  # " + "a long comment " * 6 + "\n    return y\n"
    assert slides_cut.code_lines(source, "2-3") == "y = x + 1\nreturn y"
    assert slides_cut.code_lines(source, "1, 3") == "def f(x):\n    return y"
    out = slides_cut.cut_outputs([nbformat.v4.new_output("stream", text="a\nb\nc\n" + "x" * 200 + "\n")], 2)
    assert out[0]["text"] == "a\nb\n…\n"
    out = slides_cut.cut_outputs([nbformat.v4.new_output("stream", text="x" * 200 + "\n")], 2)
    assert out[0]["text"].endswith("…\n") and len(out[0]["text"]) <= slides_cut.CODE_CHARS + 1
    assert slides_cut.cut_outputs([nbformat.v4.new_output("stream", text="a\n")], 0) == []


def test_a_table_that_shows_what_it_may_not_is_refused():
    """A slide that names a check cell, a setup cell, a missing cell, or goes backwards: a SlidesError."""
    nb = tiny()
    for table, message in [
        ([{"title": ["c", "c"], "cell": "c6"}], "check"),
        ([{"title": ["s", "s"], "cell": "c2"}], "setup"),
        ([{"title": ["m", "m"], "cell": "nope"}], "no cell"),
        ([{"title": ["a", "a"], "cell": "c4"}, {"title": ["b", "b"], "block": "c3:2"}], "before"),
    ]:
        with pytest.raises(slides.SlidesError, match=message):
            slides_cut.slideshow(nb, table)


def test_clear_errors(tmp_path):
    """A missing or never-run notebook, and an output folder that holds other files, stop with a SlidesError."""
    with pytest.raises(slides.SlidesError, match="is missing"):
        slides.build(tmp_path, tmp_path / "out", ["01_tiny"])
    nb = tiny()
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

MEASURE = """() => {
  Reveal.configure({transition: 'none'});
  const height = Reveal.getConfig().height, scale = Reveal.getScale(), out = [];
  Reveal.getSlides().forEach((section, index) => {
    Reveal.slide(index);
    const box = section.getBoundingClientRect();
    let right = 0, bottom = 0;
    section.querySelectorAll('*').forEach(e => {
      if (e.closest('aside')) { return; }
      const b = e.getBoundingClientRect();
      if (b.width && b.height) { right = Math.max(right, b.right); bottom = Math.max(bottom, b.bottom); }
    });
    const pres = Array.from(section.querySelectorAll('pre'));
    out.push({index,
      wider: (right - box.right) / scale, taller: (bottom - box.top) / scale - height,
      scrolls: pres.filter(p => p.scrollWidth > p.clientWidth + 1).length,
      code: pres.length ? Math.min(...pres.map(p => parseFloat(getComputedStyle(p).fontSize) * scale)) : null});
  });
  return {slides: out, math: document.documentElement.dataset.math,
          errors: document.querySelectorAll('mjx-container [data-mjx-error]').length,
          images: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).length};
}"""


@pytest.mark.slow
def test_every_deck_fits_a_1024_by_768_projector(decks):
    """Every deck from file:// at 1024 x 768: reveal.js starts, MathJax typesets without an error, the figures load,
    no slide's content is wider or taller than the slide, code is at least 20 px, nothing comes from outside."""
    exe = os.environ.get("LLAMA3_CHROMIUM") or next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)
    if exe is None:
        unavailable(f"no Chromium found (looked for {', '.join(CHROMIUM_NAMES)}, or LLAMA3_CHROMIUM=path)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed (pip install -r requirements.txt)")
    problems, outside = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 768})
            page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            for path in sorted(decks.rglob("*.slides.html")):
                name = path.relative_to(decks).as_posix()
                page.goto(path.as_uri())
                page.wait_for_function(
                    "document.documentElement.dataset.slides === 'ready' && document.documentElement.dataset.math", timeout=30_000
                )
                state = page.evaluate(MEASURE)
                if state["math"] != "done" or state["errors"] or state["images"]:
                    problems.append(f"{name}: math {state['math']}, {state['errors']} errors, {state['images']} images")
                for s in state["slides"]:
                    if s["wider"] > 1 or s["taller"] > 1 or s["scrolls"]:
                        problems.append(
                            f"{name} slide {s['index']}: {s['wider']:.0f} px too wide, "
                            f"{s['taller']:.0f} px too tall, {s['scrolls']} code blocks scroll"
                        )
                    if s["code"] is not None and s["code"] < 20:
                        problems.append(f"{name} slide {s['index']}: code at {s['code']:.1f} px")
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
    assert not outside, f"fetched from outside the deck's folder: {outside}"


def test_students_decks_show_the_stubs_not_the_graded_code():
    """The students' decks (``--student``) show no line of a graded step's code of their notebook, and its stub."""
    from grader.grading import solution_region
    from grader.steps import STEPS

    cuts = slides_cut.load_cuts()
    for series in plumbing.series_notebooks():
        stem, steps = series.stem, STEPS.get(series.stem[:2], [])
        nb = slides.executed(series)
        deck = slides_cut.slideshow(slides.student_version(nb, stem, "en"), cuts[stem], "en")
        shown = {" ".join(line.split()) for c in deck.cells if c.cell_type == "code" for line in c.source.split("\n")}
        cells = {c.get("id"): c for c in nb.cells}
        solution = {" ".join(line.split()) for s in steps for line in solution_region(cells[s.cell])[0].split("\n")}
        leaked = {line for line in solution & shown if len(line) >= 12}
        assert not leaked, f"{stem}: graded code on the students' slides: {sorted(leaked)}"
        if any(s.cell in {sl.get("cell") for sl in cuts[stem]} for s in steps):
            assert any("NotImplementedError" in c.source for c in deck.cells), f"{stem}: no stub on its slides"
