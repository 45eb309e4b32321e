"""A learner's rough edges, in a real headless Chromium: the home pages' overview figure as wide as the text and
linked to its full size; every link of the home pages' text leading to a file and element there (one toggle per
exercise's solution that opens its code, and no page scrolling sideways: tests/site/test_site_browser.py's crawl
from disk). The site is the one tests/site_helpers.py builds, the ``browser`` fixture is
in tests/conftest.py; tests/site/test_site_browser.py opens every page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools import build_site
from site_helpers import READY, ZH


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
