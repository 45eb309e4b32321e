"""Printing with Chromium: a ``singlehtml`` page of the series to a PDF, in one print, its outline for navigation.

Chromium runs through playwright, loads nothing from outside the page's folder, and prints with tools/book/print.css;
the JavaScript it runs in the page is in tools/pdf_scripts/.

Raises:
    PrintUnavailable: no Chromium, Chinese font or playwright. SiteError: Chromium or MathJax failed, an image did not
    load, or something reaches past the margin.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from plumbing.paths import atomic_write
from tools.pdf_stage import WORDS
from tools.site_stage import BOOK, Edition, SiteError

__all__ = [
    "PrintUnavailable",
    "find_chromium",
    "check_cjk_font",
    "page_script",
    "load_page",
    "print_page",
    "print_edition",
]


class PrintUnavailable(SiteError):
    """Chromium, a Chinese font or playwright is not installed; the site's tests skip on it (fail when CI is set)."""


PRINT_CSS = BOOK / "print.css"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: where macOS keeps them, when none is on PATH
CHROMIUM_APPS = ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: how long MathJax may take to typeset the whole series on one page (about 5 s on 2 cores)
MATHJAX_TIMEOUT_MS = 180_000
#: the width of the printed text, in CSS pixels (96 per inch): A4's 210 mm less tools/book/print.css's margins of 15 mm
TEXT_WIDTH_PX = round((210 - 2 * 15) / 25.4 * 96)
#: how far past the margin an element may reach before it counts as cut off (an inline code's frame)
OVERFLOW_TOLERANCE_PX = 4
#: the JavaScript run in the page (:func:`page_script`)
SCRIPTS = Path(__file__).resolve().parent / "pdf_scripts"


def page_script(name: str) -> str:
    """The function of ``SCRIPTS/name.js`` for playwright's ``evaluate``: the file without its leading ``//`` comment."""
    lines = (SCRIPTS / f"{name}.js").read_text(encoding="utf-8").split("\n")
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    return "\n".join(lines).strip()


def find_chromium() -> str:
    """The Chromium to print with: ``LLAMA3_CHROMIUM``, else :data:`CHROMIUM_NAMES` on ``PATH``, else :data:`CHROMIUM_APPS`.

    Raises:
        PrintUnavailable: none is found.
    """
    exe = (
        os.environ.get("LLAMA3_CHROMIUM")
        or next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
        or next((app for app in CHROMIUM_APPS if Path(app).is_file()), None)
    )
    if not exe:
        raise PrintUnavailable(
            f"printing the PDFs needs a Chromium (looked for {', '.join(CHROMIUM_NAMES)} on PATH, "
            "and LLAMA3_CHROMIUM=path): on Debian or Ubuntu, apt install chromium fonts-wqy-microhei"
        )
    return exe


def check_cjk_font(languages) -> None:
    """Stop before printing Chinese without a Chinese font, where ``fc-list`` can tell.

    Raises:
        PrintUnavailable: ``fc-list :lang=zh`` lists no font.
    """
    if "zh_CN" not in languages or not shutil.which("fc-list"):
        return
    found = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout.strip()
    if not found:
        raise PrintUnavailable(
            "the Chinese PDF needs a Chinese font and fontconfig finds none (fc-list :lang=zh is "
            "empty): on Debian or Ubuntu, apt install fonts-wqy-microhei"
        )


def load_page(context, page_html: Path, edition: Edition, outside: list[str]):
    """Open ``page_html`` in the playwright ``context``, ready to print; ``outside`` collects the requests that left
    the page's folder.

    Raises:
        SiteError: the page asks for something outside its folder, MathJax fails, an image does not load, the
            page has no notebook, or something reaches past the right margin (cut_off.js).
    """
    words = WORDS[edition.language]
    page = context.new_page()
    page.emulate_media(media="print", color_scheme="light")
    page.goto(page_html.resolve().as_uri(), wait_until="load")
    page.wait_for_function(page_script("math_ready"), timeout=MATHJAX_TIMEOUT_MS)
    if page.evaluate("document.documentElement.dataset.math") == "failed":
        raise SiteError(f"{edition.label} PDF: MathJax failed on {page_html}; `make html` and its browser test show where")
    page.add_style_tag(content=PRINT_CSS.read_text(encoding="utf-8"))
    state = page.evaluate(page_script("prepare"), [words, words["title"]])
    page.evaluate("document.fonts.ready.then(() => true)")
    if outside:
        raise SiteError(f"{edition.label} PDF: the page asked for files outside the site: {outside[:3]}")
    if state["brokenImages"]:
        raise SiteError(f"{edition.label} PDF: images that did not load: {state['brokenImages'][:5]}")
    if not state["chapters"]:
        raise SiteError(f"{edition.label} PDF: no notebook found in {page_html}")
    cut = page.evaluate(page_script("cut_off"), OVERFLOW_TOLERANCE_PX)
    if cut:
        listed = "; ".join(f"<{tag}> {px} px: {text!r}" for tag, px, text in cut[:5])
        raise SiteError(
            f"{edition.label} PDF: {len(cut)} elements reach past the right margin and would be cut off "
            f"(tools/book/print.css wraps code and outputs; shorten or wrap the rest): {listed}"
        )
    return page


def print_page(browser, page_html: Path, edition: Edition, pdf: Path) -> int:
    """Print ``page_html`` to ``pdf`` in the playwright ``browser``, once; return the number of pages.

    The contents are links; the PDF's outline (Chromium's, from the headings) gives each notebook's and section's page.

    Raises:
        SiteError: see :func:`load_page`; Chromium fails.
    """
    from playwright.sync_api import Error as PlaywrightError

    context = browser.new_context(viewport={"width": TEXT_WIDTH_PX, "height": 1000})  # laid out as wide as on paper
    outside = []
    folder = page_html.parent.resolve().as_uri() + "/"

    def route(r):
        if r.request.url.startswith((folder, "data:", "blob:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    options = dict(format="A4", print_background=True, prefer_css_page_size=True, outline=True, tagged=True, display_header_footer=False)
    try:
        page = load_page(context, page_html, edition, outside)
        data = page.pdf(**options)
        page.close()
    except PlaywrightError as e:
        raise SiteError(f"{edition.label} PDF: Chromium failed on {page_html}: {str(e).splitlines()[0]}") from None
    finally:
        context.close()
    atomic_write(pdf, lambda tmp: tmp.write_bytes(data))
    import io

    import pypdf

    return len(pypdf.PdfReader(io.BytesIO(data)).pages)


def print_edition(exe: str, page_html: Path, edition: Edition, pdf: Path) -> int:
    """Print one edition's page with a Chromium and a playwright of its own (its sync API is per thread); return
    the number of pages.

    Raises:
        SiteError: see :func:`print_page`; Chromium does not start.
    """
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        except PlaywrightError as e:
            raise SiteError(f"Chromium ({exe}) did not start: {str(e).splitlines()[0]}") from None
        try:
            return print_page(browser, page_html, edition, pdf)
        finally:
            browser.close()
