"""A learner's rough edges, in a real headless Chromium: one toggle per exercise's solution, in one style, that
opens its code (no page scrolling sideways: tests/site/test_site_browser.py's crawl from disk); the
home pages' overview figure as wide as the text and linked to its full size; every link of the home pages' text
leading to a file and element there. The site is the one tests/site_helpers.py builds, the ``browser`` fixture is
in tests/conftest.py; tests/site/test_site_browser.py opens every page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import build_site

from site_helpers import READY, STEMS, ZH


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
            continue  # out of the site (the repository): tests/site/test_site_build.py checks its address
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
