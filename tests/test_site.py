"""The HTML site of `make html` (tools/build_site.py), checked as files and in a real headless Chromium.

The site is built from the committed notebooks in notebooks/ (they carry their outputs) into a
temporary folder; site/ and build/ are left alone, except for the screenshots written to
build/site-screenshots/ for a person to look at. Every page is loaded from file:// and from a
static server on 127.0.0.1 (the one `python -m http.server` runs): no request may fail or leave
the site, the mathematics must be typeset by the local MathJax (no raw TeX left, no MathJax
error) and every image must have loaded.

Without Chromium (a learner's laptop) the browser tests are skipped, with the reason; when the
environment variable CI is set they fail instead. LLAMA3_SITE_SRC=folder runs these tests on
other executed notebooks (images resolved against that folder).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import threading
import warnings
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest
from markupsafe import escape

import build_site

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(os.environ.get("LLAMA3_SITE_SRC") or ROOT / "notebooks").resolve()
SHOTS = ROOT / "build" / "site-screenshots"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
REAL = "real checkpoint, Meta format (params.json + consolidated.00.pth)"


def unavailable(reason: str):
    """Skip with ``reason``, visibly (also as a warning); fail instead when CI is set."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason}. CI is set, so the tests of the HTML site must run.")
    warnings.warn(f"test of the HTML site skipped: {reason}", stacklevel=2)
    pytest.skip(reason)


def notebooks(folder: Path) -> list[Path]:
    found = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    if not found:
        pytest.fail(f"no NN_*.ipynb notebooks in {folder} to build the site from")
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built from SRC, in a temporary folder."""
    notebooks(SRC)
    if not (build_site.MATHJAX / "es5" / build_site.MATHJAX_FILE).is_file():
        unavailable("MathJax is not installed in tools/site/node_modules (needs Node.js: npm ci --prefix tools/site)")
    out = tmp_path_factory.mktemp("site") / "site"
    build_site.build(SRC, out, home=SRC, progress=False)
    return out


@pytest.fixture(scope="module")
def pages(site) -> dict[str, build_site.Page]:
    """Page file name -> what the site says about it ("index.html" -> None)."""
    read = {f"{p.stem}.html": build_site.read_page(p)[1] for p in notebooks(SRC)}
    return {"index.html": None, **read}


@pytest.fixture(scope="module")
def has_math(pages) -> dict[str, bool]:
    """Page file name -> whether its source holds mathematics (a $ in markdown or in the summaries)."""
    def markdown(stem):
        nb = nbformat.read(SRC / f"{stem}.ipynb", as_version=4)
        return " ".join(c.source for c in nb.cells if c.cell_type == "markdown")

    series = [p for p in pages.values() if p]
    return {"index.html": any("$" in p.summary for p in series), **{p.href: "$" in markdown(p.stem) for p in series}}


# --------------------------------------------------------------------------- as files


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


def test_index_lists_the_notebooks_in_order(site, pages):
    index = (site / "index.html").read_text(encoding="utf-8")
    series = [p for p in pages.values() if p]
    assert [a["href"] for t, a in tags(site / "index.html") if t == "a" and a.get("href", "")[:2].isdigit()] == \
        [p.href for p in series]
    for p in series:
        assert p.summary, f"{p.stem}: no one-line summary found in the first markdown cell"
        assert p.weights, f"{p.stem}: no 'weights: ' line in the outputs"
        assert p.summary_html in index and str(escape(f"Run on: {p.weights}")) in index


def test_pages_link_to_each_other_and_load_nothing_from_outside(site, pages):
    names = list(pages)
    for i, name in enumerate(names):
        found = tags(site / name)
        if i:  # a notebook page: previous/next links, no link left to a .ipynb of the series
            rel = {a["rel"]: a["href"] for t, a in found if t == "a" and a.get("rel") in ("prev", "next")}
            assert rel.get("prev") == (names[i - 1] if i > 1 else None), name
            assert rel.get("next") == (names[i + 1] if i + 1 < len(names) else None), name
            stale = [a["href"] for t, a in found if t == "a" and re.match(r"(\./)?\d\d_[\w.-]+\.ipynb", a.get("href", ""))]
            assert not stale, f"{name}: links still point at notebooks: {stale}"
        for tag, attrs in found:
            url = attrs.get("src") or (attrs.get("href") if tag == "link" else None)
            if not url or url.startswith("data:"):
                continue
            assert not re.match(r"[a-z]+:|//", url), f"{name}: <{tag}> loads {url[:80]} from outside the site"
            assert (site / url.split("#")[0]).is_file(), f"{name}: <{tag}> loads {url}, which is not in the site"


def test_real_weights_runs_say_so_on_every_page(site, tmp_path):
    src = tmp_path / "runs"
    src.mkdir()
    for path in notebooks(SRC):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                if out.output_type == "stream":
                    out.text = re.sub(r"^weights: .*$", f"weights: {REAL}", out.text, flags=re.M)
        nbformat.write(nb, src / path.name)
    out = build_site.build(src, tmp_path / "site", home=SRC, progress=False)
    assert len(out) == len(notebooks(SRC)) + 1
    for page in out:
        assert "site-banner-real" in page.read_text(encoding="utf-8"), f"{page.name} does not say it ran on real weights"


def test_missing_or_remote_images_stop_the_build(site, tmp_path):
    for src, message in [("../images/no_such.png", "missing or empty"), ("https://example.org/x.png", "remote")]:
        folder = tmp_path / message.split()[0]
        folder.mkdir()
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# T\n\nA page.\n\n![x]({src})")])
        nbformat.write(nb, folder / "01_t.ipynb")
        with pytest.raises(build_site.SiteError, match=message):
            build_site.build(folder, tmp_path / f"site_{folder.name}", home=folder, progress=False)


# --------------------------------------------------------------------------- in Chromium


@pytest.fixture(scope="module")
def browser():
    exe = next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)
    if exe is None:
        unavailable(f"no Chromium found (looked for {', '.join(CHROMIUM_NAMES)}); on Debian: apt-get install chromium")
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


PAGE_STATE = """() => {
  const skip = 'pre, code, script, style, mjx-container, .jp-InputArea';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT,
    {acceptNode: n => n.parentElement.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  let text = '';
  while (walker.nextNode()) text += walker.currentNode.data + ' ';
  return {
    math: document.documentElement.dataset.math,
    rendered: document.querySelectorAll('mjx-container svg').length,
    errors: Array.from(document.querySelectorAll('mjx-container svg [data-mjx-error]')).map(e => e.dataset.mjxError),
    rawTeX: (text.match(/\\$\\$[^]*?\\$\\$|\\$[^$\\n]*\\\\[a-zA-Z]+[^$\\n]*\\$|\\\\(begin|frac)\\{/g) || []).slice(0, 3),
    images: Array.from(document.images).map(i => ({src: i.src.slice(0, 60), ok: i.complete && i.naturalWidth > 0})),
  };
}"""


def problems(browser, base: str, name: str, expect_math: bool, shot: Path | None = None) -> list[str]:
    """Open ``base + name``; return what is wrong with it (see the module docstring); screenshot it to ``shot``."""
    from playwright.sync_api import Error as PlaywrightError

    context = browser.new_context(viewport={"width": 1200, "height": 900})
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
        page.wait_for_function("document.documentElement.dataset.math", timeout=20_000)
        state = page.evaluate(PAGE_STATE)
    except PlaywrightError as e:
        state = {"math": f"never ran ({str(e).splitlines()[0]})", "errors": [], "rawTeX": [], "rendered": 0, "images": []}
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    context.close()
    found = [
        outside and f"requests outside the site: {outside}",
        failed and f"failed requests: {failed}",
        errors and f"errors in the page: {errors}",
        state["math"] != "done" and f"MathJax did not finish: {state['math']}",
        state["errors"] and f"MathJax errors (bad TeX in a markdown cell?): {state['errors']}",
        state["rawTeX"] and f"TeX left untypeset: {state['rawTeX']}",
        expect_math and not state["rendered"] and "the page has mathematics but none was typeset",
        [i["src"] for i in state["images"] if not i["ok"]] and
        f"images that did not load: {[i['src'] for i in state['images'] if not i['ok']]}",
    ]
    return [f"{base}{name}: {f}" for f in found if f]


def test_every_page_from_disk(browser, site, has_math):
    found = [p for name, math in has_math.items() for p in problems(browser, site.as_uri() + "/", name, math)]
    assert not found, "\n".join(found)


def test_every_page_from_a_local_server(browser, server, has_math):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    found = []
    for name, math in has_math.items():
        shot = SHOTS / ("00_index.png" if name == "index.html" else name.replace(".html", ".png"))
        found += problems(browser, server, name, math, shot)
        assert shot.stat().st_size > 0
    assert not found, "\n".join(found)
