"""The course site of `make html` (tools/build_site.py, tools/book/), checked as files and in a real headless Chromium.

The site is built into a temporary folder from executed notebooks: ``build/`` when it holds an executed
copy of every notebook of the series as it is now (after `make run`), else the committed notebooks in notebooks/
(they carry their outputs; one without the run metadata that tools/run_notebooks.py records gets the
stand-in's, which is what `make refresh` runs on). LLAMA3_SITE_SRC=folder picks the folder. site/ and
build/ are left alone, except for the screenshots written to build/site-screenshots/ for a person to
look at.

In Chromium every page is loaded from file:// and from a static server on 127.0.0.1 (the one
`python -m http.server` runs): no request may fail or leave the site, the mathematics must be typeset
by the local MathJax (no raw TeX left, no MathJax error), every image must have loaded, the sidebar
must list every notebook of the series, and search must find the RoPE notebook for "rotary". Exercise
solutions and deep dives must be collapsed, and each page's weights banner must come from its
notebook's metadata.

The Chinese edition (site/zh/, built from the same executed notebooks with their markdown translated
by tools/i18n.py) is held to the same checks: its sidebar lists every translated notebook (and the
errata page when docs/errata.zh-CN.md exists), Sphinx's own words are Chinese, each page links to its
English counterpart and back, and search finds the RoPE notebook for the Chinese word 旋转 (rotation;
Sphinx indexes Chinese without a dictionary through tools/book/search_zh.py, by pairs of characters). Chromium is found on PATH (chromium, chromium-browser, google-chrome) or
given as LLAMA3_CHROMIUM=path. Without it (a learner's laptop) the browser tests are skipped with the
reason; when the environment variable CI is set they fail instead.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import threading
import time
import warnings
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest

import build_site
import i18n
import plumbing
import run_notebooks

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "site-screenshots"
HOME = ROOT / "notebooks"  # where the notebooks live: their ../images/ paths are relative to it
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
STEMS = [p.stem for p in plumbing.series_notebooks()]
ZH = build_site.EDITIONS["zh_CN"].folder  # the Chinese edition's folder in the site
ERRATA = {lang: build_site.errata_page(build_site.DOCS, e) is not None for lang, e in build_site.EDITIONS.items()}


def unavailable(reason: str):
    """Skip with ``reason``, visibly (also as a warning); fail instead when CI is set."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason}. CI is set, so the tests of the HTML site must run.")
    warnings.warn(f"test of the HTML site skipped: {reason}", stacklevel=2)
    pytest.skip(reason)


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
    cell = nbformat.v4.new_code_cell(source, execution_count=n,
                                     outputs=[nbformat.v4.new_output("stream", name="stdout", text=output)])
    if tags:
        cell.metadata = {"tags": list(tags), "jupyter": {"source_hidden": True}}
    return cell


def tiny_notebook(title: str = "01 · A tiny page", markdown: str = "Some maths: $x^2$.") -> nbformat.NotebookNode:
    """An executed notebook with the series' parts: exercises with a solution, deep dives."""
    md = nbformat.v4.new_markdown_cell
    solution_md = md("<details>\n<summary>Solution</summary>\n\n**Solution.** The answer is forty-two.\n\n</details>")
    solution_md.metadata = {"tags": ["solution"]}
    nb = nbformat.v4.new_notebook(cells=[
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
    ])
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["llama3"] = {"weights": "standin", "weights_description": "synthetic stand-in (test)",
                             "prompt": plumbing.DEFAULT_PROMPT}
    return nb


# --------------------------------------------------------------------------- building


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Path:
    """Copies of the executed notebooks of the series, each with the ``llama3`` run metadata."""
    src, dest = source_folder(), tmp_path_factory.mktemp("executed")
    if not STEMS:
        pytest.fail("the series has no notebooks (notebooks/NN_*.ipynb)")
    standin = run_notebooks.run_metadata({k: v for k, v in os.environ.items() if k not in ("LLAMA3_DIR", "LLAMA3_PROMPT")})
    for stem in STEMS:
        nb = nbformat.read(src / f"{stem}.ipynb", as_version=4)
        nb.metadata.setdefault("llama3", standin)  # committed notebooks are run on the stand-in (make refresh)
        nbformat.write(nb, dest / f"{stem}.ipynb")
    return dest


@pytest.fixture(scope="module")
def site(executed, tmp_path_factory) -> Path:
    """The site, both editions, built from the series in a temporary folder; prints its size and export time."""
    out = tmp_path_factory.mktemp("site") / "site"
    start = time.perf_counter()
    editions = build_site.build_editions(executed, out, home=HOME)
    seconds = time.perf_counter() - start
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"\nsite: {len(editions['en'])} English pages and {len(editions['zh_CN'])} Chinese, "
          f"{size / 2**20:.1f} MiB, exported in {seconds:.1f} s")
    return out


@pytest.fixture(scope="module")
def zh_stems(executed) -> list[str]:
    """The notebooks in the Chinese edition: those whose translation is complete (all, once translated)."""
    return build_site.translated(executed, STEMS, "zh_CN")


@pytest.fixture(scope="module")
def tiny_site(tmp_path_factory) -> Path:
    """A site of one tiny notebook with a solution and deep dives (every series notebook may lack them)."""
    folder = tmp_path_factory.mktemp("tiny")
    nbformat.write(tiny_notebook(), folder / "01_tiny.ipynb")
    out = folder / "site"
    build_site.build(folder, out, home=folder, stems=["01_tiny"], docs=None)
    return out


def page_names(stems: list[str] = STEMS, errata: bool = False, folder: str = "") -> list[str]:
    """The pages of an edition, relative to the site's root (``folder``: the edition's folder in it)."""
    names = ["index.html"] + [f"notebooks/{stem}.html" for stem in stems] + (["docs/errata.html"] if errata else [])
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


def sidebar(page: Path) -> list[str]:
    """The links of the page's sidebar (the current page's own link, ``#``, as its file name)."""
    nav = re.search(r'<nav class="[^"]*\bbd-docs-nav\b.*?</nav>', page.read_text(encoding="utf-8"), flags=re.S)
    links = re.findall(r'<a class="[^"]*\breference internal\b[^"]*" href="([^"]*)"', nav[0] if nav else "")
    return [page.name if h == "#" else h for h in links]


def has_math(stem: str, folder: Path) -> bool:
    nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
    return any("$" in c.source for c in nb.cells if c.cell_type == "markdown")


# --------------------------------------------------------------------------- as files


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_every_page_has_sidebar_contents_prev_next_and_download(site, executed, zh_stems, lang):
    stems, root = (STEMS, site) if lang == "en" else (zh_stems, site / ZH)
    errata = ["../docs/errata.html"] if ERRATA[lang] else []
    for i, stem in enumerate(stems):
        page = root / "notebooks" / f"{stem}.html"
        found = tags(page)
        assert sidebar(page) == ["../index.html"] + [f"{s}.html" for s in stems] + errata, \
            f"{stem}: the sidebar does not list the series in order (then the errata page)"
        rel = {a["rel"]: a["href"] for t, a in found if t == "link" and a.get("rel") in ("prev", "next")}
        assert rel.get("prev") == ("../index.html" if i == 0 else f"{stems[i - 1]}.html"), stem
        assert rel.get("next") == (f"{stems[i + 1]}.html" if i + 1 < len(stems) else (errata or [None])[0]), stem
        download = [a["href"] for t, a in found if t == "a" and "btn-download-source-button" in a.get("class", "")]
        assert download == [f"../_sources/notebooks/{stem}.ipynb"], f"{stem}: no download link for the notebook"
        served = (page.parent / download[0]).read_bytes()
        if lang == "en":
            assert served == (executed / f"{stem}.ipynb").read_bytes()
        else:  # the translated notebook, its images in the site's layout (notebooks/ beside images/)
            expected = nbformat.writes(build_site.edition_notebook(executed / f"{stem}.ipynb", lang)) + "\n"
            assert served.decode("utf-8") == expected
        toc = re.search(r'<nav id="pst-page-toc-nav".*?</nav>', page.read_text(encoding="utf-8"), flags=re.S)
        assert toc and toc[0].count('href="#') >= 2, f"{stem}: no contents list for the page"


def edition_links(page: Path) -> list[str]:
    """The page's links to the other edition (tools/book/editions.py)."""
    return [a["href"] for t, a in tags(page) if t == "a" and "llama3-edition-link" in a.get("class", "")]


def test_each_page_links_to_its_counterpart_in_the_other_edition(site, zh_stems):
    english = page_names(STEMS, ERRATA["en"])
    chinese = page_names(zh_stems, ERRATA["zh_CN"], ZH)
    for name in english + chinese + ["search.html", f"{ZH}/search.html"]:
        page = site / name
        links = edition_links(page)
        assert len(links) == 1, f"{name}: links to the other edition: {links}"
        target = (page.parent / links[0]).resolve()
        assert target.is_file(), f"{name}: the link {links[0]} to the other edition leads nowhere"
        inside = name.removeprefix(f"{ZH}/")
        other = f"{ZH}/{inside}" if name == inside else inside
        if other in english + chinese:  # the same page there, else that edition's home page
            assert target == (site / other).resolve(), f"{name}: links to {links[0]}, not to its counterpart {other}"
        else:
            assert target.name == "index.html", f"{name}: links to {links[0]}"
    assert "中文版" in (site / "index.html").read_text(encoding="utf-8")
    assert ">English</a>" in (site / ZH / "index.html").read_text(encoding="utf-8")


def test_the_chinese_edition_speaks_chinese(site, zh_stems):
    index = (site / ZH / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in index and "搜索" in index, "Sphinx's and the theme's words are not Chinese"
    left_out = [s for s in STEMS if s not in zh_stems]
    assert ("尚未收入中文版" in index) == bool(left_out)
    assert all(f"../notebooks/{s}.html" in index for s in left_out), "the home page does not name what is left out"
    for stem in zh_stems:
        html = (site / ZH / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
        assert '<html lang="zh-CN"' in html and "本页在合成替身权重" in html, f"{stem}: banner not in Chinese"
        assert "Show the" not in html, f"{stem}: English words of the site's own toggles on a Chinese page"


def test_nothing_is_loaded_from_outside_the_site(site):
    for page in sorted(site.rglob("*.html")):
        for tag, attrs in tags(page):
            url = attrs.get("src") or (attrs.get("href") if tag == "link" else None)
            if not url or url.startswith(("data:", "#")):
                continue
            assert not re.match(r"[a-z]+:|//", url), f"{page.relative_to(site)}: <{tag}> loads {url[:80]} from outside"
            target = (page.parent / url.split("#")[0].split("?")[0]).resolve()
            assert target.is_file(), f"{page.relative_to(site)}: <{tag}> loads {url}, which is not in the site"
    assert (site / "_static" / "mathjax" / "tex-svg-full.js").is_file() and (site / "_static" / "mathjax" / "LICENSE").is_file()


def test_banner_comes_from_the_notebook_metadata(executed, tmp_path):
    """Each page's banner follows its metadata, not the printed text (which this test makes say the opposite)."""
    runs = ["meta", "hf"] + ["standin"] * (len(STEMS) - 2)
    src = tmp_path / "runs"
    src.mkdir()
    for stem, weights in zip(STEMS, runs):
        nb = nbformat.read(executed / f"{stem}.ipynb", as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                if out.output_type == "stream":
                    out.text = re.sub(r"^weights: .*$", "weights: something else entirely", out.text, flags=re.M)
        nb.metadata["llama3"] = {"weights": weights, "weights_description": f"described as {weights}",
                                 "prompt": "a prompt of my own" if stem == STEMS[-1] else plumbing.DEFAULT_PROMPT}
        nbformat.write(nb, src / f"{stem}.ipynb")
    out = build_site.build(src, tmp_path / "site", home=HOME)
    index = out[0].read_text(encoding="utf-8")
    assert 'data-weights="site"' in index and f"{len(STEMS) - runs.count('standin')} of {len(STEMS)}" in index
    for page, weights in zip(out[1:], runs):
        html = page.read_text(encoding="utf-8")
        assert len(re.findall(r'class="llama3-banner ', html)) == 1, page.name
        assert f'data-weights="{weights}"' in html, f"{page.name}: banner is not for {weights}"
        assert (f"described as {weights}" in html) == (weights != "standin"), page.name
        assert ("a prompt of my own" in html) == (page.stem == STEMS[-1]), page.name


def test_a_notebook_without_run_metadata_stops_the_build(tmp_path):
    nb = tiny_notebook()
    del nb.metadata["llama3"]
    nbformat.write(nb, tmp_path / "01_tiny.ipynb")
    with pytest.raises(build_site.SiteError, match="llama3"):
        build_site.build(tmp_path, tmp_path / "site", home=tmp_path, stems=["01_tiny"], docs=None)


def test_missing_or_remote_images_and_missing_notebooks_stop_the_build(tmp_path):
    for src, message in [("../images/no_such.png", "missing or empty"), ("https://example.org/x.png", "remote")]:
        folder = tmp_path / message.split()[0]
        folder.mkdir()
        nbformat.write(tiny_notebook(markdown=f"![x]({src})"), folder / "01_tiny.ipynb")
        with pytest.raises(build_site.SiteError, match=message):
            build_site.build(folder, tmp_path / f"site_{folder.name}", home=folder, stems=["01_tiny"], docs=None)
    (tmp_path / "series").mkdir()
    nbformat.write(tiny_notebook(), tmp_path / "series" / "01_tiny.ipynb")
    with pytest.raises(build_site.SiteError, match="02_absent.ipynb is missing: run `make run`"):
        build_site.build(tmp_path / "series", tmp_path / "site_x", home=tmp_path, stems=["01_tiny", "02_absent"], docs=None)


def test_solutions_and_deep_dives_are_collapsed_in_the_html(site, executed, tiny_site, zh_stems):
    html = (tiny_site / "notebooks" / "01_tiny.html").read_text(encoding="utf-8")
    closed = re.findall(r"<details(?![^>]*\bopen\b)[^>]*>.*?</details>", html, flags=re.S)
    for text in ("answer printed by the solution: 42", "The answer is forty-two", "answer of a solution without prose",
                 "Text of the first deep dive", "output of a deep-dive cell", "Text of the second deep dive"):
        assert any(text in block for block in closed), f"{text!r} is not inside a closed <details>"
    assert "setup done" not in "".join(closed)
    for stem in STEMS:  # the series: as many collapsed solutions as solution cells, deep dives in one box
        nb = nbformat.read(executed / f"{stem}.ipynb", as_version=4)
        page = (site / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
        solutions = sum("solution" in c.metadata.get("tags", []) for c in nb.cells if c.cell_type == "code")
        assert page.count("Show the solution") >= solutions, stem
        dives = any(re.search(r"^## Deep dives\s*$", c.source, re.M) for c in nb.cells if c.cell_type == "markdown")
        assert page.count('<details class="llama3-deep-dives">') == dives, stem
        if stem in zh_stems:  # the Chinese page: the same, in Chinese words
            page = (site / ZH / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
            assert page.count("显示解答") >= solutions, f"{stem} in Chinese"
            assert page.count('<details class="llama3-deep-dives">') == dives, f"{stem} in Chinese: deep dives not folded"


#: the tiny notebook's markdown in Chinese, as a translator would write it (headings as notebooks/zh/README.md says)
TINY_ZH = {
    "# 01 · A tiny page\n\nSome maths: $x^2$.": "# 01 · 一个小页面\n\n一些数学：$x^2$。",
    "## Exercises\n\n**Exercise 1.** What is six times seven?": "## 练习\n\n**练习 1。** 六乘七等于多少？",
    "<details>\n<summary>Solution</summary>\n\n**Solution.** The answer is forty-two.\n\n</details>":
        "<details>\n<summary>解答</summary>\n\n**解答。** 答案是四十二。\n\n</details>",
    "**Exercise 2.** And six times eight?": "**练习 2。** 六乘八呢？",
    "## Deep dives\n\n### Why anyone would read this\n\nText of the first deep dive.":
        "## 深入探讨 · Deep dives\n\n### 为什么要读这一节\n\n第一个深入探讨的文字。",
    "### A second one\n\nText of the second deep dive.": "### 第二个\n\n第二个深入探讨的文字。",
}


@pytest.fixture(scope="module")
def tiny_editions(tmp_path_factory) -> Path:
    """Both editions of a tiny series: 01_tiny translated, 02_tiny not; errata pages in both languages."""
    folder = tmp_path_factory.mktemp("tiny_editions")
    nbformat.write(tiny_notebook(), folder / "01_tiny.ipynb")
    nbformat.write(tiny_notebook(title="02 · Another tiny page"), folder / "02_tiny.ipynb")
    docs = folder / "docs"
    docs.mkdir()
    (docs / "errata.md").write_text("# Errata\n\n中文版：[errata.zh-CN.md](errata.zh-CN.md)\n\nSee [the tiny page]"
                                    "(../notebooks/01_tiny.ipynb) and [the README](../README.md).\n", encoding="utf-8")
    (docs / "errata.zh-CN.md").write_text("# 勘误\n\nEnglish: [errata.md](errata.md)\n\n见[小页面](../notebooks/zh/01_tiny.ipynb)和\n"
                                          "这一行。\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(i18n, "LOCALE_DIR", folder / "locale")
        catalogue = i18n.extract(folder / "01_tiny.ipynb")
        for message in catalogue:
            if message.id:
                message.string = TINY_ZH[message.id]
        i18n.write_catalogue(catalogue, i18n.catalogue_path(folder / "01_tiny.ipynb"))
        i18n.write_catalogue(i18n.extract(folder / "02_tiny.ipynb"), i18n.catalogue_path(folder / "02_tiny.ipynb"))
        out = folder / "site"
        build_site.build_editions(folder, out, home=folder, stems=["01_tiny", "02_tiny"], docs=docs)
    return out


def test_a_tiny_chinese_edition(tiny_editions):
    """Translated headings and folds still collapse, in Chinese words; what is not translated is left out."""
    zh = tiny_editions / ZH
    html = (zh / "notebooks" / "01_tiny.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in html and "一个小页面" in html
    closed = re.findall(r"<details(?![^>]*\bopen\b)[^>]*>.*?</details>", html, flags=re.S)
    for text in ("答案是四十二", "answer printed by the solution: 42", "answer of a solution without prose",
                 "第一个深入探讨的文字", "output of a deep-dive cell", "第二个深入探讨的文字"):
        assert any(text in block for block in closed), f"{text!r} is not inside a closed <details>"
    assert html.count("显示解答") == 2 and "Show the solution" not in html
    assert html.count('<details class="llama3-deep-dives">') == 1 and "展开深入探讨" in html
    assert "本页在合成替身权重" in html
    assert sidebar(zh / "notebooks" / "01_tiny.html") == ["../index.html", "01_tiny.html", "../docs/errata.html"]
    assert not (zh / "notebooks" / "02_tiny.html").exists()
    index = (zh / "index.html").read_text(encoding="utf-8")
    assert "尚未收入中文版" in index and 'href="../notebooks/02_tiny.html"' in index
    assert edition_links(tiny_editions / "notebooks" / "02_tiny.html") == ["../zh/index.html"]
    assert edition_links(tiny_editions / "notebooks" / "01_tiny.html") == ["../zh/notebooks/01_tiny.html"]
    assert edition_links(zh / "notebooks" / "01_tiny.html") == ["../../notebooks/01_tiny.html"]
    # the errata pages: after the notebooks, linked to each other, their links to notebooks in their own edition
    assert sidebar(tiny_editions / "notebooks" / "02_tiny.html")[-1] == "../docs/errata.html"
    en_errata = (tiny_editions / "docs" / "errata.html").read_text(encoding="utf-8")
    zh_errata = (zh / "docs" / "errata.html").read_text(encoding="utf-8")
    assert 'href="../zh/docs/errata.html"' in en_errata and 'href="../../docs/errata.html"' in zh_errata
    assert 'href="../notebooks/01_tiny.html"' in en_errata and 'href="../notebooks/01_tiny.html"' in zh_errata
    assert "the README (<code" in en_errata  # a repository file that is no page: its name, not a broken link
    assert "</a>和这一行。" in zh_errata  # a line break between Chinese characters is no space


# --------------------------------------------------------------------------- in Chromium


@pytest.fixture(scope="module")
def browser():
    exe = os.environ.get("LLAMA3_CHROMIUM") or next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)
    if exe is None:
        unavailable(f"no Chromium found (looked for {', '.join(CHROMIUM_NAMES)}, or LLAMA3_CHROMIUM=path); "
                    "on Debian: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed (pip install -r requirements.txt)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(site):
    """``python -m http.server``'s handler serving the site on 127.0.0.1; yields the base URL."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/"
    httpd.shutdown()
    httpd.server_close()


READY = """() => document.documentElement.dataset.math
  || (!document.querySelector('script[src*="mathjax"]') && document.readyState === 'complete')"""

PAGE_STATE = """() => {
  const skip = 'pre, code, script, style, mjx-container, .cell_input, .cell_output';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT,
    {acceptNode: n => n.parentElement.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  let text = '';
  while (walker.nextNode()) text += walker.currentNode.data + ' ';
  return {
    math: document.documentElement.dataset.math || 'no maths on the page',
    rendered: document.querySelectorAll('mjx-container svg').length,
    errors: Array.from(document.querySelectorAll('mjx-container svg [data-mjx-error]')).map(e => e.dataset.mjxError),
    rawTeX: (text.match(/\\$\\$[^]*?\\$\\$|\\$[^$\\n]*\\\\[a-zA-Z]+[^$\\n]*\\$|\\\\(begin|frac)\\{/g) || []).slice(0, 3),
    images: Array.from(document.images).map(i => ({src: i.src.slice(0, 80), ok: i.complete && i.naturalWidth > 0})),
    sidebar: Array.from(document.querySelectorAll('nav.bd-docs-nav a.reference.internal'))
      .map(a => new URL(a.getAttribute('href'), location.href).pathname.split('/').pop()),
    banners: Array.from(document.querySelectorAll('.llama3-banner')).map(b => b.dataset.weights),
  };
}"""


def open_page(browser, base: str, name: str, shot: Path | None = None, stems: list[str] = STEMS):
    """Open ``base + name``; return (problems, state): what is wrong with it (see the module docstring).

    ``stems``: the notebooks that the sidebar must list, in order (the edition's).
    """
    from playwright.sync_api import Error as PlaywrightError

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    outside, failed, errors = [], [], []
    context.route(re.compile(r"^(https?|wss?)://"),
                  lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
    page = context.new_page()
    page.on("request", lambda r: r.url.startswith((base, "data:", "blob:")) or outside.append(r.url))
    page.on("requestfailed", lambda r: failed.append(f"{r.url[:100]}: {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.url[:100]}: HTTP {r.status}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        page.goto(base + name, wait_until="load")
        page.wait_for_function(READY, timeout=20_000)
        page.wait_for_load_state("networkidle")  # late requests (icons, fonts) count too
        state = page.evaluate(PAGE_STATE)
    except PlaywrightError as e:
        state = {"math": f"never ran ({str(e).splitlines()[0]})", "errors": [], "rawTeX": [], "rendered": 0,
                 "images": [], "sidebar": [], "banners": []}
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    context.close()
    found = [
        outside and f"requests outside the site: {outside}",
        failed and f"failed requests: {failed}",
        errors and f"errors in the page: {errors}",
        state["math"] not in ("done", "no maths on the page") and f"MathJax did not finish: {state['math']}",
        state["errors"] and f"MathJax errors (bad TeX in a markdown cell?): {state['errors']}",
        state["rawTeX"] and f"TeX left untypeset: {state['rawTeX']}",
        [i["src"] for i in state["images"] if not i["ok"]] and
        f"images that did not load: {[i['src'] for i in state['images'] if not i['ok']]}",
        [n for n in state["sidebar"] if re.match(r"\d\d_", n)] != [f"{s}.html" for s in stems]
        and f"the sidebar lists {state['sidebar']}",
    ]
    return [f"{base}{name}: {f}" for f in found if f], state


def check_every_page(browser, base: str, site: Path, executed: Path, shots: Path | None,
                     stems: list[str] = STEMS, lang: str = "en") -> list[str]:
    """Open every page of an edition (``stems``: its notebooks); what is wrong with them."""
    found = []
    folder = build_site.EDITIONS[lang].folder
    prefix = f"{folder}_" if folder else ""
    for name in page_names(stems, ERRATA[lang], folder):
        stem = Path(name).stem
        shot = shots / (f"{prefix}00_{stem}.png" if stem in ("index", "errata") else f"{prefix}{stem}.png") if shots else None
        problems, state = open_page(browser, base, name, shot, stems)
        found += problems
        if stem in stems:
            if has_math(stem, executed) and not state["rendered"]:
                found.append(f"{base}{name}: the page has mathematics but none was typeset")
            run = json.loads((executed / f"{stem}.ipynb").read_text(encoding="utf-8"))["metadata"]["llama3"]
            if state["banners"] != [run["weights"]]:
                found.append(f"{base}{name}: banners {state['banners']}, but the notebook ran on {run['weights']}")
    return found


def test_every_page_from_disk(browser, site, executed, zh_stems):
    found = check_every_page(browser, site.as_uri() + "/", site, executed, None)
    found += check_every_page(browser, site.as_uri() + "/", site, executed, None, zh_stems, "zh_CN")
    assert not found, "\n".join(found)


def test_every_page_from_a_local_server(browser, server, site, executed, zh_stems):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    found = check_every_page(browser, server, site, executed, SHOTS)
    found += check_every_page(browser, server, site, executed, SHOTS, zh_stems, "zh_CN")
    assert not found, "\n".join(found)
    assert all((SHOTS / f"{s}.png").stat().st_size > 0 for s in STEMS)
    assert all((SHOTS / f"{ZH}_{s}.png").stat().st_size > 0 for s in zh_stems)


@pytest.mark.parametrize("where", ["disk", "server"])
@pytest.mark.parametrize("lang, query", [("en", "rotary"), ("zh_CN", "旋转")])
def test_search_finds_the_rope_notebook(browser, site, server, where, lang, query, zh_stems):
    rope = [s for s in STEMS if s.endswith("_rope")]
    assert rope, f"no RoPE notebook (NN_rope) in the series {STEMS}"
    if lang != "en" and rope[0] not in zh_stems:
        pytest.fail(f"{rope[0]} is not in the Chinese edition: its translation is incomplete (python tools/i18n.py check)")
    folder = build_site.EDITIONS[lang].folder
    base = (site.as_uri() + "/" if where == "disk" else server) + (f"{folder}/" if folder else "")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    failed = []
    page.on("requestfailed", lambda r: failed.append(f"{r.url[:100]}: {r.failure}"))
    page.on("pageerror", lambda e: failed.append(str(e)))
    page.on("console", lambda m: m.type == "error" and failed.append(m.text))
    page.goto(base + f"search.html?q={query}", wait_until="load")
    page.wait_for_function("document.querySelector('#search-results .search-summary, #search-results p')", timeout=20_000)
    hits = page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(a => a.getAttribute('href'))")
    if where == "server":
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"search_{lang}.png"), full_page=True)
    context.close()
    assert any(h.split("#")[0].endswith(f"notebooks/{rope[0]}.html") for h in hits), f"search for {query!r} found {hits}"
    assert not failed, failed


def test_the_language_links_work_both_ways(browser, server, zh_stems):
    """From an English notebook to its Chinese page and back, and between the home pages, by clicking."""
    stem = zh_stems[-1] if zh_stems else None
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    walks = [("index.html", f"{ZH}/index.html")] + ([(f"notebooks/{stem}.html", f"{ZH}/notebooks/{stem}.html")] if stem else [])
    for english, chinese in walks:
        page.goto(server + english, wait_until="load")
        page.locator("a.llama3-edition-link").click()
        page.wait_for_load_state("load")
        assert page.url == server + chinese and page.evaluate("document.documentElement.lang") == "zh-CN", page.url
        page.locator("a.llama3-edition-link").click()
        page.wait_for_load_state("load")
        assert page.url == server + english and page.evaluate("document.documentElement.lang") == "en", page.url
    context.close()
    assert stem, "no notebook is in the Chinese edition (python tools/i18n.py check)"


def assert_collapsed_until_opened(browser, page_path: Path, hidden: list[str], show: str) -> None:
    """On the page, ``hidden`` texts stay hidden until the deep dives and each of two solution toggles are opened."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(page_path.as_uri(), wait_until="load")
    page.wait_for_function(READY, timeout=20_000)
    assert page.get_by_text("setup done").is_visible()
    assert [t for t in hidden if page.get_by_text(t).is_visible()] == []
    toggles = page.locator("summary", has_text=show)
    assert toggles.count() == 2, "one toggle per solution: prose and code together, or code alone"
    page.locator("details.llama3-deep-dives > summary").click()
    for i in range(toggles.count()):
        toggles.nth(i).click()
    assert [t for t in hidden if not page.get_by_text(t).is_visible()] == []
    context.close()


def test_solutions_and_deep_dives_are_collapsed_in_the_browser(browser, tiny_site):
    assert_collapsed_until_opened(browser, tiny_site / "notebooks" / "01_tiny.html",
                                  ["answer printed by the solution: 42", "The answer is forty-two",
                                   "answer of a solution without prose", "Text of the first deep dive",
                                   "output of a deep-dive cell"], "Show the solution")


def test_translated_solutions_and_deep_dives_are_collapsed_in_the_browser(browser, tiny_editions):
    assert_collapsed_until_opened(browser, tiny_editions / ZH / "notebooks" / "01_tiny.html",
                                  ["answer printed by the solution: 42", "答案是四十二", "answer of a solution without prose",
                                   "第一个深入探讨的文字", "output of a deep-dive cell"], "显示解答")
