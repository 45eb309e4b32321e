"""The course site in a real headless Chromium: every page from disk (its exercises' solution toggles, and whether
it scrolls sideways) and from a local server, search, language links, folded solutions, the launch menu (the site
is the one tests/site_helpers.py builds; Chromium as tests/site/test_site.py's docstring says; the ``browser``
fixture is in tests/conftest.py). A learner's rough edges in the same browser: tests/site/test_site_browser_learner.py."""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tools import build_site
from site_helpers import OVERFLOW, READY, SHOTS, STEMS, VIEWPORTS, ZH, DOC_PAGES, page_names, has_math, expected_outside_links
from site_helpers import SHOW_CODE, SHOW_SOLUTION, solution_runs, solution_toggle_problems


# --------------------------------------------------------------------------- in Chromium


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


def open_page(browser, base: str, name: str, shot: Path | None = None, stems: list[str] = STEMS, sideways: bool = False, solutions=None):
    """Open ``base + name``; return (problems, state): what is wrong with it (see the module docstring).

    ``stems``: the notebooks that the sidebar must list, in order (the edition's). ``solutions``: ``(expected, show,
    show_code)``, also the exercises' toggles (:func:`site_helpers.solution_toggle_problems`), which are then left
    open. ``sideways``: also whether the page, or its right-hand contents, scrolls sideways at each of
    :data:`VIEWPORTS` (in the narrow one, with the contents' drawer opened); ``state["contents"]`` counts the
    contents' entries seen.
    """
    from playwright.sync_api import Error as PlaywrightError

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    outside, failed, errors = [], [], []
    context.route(
        re.compile(r"^(https?|wss?)://"), lambda route: route.continue_() if route.request.url.startswith(base) else route.abort()
    )
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
        state = {
            "math": f"never ran ({str(e).splitlines()[0]})",
            "errors": [],
            "rawTeX": [],
            "rendered": 0,
            "images": [],
            "sidebar": [],
            "banners": [],
        }
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    state["contents"], state["sideways"] = 0, []
    toggles = solution_toggle_problems(page, *solutions) if solutions and "never ran" not in state["math"] else []
    for viewport in VIEWPORTS if sideways and "never ran" not in state["math"] else ():
        page.set_viewport_size(viewport)
        drawer = page.locator("button.secondary-toggle")
        if not page.locator(".bd-sidebar-secondary").is_visible() and drawer.count() and drawer.first.is_visible():
            drawer.first.click()
            page.wait_for_timeout(400)  # the drawer slides in
        measured = page.evaluate(OVERFLOW)
        state["contents"] += measured["contents"]
        state["sideways"] += [f"at {viewport['width']}x{viewport['height']}: {f}" for f in measured["found"]]
    context.close()
    found = [
        outside and f"requests outside the site: {outside}",
        failed and f"failed requests: {failed}",
        errors and f"errors in the page: {errors}",
        state["math"] not in ("done", "no maths on the page") and f"MathJax did not finish: {state['math']}",
        state["errors"] and f"MathJax errors (bad TeX in a markdown cell?): {state['errors']}",
        state["rawTeX"] and f"TeX left untypeset: {state['rawTeX']}",
        [i["src"] for i in state["images"] if not i["ok"]]
        and f"images that did not load: {[i['src'] for i in state['images'] if not i['ok']]}",
        [n for n in state["sidebar"] if re.match(r"\d\d_", n)] != [f"{s}.html" for s in stems] and f"the sidebar lists {state['sidebar']}",
        *state["sideways"],
        *toggles,
    ]
    return [f"{base}{name}: {f}" for f in found if f], state


def check_every_page(
    browser,
    base: str,
    site: Path,
    executed: Path,
    shots: Path | None,
    stems: list[str] = STEMS,
    lang: str = "en",
    sideways: bool = False,
    contents: list[int] | None = None,
) -> list[str]:
    """Open every page of an edition (``stems``: its notebooks); what is wrong with them (with ``sideways``, also
    scrolling sideways: :func:`open_page`; the contents' entries seen are appended to ``contents``)."""
    found, solved = [], 0
    folder = build_site.EDITIONS[lang].folder
    prefix = f"{folder}_" if folder else ""
    for name in page_names(stems, DOC_PAGES[lang], folder):
        stem = Path(name).stem
        shot = shots / (f"{prefix}00_{stem}.png" if stem in ("index", "errata", "instructor") else f"{prefix}{stem}.png") if shots else None
        runs = solution_runs(executed / f"{stem}.ipynb") if sideways and stem in stems else 0
        solutions = (runs, SHOW_SOLUTION[lang], SHOW_CODE[lang]) if runs else None
        problems, state = open_page(browser, base, name, shot, stems, sideways, solutions)
        solved += bool(solutions)
        found += problems
        if contents is not None:
            contents.append(state["contents"])
        if stem in stems:
            if has_math(stem, executed) and not state["rendered"]:
                found.append(f"{base}{name}: the page has mathematics but none was typeset")
            run = json.loads((executed / f"{stem}.ipynb").read_text(encoding="utf-8"))["metadata"]["llama3"]
            if state["banners"] != [run["weights"]]:
                found.append(f"{base}{name}: banners {state['banners']}, but the notebook ran on {run['weights']}")
    if sideways and not solved:
        found.append(f"{lang}: no notebook page has exercises with solutions")
    return found


def test_every_page_from_disk(browser, site, executed, zh_stems):
    """Also: every notebook page with exercises, both editions, has one solution toggle per solution, the same words
    and style for all, closed until clicked, and a click shows the solution's code (tools/book/solutions.py); then,
    with the solutions open, no page, and no right-hand contents, scrolls sideways at a laptop's width or a narrow one
    (long code names in section titles, ``token_embeddings_unnormalized``, wrap in the contents)."""
    contents: list[int] = []
    found = check_every_page(browser, site.as_uri() + "/", site, executed, None, sideways=True, contents=contents)
    found += check_every_page(browser, site.as_uri() + "/", site, executed, None, zh_stems, "zh_CN", True, contents)
    assert sum(contents), "no page showed a right-hand contents to measure"
    assert not found, "\n".join(found)


#: Full-page screenshots of every page in build/site-screenshots/, to look at (the GitHub workflow uploads them): only
#: with LLAMA3_SCREENSHOTS=1, since they take about as long as the checks themselves.
TAKE_SHOTS = os.environ.get("LLAMA3_SCREENSHOTS") == "1"


def test_every_page_from_a_local_server(browser, server, site, executed, zh_stems):
    shots = SHOTS if TAKE_SHOTS else None
    if shots:
        SHOTS.mkdir(parents=True, exist_ok=True)
        for old in SHOTS.glob("*.png"):
            old.unlink()
    found = check_every_page(browser, server, site, executed, shots)
    found += check_every_page(browser, server, site, executed, shots, zh_stems, "zh_CN")
    assert not found, "\n".join(found)
    if shots:
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
    if where == "server" and TAKE_SHOTS:
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
    assert_collapsed_until_opened(
        browser,
        tiny_site / "notebooks" / "01_tiny.html",
        [
            "answer printed by the solution: 42",
            "The answer is forty-two",
            "answer of a solution without prose",
            "Text of the first deep dive",
            "output of a deep-dive cell",
        ],
        "Show the solution",
    )


def test_translated_solutions_and_deep_dives_are_collapsed_in_the_browser(browser, tiny_editions):
    assert_collapsed_until_opened(
        browser,
        tiny_editions / ZH / "notebooks" / "01_tiny.html",
        [
            "answer printed by the solution: 42",
            "答案是四十二",
            "answer of a solution without prose",
            "第一个深入探讨的文字",
            "output of a deep-dive cell",
        ],
        "显示解答",
    )


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
