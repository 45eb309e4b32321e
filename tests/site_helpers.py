"""What the site tests share: the executed series, the built site (both editions), tiny series and page parsers.

tests/site/test_site.py checks the site as files; tests/site/test_site_browser.py in headless Chromium. The fixtures that build
the sites are in tests/conftest.py (session-scoped: one build for both modules).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import warnings
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from tools import build_site
from tools import i18n
from tools import pdf_print
import plumbing

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "site-screenshots"
HOME = ROOT / "notebooks"  # where the notebooks live: their ../images/ paths are relative to it
STEMS = [p.stem for p in plumbing.series_notebooks()]
ZH = build_site.EDITIONS["zh_CN"].folder  # the Chinese edition's folder in the site
#: each edition's pages of docs/ (the errata page, the instructor guide) that the repository has, in the sidebar's order
DOC_PAGES = {lang: list(build_site.doc_pages(build_site.DOCS, e)) for lang, e in build_site.EDITIONS.items()}
#: the repository's address, read where it is written (the site's configuration reads it there too)
REPOSITORY = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"].rstrip("/")
#: each edition's notebooks in the repository: notebooks/ and, for Chinese, where tools/i18n.py writes them
NOTEBOOK_FOLDERS = {
    lang: (HOME if lang == "en" else i18n.edition_path(HOME / "x.ipynb", lang).parent).relative_to(ROOT).as_posix()
    for lang in build_site.EDITIONS
}
#: in the browser: MathJax has typeset the page (tools/book/mathjax-config.js sets ``data-math``), or it has no maths
READY = """() => document.documentElement.dataset.math
  || (!document.querySelector('script[src*="mathjax"]') && document.readyState === 'complete')"""


def unavailable(reason: str):
    """Skip with ``reason``, visibly (also as a warning); fail instead when CI is set."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason}. CI is set, so the tests of the HTML site must run.")
    warnings.warn(f"test of the HTML site skipped: {reason}", stacklevel=2)
    pytest.skip(reason)


def built(build, *args, **kwargs):
    """``build(*args, **kwargs)``, a build of the site, which prints its PDFs (tools/build_pdf.py): skipped with the
    reason when this machine has no Chromium or no Chinese font to print them with (failed when CI is set)."""
    try:
        return build(*args, **kwargs)
    except pdf_print.PrintUnavailable as e:
        unavailable(str(e))


def cells(path: Path) -> list[tuple]:
    return [(c.cell_type, c.get("id"), c.source) for c in nbformat.read(path, as_version=4).cells]


def source_folder() -> Path:
    """Where the executed notebooks come from (see the module docstring)."""
    if os.environ.get("LLAMA3_SITE_SRC"):
        return Path(os.environ["LLAMA3_SITE_SRC"]).resolve()
    build = [ROOT / "build" / f"{stem}.ipynb" for stem in STEMS]
    if all(p.is_file() and cells(p) == cells(HOME / p.name) for p in build):  # a run of the notebooks as they are now
        return ROOT / "build"
    return HOME


def code_cell(source: str, output: str, n: int, tags=()) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, execution_count=n, outputs=[nbformat.v4.new_output("stream", name="stdout", text=output)])
    if tags:
        cell.metadata = {"tags": list(tags), "jupyter": {"source_hidden": True}}
    return cell


def tiny_notebook(title: str = "01 · A tiny page", markdown: str = "Some maths: $x^2$.") -> nbformat.NotebookNode:
    """An executed notebook with the series' parts: exercises with a solution, deep dives."""
    md = nbformat.v4.new_markdown_cell
    solution_md = md("<details>\n<summary>Solution</summary>\n\n**Solution.** The answer is forty-two.\n\n</details>")
    solution_md.metadata = {"tags": ["solution"]}
    nb = nbformat.v4.new_notebook(
        cells=[
            md(f"# {title}\n\n{markdown}"),
            code_cell("print('setup')", "setup done\n", 1),
            md("## Exercises\n\n**Exercise 1.** What is six times seven?"),
            solution_md,
            code_cell("print(6 * 7)", "answer printed by the solution: 42\n", 2, tags=["solution", "hide-input"]),
            md("**Exercise 2.** And six times eight?"),
            code_cell("print(6 * 8)", "answer of a solution without prose: 48\n", 3, tags=["solution", "hide-input"]),
            md("## Deep dives\n\n### Why anyone would read this\n\nText of the first deep dive."),
            code_cell("print('deep')", "output of a deep-dive cell\n", 4),
            md("### A second one\n\nText of the second deep dive."),
        ]
    )
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["llama3"] = {"weights": "standin", "weights_description": "synthetic stand-in (test)", "prompt": plumbing.DEFAULT_PROMPT}
    return nb


# --------------------------------------------------------------------------- building


def page_names(stems: list[str] = STEMS, docs: list[str] = (), folder: str = "") -> list[str]:
    """The pages of an edition, relative to the site's root (``docs``: its pages of docs/, :data:`DOC_PAGES`;
    ``folder``: the edition's folder in it)."""
    names = ["index.html"] + [f"notebooks/{stem}.html" for stem in stems] + [f"{page}.html" for page in docs]
    return [f"{folder}/{n}" if folder else n for n in names]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def tags(page: Path) -> list[tuple[str, dict]]:
    """(tag, attributes) of every start tag in the HTML file ``page``."""
    parser = _Tags()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.found


def outside_links(page: Path) -> dict[str, list[str]]:
    """The page's links out of the site: its launch menu's (``binder``, ``colab``) and to the ``repository``
    (the header's button and the sidebar's icon link)."""
    found = {"binder": [], "colab": [], "repository": []}
    for tag, attrs in tags(page):
        classes = attrs.get("class", "").split() if tag == "a" else []
        for kind, marks in [
            ("binder", {"btn-launch-binder"}),
            ("colab", {"btn-launch-colab"}),
            ("repository", {"btn-source-repository-button", "pst-navbar-icon"}),
        ]:
            if marks & set(classes):
                found[kind].append(attrs.get("href"))
    return found


def expected_outside_links(name: str, lang: str, first: str) -> dict[str, list[str]]:
    """What :func:`outside_links` must find on the page ``name`` (relative to its edition's root) of edition
    ``lang``, whose first notebook is ``first``: a notebook page opens its notebook in the repository (the
    Chinese ones in notebooks/zh/), any other page the edition's folder of notebooks (Binder) and its first
    notebook (Colab)."""
    assert REPOSITORY.startswith("https://github.com/"), f"Colab and Binder open GitHub repositories, not {REPOSITORY}"
    owner_repo, folder = REPOSITORY.removeprefix("https://github.com/"), NOTEBOOK_FOLDERS[lang]
    stem = Path(name).stem
    notebook = f"{folder}/{stem}.ipynb" if name.startswith("notebooks/") else f"{folder}/{first}.ipynb"
    opened = notebook if name.startswith("notebooks/") else folder
    return {
        "binder": [f"https://mybinder.org/v2/gh/{owner_repo}/main?urlpath=lab/tree/{opened}"],
        "colab": [f"https://colab.research.google.com/github/{owner_repo}/blob/main/{notebook}"],
        "repository": [REPOSITORY, REPOSITORY],
    }


def sidebar(page: Path) -> list[str]:
    """The links of the page's sidebar (the current page's own link, ``#``, as its file name)."""
    nav = re.search(r'<nav class="[^"]*\bbd-docs-nav\b.*?</nav>', page.read_text(encoding="utf-8"), flags=re.S)
    links = re.findall(r'<a class="[^"]*\breference internal\b[^"]*" href="([^"]*)"', nav[0] if nav else "")
    return [page.name if h == "#" else h for h in links]


def has_math(stem: str, folder: Path) -> bool:
    nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
    return any("$" in c.source for c in nb.cells if c.cell_type == "markdown")


TINY_ZH = {
    "# 01 · A tiny page\n\nSome maths: $x^2$.": "# 01 · 一个小页面\n\n一些数学：$x^2$。",
    "## Exercises\n\n**Exercise 1.** What is six times seven?": "## 练习\n\n**练习 1。** 六乘七等于多少？",
    "<details>\n<summary>Solution</summary>\n\n**Solution.** The answer is forty-two.\n\n</details>": (
        "<details>\n<summary>解答</summary>\n\n**解答。** 答案是四十二。\n\n</details>"
    ),
    "**Exercise 2.** And six times eight?": "**练习 2。** 六乘八呢？",
    "## Deep dives\n\n### Why anyone would read this\n\nText of the first deep dive.": (
        "## 深入探讨 · Deep dives\n\n### 为什么要读这一节\n\n第一个深入探讨的文字。"
    ),
    "### A second one\n\nText of the second deep dive.": "### 第二个\n\n第二个深入探讨的文字。",
}


#: a common laptop's window, and a narrow one (the theme folds the right-hand contents into a drawer below 1200 px)
VIEWPORTS = [{"width": 1280, "height": 800}, {"width": 1024, "height": 768}]

OVERFLOW = """() => {
  const doc = document.documentElement;
  const found = [];
  if (doc.scrollWidth > doc.clientWidth + 1) found.push(`the page scrolls sideways: ${doc.scrollWidth} > ${doc.clientWidth}`);
  for (const box of document.querySelectorAll('.bd-sidebar-secondary, .bd-sidebar-secondary nav.page-toc')) {
    if (!box.checkVisibility()) continue;
    if (box.scrollWidth > box.clientWidth + 1)
      found.push(`the right-hand contents (${box.className}) scrolls sideways: ${box.scrollWidth} > ${box.clientWidth}`);
    const right = box.getBoundingClientRect().right;
    for (const a of box.querySelectorAll('a'))
      if (a.checkVisibility() && a.getBoundingClientRect().right > right + 1)
        found.push(`the entry "${a.textContent.trim().slice(0, 60)}" runs past the right-hand contents' edge`);
  }
  return {found, contents: [...document.querySelectorAll('.bd-sidebar-secondary nav.page-toc a')].filter(a => a.checkVisibility()).length};
}"""


# --------------------------------------------------------------------------- the exercises' solutions in the browser


#: the solutions' one toggle, in each edition's words (tools/book/editions.py, LABELS["show_solution"])
SHOW_SOLUTION = {"en": "Show the solution", "zh_CN": "显示解答"}
SHOW_CODE = {"en": "Show the code", "zh_CN": "显示代码"}


def solution_runs(notebook: Path) -> int:
    """The exercises' solutions of an executed notebook (cells tagged ``solution``): each starts with its prose (a
    markdown cell) or, without prose, with its first code cell; the code cells that follow belong to it, however many."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    tagged = ["solution" in c.get("metadata", {}).get("tags", []) for c in cells]
    return sum(1 for i, (c, t) in enumerate(zip(cells, tagged)) if t and (c["cell_type"] == "markdown" or i == 0 or not tagged[i - 1]))


SOLUTION_TOGGLES = """() => {
  const article = document.querySelector('article.bd-article') || document.body;
  const shown = e => !!e && e.checkVisibility();
  // every toggle on the page but the deep dives' one and the collapsed code cells' (tag hide-input, CODE_TOGGLES):
  // <details> summaries, and MyST-NB's and sphinx-togglebutton's own
  const toggles = [...article.querySelectorAll('details > summary, button.toggle-button, .toggle-details__summary')]
    .filter(s => !s.parentElement.matches('details.llama3-deep-dives, details.hide.above-input'));
  return toggles.map(s => {
    const box = s.closest('details') || s.parentElement;
    const style = getComputedStyle(s), boxStyle = getComputedStyle(box);
    return {label: s.textContent.trim(), open: box.open === true,
            style: [box.tagName, box.className, style.fontWeight, style.fontSize, style.color, style.cursor,
                    boxStyle.borderTopStyle, boxStyle.borderTopWidth].join(' | '),
            code: box.querySelectorAll('.cell_input').length, codeShown: [...box.querySelectorAll('.cell_input')].some(shown),
            outputShown: [...box.querySelectorAll('.cell_output')].some(shown)};
  });
}"""


#: the collapsed code cells' toggles (cells tagged hide-input): their words, and whether a click shows the code
CODE_TOGGLES = """() => {  // the deep dives opened first: a collapsed cell inside them shows its toggle's words then
  document.querySelectorAll('article.bd-article details.llama3-deep-dives').forEach(d => { d.open = true; });
  return [...document.querySelectorAll('article.bd-article details.hide.above-input')].map(d => ({
    label: d.querySelector('summary').innerText.trim(), codeShown: [...d.querySelectorAll('.cell_input')].some(e => e.checkVisibility())}));
}"""


def solution_toggle_problems(page, expected: int, show: str, show_code: str) -> list[str]:
    """What is wrong with the solutions' toggles of the page open in ``page`` (at a laptop's width, as loaded): one
    per solution (``expected``), each with the words ``show`` and one style, closed, and a click on each shows its
    code (and output); the collapsed code cells' toggles, with the words ``show_code``, closed until clicked. It
    leaves the solutions, the deep dives and the first collapsed code cell open."""
    before = page.evaluate(SOLUTION_TOGGLES)
    found = []
    if len(before) != expected:
        found.append(f"{len(before)} solution toggles for {expected} solutions: {[t['label'] for t in before]}")
    if {t["label"] for t in before} - {show}:
        found.append(f"toggles with other words than {show!r}: {sorted({t['label'] for t in before} - {show})}")
    if len({t["style"] for t in before}) > 1:
        found.append(f"toggles in {len({t['style'] for t in before})} styles: {sorted({t['style'] for t in before})}")
    if [t for t in before if t["open"] or t["codeShown"] or t["outputShown"]]:
        found.append("a solution is open, or its code or output shown, before a click")
    toggles = page.locator("article.bd-article details.llama3-solution > summary")
    for i in range(toggles.count()):
        toggles.nth(i).click()
    code = page.evaluate(CODE_TOGGLES)
    if [t for t in code if t["codeShown"]]:
        found.append("a collapsed code cell shows its code before a click")
    if {t["label"] for t in code} - {show_code}:
        found.append(f"collapsed code cells with other words than {show_code!r}: {sorted({t['label'] for t in code})}")
    if code:
        page.locator("article.bd-article details.hide.above-input > summary").first.click()
        if not page.evaluate(CODE_TOGGLES)[0]["codeShown"]:
            found.append("a click on a collapsed code cell's toggle shows no code")
    after = page.evaluate(SOLUTION_TOGGLES)
    hidden = [i for i, t in enumerate(after) if not (t["code"] and t["codeShown"])]
    if hidden:
        found.append(f"solutions {hidden} show no code once their toggle is clicked")
    return found
