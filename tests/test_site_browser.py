"""The course site in a real headless Chromium: every page from disk and from a local server, search, language links,
folded solutions (the site is the one tests/site_helpers.py builds; Chromium as tests/test_site.py's docstring says).

And a learner's rough edges: one toggle per exercise's solution, in one style, that opens its code; no page, and no
right-hand contents, scrolling sideways at a laptop's width or a narrow one; the home pages' overview figure as wide
as the text and linked to its full size; every link of the home pages' text leading to a file and element there."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import build_site

from site_helpers import SHOTS, CHROMIUM_NAMES, CHROMIUM_ARGS, STEMS, ZH, DOC_PAGES, unavailable, page_names, has_math, \
    expected_outside_links


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
    for name in page_names(stems, DOC_PAGES[lang], folder):
        stem = Path(name).stem
        shot = shots / (f"{prefix}00_{stem}.png" if stem in ("index", "errata", "instructor") else f"{prefix}{stem}.png") if shots else None
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


@pytest.mark.parametrize("name", ["notebooks/01_tiny.html", "index.html"])
def test_the_launch_menu_opens_colab_and_binder(browser, tiny_editions, name):
    """In both editions, the rocket's menu shows the Colab and Binder links and the header the repository's,
    each to the page's own notebook or folder (the Chinese ones in notebooks/zh/); nothing loads from outside."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    outside = []
    context.route(re.compile(r"^(https?|wss?)://"), lambda route: (outside.append(route.request.url), route.abort()))
    page = context.new_page()
    for lang, folder in [("en", ""), ("zh_CN", f"{ZH}/")]:
        expected = expected_outside_links(name, lang, "01_tiny")
        page.goto((tiny_editions / f"{folder}{name}").as_uri(), wait_until="load")
        page.wait_for_function(READY, timeout=20_000)
        links = {kind: page.locator(f"a.btn-launch-{kind}") for kind in ("binder", "colab")}
        assert not any(link.is_visible() for link in links.values()), f"{folder}{name}: the menu is open before a click"
        page.locator(".dropdown-launch-buttons button.dropdown-toggle").click()
        for kind, link in links.items():
            link.wait_for(state="visible", timeout=5_000)
            assert link.get_attribute("href") == expected[kind][0], f"{folder}{name}: {kind}"
            assert link.locator("img").evaluate("i => i.complete && i.naturalWidth > 0"), f"{folder}{name}: {kind} logo"
        repository = page.locator("a.btn-source-repository-button")
        assert repository.is_visible() and repository.get_attribute("href") == expected["repository"][0], f"{folder}{name}"
    context.close()
    assert outside == [], f"requests outside the site: {outside}"


# --------------------------------------------------------------------------- a learner's rough edges


#: the solutions' one toggle, in each edition's words (tools/book/editions.py, LABELS["show_solution"])
SHOW_SOLUTION = {"en": "Show the solution", "zh_CN": "显示解答"}
SHOW_CODE = {"en": "Show the code", "zh_CN": "显示代码"}


def solution_runs(notebook: Path) -> int:
    """The exercises' solutions of an executed notebook (cells tagged ``solution``): each starts with its prose (a
    markdown cell) or, without prose, with its first code cell; the code cells that follow belong to it, however many."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    tagged = ["solution" in c.get("metadata", {}).get("tags", []) for c in cells]
    return sum(1 for i, (c, t) in enumerate(zip(cells, tagged))
               if t and (c["cell_type"] == "markdown" or i == 0 or not tagged[i - 1]))


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
CODE_TOGGLES = """() => [...document.querySelectorAll('article.bd-article details.hide.above-input')].map(d => ({
  label: d.querySelector('summary').innerText.trim(), codeShown: [...d.querySelectorAll('.cell_input')].some(e => e.checkVisibility())}))"""


def solution_toggle_problems(browser, base: str, name: str, expected: int, show: str, show_code: str) -> list[str]:
    """What is wrong with the solutions' toggles of page ``name``: one per solution (``expected``), each with the
    words ``show`` and one style, closed, and a click on each shows its code (and output); the collapsed code cells'
    toggles, with the words ``show_code``, closed until clicked."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(base + name, wait_until="load")
    page.wait_for_function(READY, timeout=20_000)
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
    context.close()
    return [f"{name}: {f}" for f in found]


def test_one_solution_toggle_per_exercise(browser, site, executed, zh_stems):
    """Every notebook page with exercises, both editions: one toggle per solution, the same words and style for all,
    closed until clicked, and a click shows the solution's code (tools/book/solutions.py)."""
    found, checked = [], 0
    for lang, stems in [("en", STEMS), ("zh_CN", zh_stems)]:
        folder = build_site.EDITIONS[lang].folder
        for stem in stems:
            expected = solution_runs(executed / f"{stem}.ipynb")
            if expected:
                checked += 1
                name = f"{folder}/notebooks/{stem}.html" if folder else f"notebooks/{stem}.html"
                found += solution_toggle_problems(browser, site.as_uri() + "/", name, expected, SHOW_SOLUTION[lang], SHOW_CODE[lang])
    assert checked, "no notebook page has exercises with solutions"
    assert not found, "\n".join(found)


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


def overflow_problems(browser, base: str, names: list[str]) -> tuple[list[str], int]:
    """Sideways scrolling of the pages ``names`` and of their right-hand contents at each of :data:`VIEWPORTS`
    (in the narrow one, with its drawer opened); and how many contents entries were seen."""
    found, entries = [], 0
    for viewport in VIEWPORTS:
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        for name in names:
            page.goto(base + name, wait_until="load")
            page.wait_for_function(READY, timeout=20_000)
            drawer = page.locator("button.secondary-toggle")
            if not page.locator(".bd-sidebar-secondary").is_visible() and drawer.count() and drawer.first.is_visible():
                drawer.first.click()
                page.wait_for_timeout(400)  # the drawer slides in
            state = page.evaluate(OVERFLOW)
            entries += state["contents"]
            found += [f"{name} at {viewport['width']}x{viewport['height']}: {f}" for f in state["found"]]
        context.close()
    return found, entries


def test_no_page_scrolls_sideways_nor_its_contents(browser, site, zh_stems):
    """Long code names in section titles (``token_embeddings_unnormalized``) wrap in the right-hand contents."""
    names = page_names(STEMS, DOC_PAGES["en"]) + page_names(zh_stems, DOC_PAGES["zh_CN"], ZH)
    found, entries = overflow_problems(browser, site.as_uri() + "/", names)
    assert entries, "no page showed a right-hand contents to measure"
    assert not found, "\n".join(found)


def test_the_overview_figure_opens_at_full_size(browser, site):
    """The home pages' figure of the whole path: as wide as the text column, a link to the full-size image, which
    is large enough for its labels to be legible and opens by a click."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    for folder in ("", f"{ZH}/"):
        page.goto(site.as_uri() + f"/{folder}index.html", wait_until="load")
        page.wait_for_function(READY, timeout=20_000)
        figure = page.locator("article.bd-article img[src*='path_overview']")
        assert figure.count() == 1, f"{folder}index.html: no overview figure"
        sizes = figure.evaluate("""i => {
          const column = i.closest('article.bd-article'), style = getComputedStyle(column);
          return {shown: i.getBoundingClientRect().width, natural: i.naturalWidth,
                  column: column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
                  link: i.closest('a') ? i.closest('a').href : null};
        }""")
        assert sizes["natural"] >= 1600, f"{folder}index.html: the figure is {sizes['natural']} px wide, too small to read"
        assert sizes["shown"] >= 0.9 * sizes["column"], f"{folder}index.html: the figure is shown narrower than the text: {sizes}"
        assert sizes["link"] and sizes["link"].split("#")[0].endswith(".png"), f"{folder}index.html: no link to the full size: {sizes}"
        figure.click()
        page.wait_for_load_state("load")
        assert page.url == sizes["link"], f"{folder}index.html: the click led to {page.url}"
        full = page.evaluate("() => document.images.length === 1 ? document.images[0].naturalWidth : 0")
        assert full == sizes["natural"], f"{folder}index.html: the link opens an image {full} px wide, not the figure's file"
    context.close()


def dead_links(page_file: Path, hrefs: list[str], ids: set[str]) -> list[str]:
    """The links of ``hrefs`` (absolute, as the browser resolves them) that lead nowhere: a file:// address that is
    no file, or whose ``#anchor`` is no id of the target page (``ids``: the page's own)."""
    from urllib.parse import unquote, urlsplit

    found = []
    for href in hrefs:
        parts = urlsplit(href)
        if parts.scheme != "file":
            continue  # out of the site (the repository): tests/test_site_build.py checks its address
        target = Path(unquote(parts.path))
        if not target.is_file():
            found.append(f"{href}: no such file")
        elif parts.fragment:
            text = "" if target == page_file else target.read_text(encoding="utf-8", errors="replace")
            target_ids = ids if target == page_file else set(re.findall(r'\bid="([^"]+)"', text))
            if unquote(parts.fragment) not in target_ids:
                found.append(f"{href}: no element with that id")
    return found


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_every_link_of_the_home_page_leads_somewhere(browser, site, lang):
    """The home page's text (notebooks, errata, instructor guide, slides, PDF): every link opens a file of the
    site, at an element that is there."""
    folder = build_site.EDITIONS[lang].folder
    home = site / folder / "index.html" if folder else site / "index.html"
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(home.as_uri(), wait_until="load")
    hrefs = page.eval_on_selector_all("article.bd-article a[href]", "els => els.map(a => a.href)")
    ids = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
    context.close()
    assert any("slides/" in h for h in hrefs) and any("notebooks/" in h for h in hrefs), hrefs
    found = dead_links(home, hrefs, ids)
    assert not found, "\n".join(found)
