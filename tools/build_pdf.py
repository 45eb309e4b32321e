"""Print the series as one PDF per edition (``make pdf``): the site's pages on paper, through headless Chromium.

    python tools/build_pdf.py --src notebooks      # the committed notebooks -> build/pdf/ (what `make pdf` runs)
    python tools/build_pdf.py                      # build/NN_*.ipynb, after `make run`

Each edition is staged exactly as the course site stages it (tools/site_stage.py: the executed notebooks, the
Chinese ones translated by ``i18n.notebook_text``, their figures as files), then changed for paper by
:func:`print_files`: the Colab link and setup cells (ids ``colab-link``, ``colab-setup``) are left out and the
home page gives way to a title page (:func:`title_page`). Sphinx's ``singlehtml`` builder with the site's own
configuration (tools/book/conf.py, run as tools/build_site.py runs it: every warning an error) makes one page
of the whole series; Chromium (driven by playwright, as tests/test_site_browser.py does) loads it from disk,
waits for MathJax, opens every folded solution and deep dive, writes the table of contents and prints it
with tools/book/print.css (A4, page numbers, code and outputs wrapped, the site's buttons hidden). The
table of contents gets its page numbers from a first print: the page of each heading is read back from
the PDF's named destinations with pypdf, then the page is loaded afresh with the numbers filled in and
printed again, until the numbers agree with the print.

Reads:
    ``--src/NN_*.ipynb`` (default ``build/``; never re-executed), the images their markdown shows (resolved
    against ``--home``, default ``notebooks/``), the catalogues of the translation, tools/book/ (conf.py, its
    extensions, print.css); a Chromium: ``LLAMA3_CHROMIUM``, else ``chromium``, ``chromium-browser``,
    ``google-chrome`` or ``google-chrome-stable`` on ``PATH``, else macOS's Google Chrome (Debian: ``apt install
    chromium``); the system's fonts: the Chinese edition needs a CJK font, best a TrueType one, which Chromium
    embeds by name (Debian: ``apt install fonts-wqy-microhei``; tools/book/print.css lists the fonts it prefers).
Writes:
    ``--out`` (default ``build/pdf/``): :data:`PDF_NAMES`, ``llama3-step-by-step.pdf`` (English) and
    ``llama3-step-by-step.zh-CN.pdf`` (Chinese), each replaced atomically; nothing else. The course site
    serves the same files from ``site/pdf/`` and ``site/zh/pdf/`` (tools/build_site.py prints them with the site).
Raises:
    SiteError (printed as one line, exit status 2): see tools/build_site.py for the staging and Sphinx's
    warnings; no Chromium, no Chinese font, MathJax failing, an image that does not load, or a table of
    contents whose page numbers do not settle.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

import plumbing
from plumbing.paths import atomic_write
from site_stage import BOOK, EDITIONS, REPO_ROOT, Edition, SiteError, source_files, stage_files, translated, \
    write_files


class PrintUnavailable(SiteError):
    """What printing needs is not installed on this machine: Chromium, a Chinese font or playwright (the message
    says what to install). The tests of the site skip on it, or fail when CI is set."""


#: the PDF of each edition, in ``--out`` (``build/pdf/``) and in the site's ``pdf/`` folder
PDF_NAMES = {"en": "llama3-step-by-step.pdf", "zh_CN": "llama3-step-by-step.zh-CN.pdf"}
PDF_FOLDER = "pdf"  # in each edition of the site, as its slides/: site/pdf/ and site/zh/pdf/, linked from the home pages
PRINT_CSS = BOOK / "print.css"
#: cells that belong to Colab and not to paper (tools/colab.py writes them into every notebook)
LEFT_OUT_CELLS = ("colab-link", "colab-setup")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: where macOS keeps them, when none is on PATH
CHROMIUM_APPS = ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
#: how long MathJax may take to typeset the whole series on one page (about 5 s on 2 cores)
MATHJAX_TIMEOUT_MS = 180_000
#: MathJax has typeset the page (tools/book/mathjax-config.js sets ``data-math``), or the page has no maths to typeset
MATH_READY = """() => document.documentElement.dataset.math
  || (!document.querySelector('script[src*="mathjax"]') && document.readyState === 'complete')"""
#: the width of the printed text, in CSS pixels (96 per inch): A4's 210 mm less tools/book/print.css's margins of 15 mm
TEXT_WIDTH_PX = round((210 - 2 * 15) / 25.4 * 96)
#: how far past the margin an element may reach before it counts as cut off (an inline code's frame)
OVERFLOW_TOLERANCE_PX = 4

#: the title page's and the printed labels' words in each edition
WORDS = {
    "en": {
        "title": "Llama 3, step by step",
        "subtitle": "Meta-Llama-3-8B rebuilt one operation at a time, from text to the next token and on to "
                    "generated text",
        "about": "The {n} notebooks of the series with the outputs of their run, the solutions of the exercises "
                 "and the deep dives. Every notebook can be run from the repository:",
        "weights": "Outputs from",
        "standin": "the synthetic stand-in: random weights with {model}'s tensor names, shapes and dtype, not Meta's "
                   "weights (shapes, dtypes and every check are the real model's; the values are not)",
        "left_out": "Not yet in this edition (see the English one): {names}.",
        "licence": "Text and figures: CC BY 4.0; code: Apache-2.0; the Llama 3, step by step authors. Meta's "
                   "Llama 3 weights and tokenizer.model are under the Llama 3 Community License and are not part "
                   "of this document.",
        "contents": "Contents",
        "solution": "Solution",
        "deep_dives": "Deep dives (optional)",
        "colon": ": ",
    },
    "zh_CN": {
        "title": "Llama 3, step by step · 中文版",
        "subtitle": "逐个运算重建 Meta-Llama-3-8B：从文本到下一个词元，再到生成的文本",
        "about": "本系列的 {n} 个笔记本，附运行输出、练习解答和深入探讨。每个笔记本都可以在代码仓库中运行：",
        "weights": "输出来自",
        "standin": "合成替身权重（synthetic stand-in）：随机权重，张量名称、形状和数据类型与 {model} 相同，但不是 Meta 的权重"
                   "（形状、数据类型和每一项检查都与真实模型相同，数值不同）",
        "left_out": "尚未收入中文版（请先阅读英文版）：{names}。",
        "licence": "文字和图片采用 CC BY 4.0，代码采用 Apache-2.0；Llama 3, step by step 的作者。Meta 的 Llama 3 "
                   "权重和 tokenizer.model 受 Llama 3 社区许可协议约束，不包含在本文档中。",
        "contents": "目录",
        "solution": "解答",
        "deep_dives": "深入探讨（选读）",
        "colon": "：",
    },
}


# --------------------------------------------------------------------------- staging


def print_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` for paper, without the Colab cells (:data:`LEFT_OUT_CELLS`)."""
    nb = nbformat.from_dict(nb)  # a deep copy
    nb.cells = [c for c in nb.cells if c.get("id") not in LEFT_OUT_CELLS]
    return nb


def notebook_title(nb: nbformat.NotebookNode) -> str:
    """The notebook's title, the text of its first ``# `` heading as printed (inline code marks dropped)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found = re.search(r"^#[ \t]+(.+?)[ \t]*#*$", cell.source, re.M)
            if found:
                return found[1].replace("`", "")
    return ""


def title_page(edition: Edition, runs: list[dict], left_out: list[str], repository: str) -> str:
    """The print's root page (MyST markdown): the title page, a box for the contents that the browser fills
    (:data:`PREPARE`), and a hidden toctree of the notebooks, which Sphinx's ``singlehtml`` puts after it.

    Args:
        edition: the edition printed (its words are :data:`WORDS`).
        runs: the ``llama3`` run metadata of each notebook printed (which weights its outputs come from).
        left_out: the notebooks that this edition does not have (an incomplete translation).
        repository: the repository's address, ``[project.urls] Repository`` of pyproject.toml.
    """
    words = WORDS[edition.language]
    described = []
    for run in runs:
        if run.get("weights") == "standin":
            text = words["standin"].format(model=run.get("standin_model", "Meta-Llama-3-8B"))
        else:
            text = run.get("weights_description") or run.get("weights") or ""
        if text and text not in described:
            described.append(text)
    lines = [f'<div id="llama3-title-page" class="llama3-title-page" lang="{edition.lang}">',
             f'<p class="llama3-title">{html.escape(words["title"])}</p>',
             f'<p class="llama3-subtitle">{html.escape(words["subtitle"])}</p>',
             f'<p>{html.escape(words["about"].format(n=len(runs)))} <a href="{html.escape(repository)}">'
             f"{html.escape(repository)}</a></p>"]
    if described:
        lines.append(f'<p class="llama3-weights">{html.escape(words["weights"] + words["colon"])}'
                     f"{html.escape('; '.join(described))}{'。' if edition.language == 'zh_CN' else '.'}</p>")
    if left_out:
        lines.append(f"<p>{html.escape(words['left_out'].format(names=', '.join(left_out)))}</p>")
    lines += [f'<p class="llama3-licence">{html.escape(words["licence"])}</p>', "</div>", "",
              f'<nav id="llama3-print-toc" class="llama3-print-toc" data-title="{html.escape(words["contents"])}"></nav>',
              "", "```{toctree}", ":hidden:", "", *[f"notebooks/{run['stem']}" for run in runs], "```", ""]
    return "\n".join(lines)


def print_files(files: dict[str, Path | str], edition: Edition, stems: list[str], left_out: list[str] = (),
                repository: str = "") -> dict[str, Path | str]:
    """Sphinx's source folder for the print, from :func:`site_stage.stage_files`'s map of the same edition:
    its source files (not those that the site serves as they are, nor the pages of docs/), the notebooks
    changed by :func:`print_notebook`, and ``index.md`` replaced by :func:`title_page`. Reads the notebooks
    that ``files`` gives as paths; writes nothing.

    Args:
        files: ``stage_files``'s map (source path -> file to copy or text to write).
        edition: the edition staged.
        stems: its notebooks, in order (those that ``files`` holds).
        left_out: the series' notebooks that the edition lacks, named on the title page.
        repository: the repository's address, for the title page.
    """
    # the series only: the pages of docs/ (errata, instructor guide) belong to the site, and so do their images
    out = {name: content for name, content in source_files(files).items() if not name.startswith("docs/")}
    runs = []
    for stem in stems:
        name = f"notebooks/{stem}.ipynb"
        staged = out[name]
        nb = nbformat.read(staged, as_version=4) if isinstance(staged, Path) else nbformat.reads(staged, as_version=4)
        out[name] = nbformat.writes(print_notebook(nb)) + "\n"
        runs.append({**(nb.metadata.get("llama3") or {}), "stem": stem})
    out["index.md"] = title_page(edition, runs, list(left_out), repository)
    return out


def stage(src: Path, home: Path, stems: list[str], languages: tuple[str, ...]) -> dict[Edition, dict]:
    """Every edition's print sources (:func:`print_files`), staged from the executed notebooks ``src/NN_*.ipynb``
    as the site stages them (:func:`site_stage.stage_files`: the catalogues of the translation, the images that
    the markdown shows, relative to ``home``); writes nothing.

    Raises:
        SiteError: a notebook is missing, never ran or its translation is stale; an image is missing or remote.
    """
    staged = {}
    for lang in languages:
        edition = EDITIONS[lang]
        included = translated(src, stems, lang)
        files = stage_files(src, included, home, edition, None)
        staged[edition] = print_files(files, edition, included, [s for s in stems if s not in included], repository())
    return staged


def repository() -> str:
    """The repository's address, read from pyproject.toml's ``[project.urls] Repository`` as tools/book/conf.py reads it."""
    import tomllib

    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["project"]["urls"]["Repository"].rstrip("/")


# --------------------------------------------------------------------------- Sphinx


def singlehtml(staged: dict[Edition, dict], work: Path, verbose: bool = False) -> dict[Edition, Path]:
    """Build each edition's print sources into one HTML page with Sphinx's ``singlehtml`` builder and the
    site's configuration (tools/build_site.py's command line, builder changed), all editions side by side.

    Writes ``work/<language>/src`` (the sources) and ``work/<language>/html`` (the page, ``index.html``).

    Returns:
        edition -> its ``index.html``.

    Raises:
        SiteError: Sphinx warned or failed (tools/build_site.py's :func:`finish_sphinx`).
    """
    import build_site  # the site's Sphinx command line; imported here, since build_site imports this module

    running = {}
    for edition, files in staged.items():
        folder = work / edition.language
        write_files(files, folder / "src")
        command = build_site.sphinx_command(folder / "src", folder / "html", edition, None, verbose)
        command[command.index("-b") + 1] = "singlehtml"
        running[edition] = build_site.start_sphinx(command, folder / "sphinx.log", verbose)
    try:
        for edition, process in running.items():
            build_site.finish_sphinx(process, work / edition.language / "sphinx.log")
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return {edition: work / edition.language / "html" / "index.html" for edition in staged}


# --------------------------------------------------------------------------- Chromium


def find_chromium() -> str:
    """The Chromium to print with: ``LLAMA3_CHROMIUM``, else the first of :data:`CHROMIUM_NAMES` on ``PATH``, else
    macOS's Google Chrome or Chromium (:data:`CHROMIUM_APPS`).

    Raises:
        PrintUnavailable: none is found.
    """
    exe = (os.environ.get("LLAMA3_CHROMIUM") or next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
           or next((app for app in CHROMIUM_APPS if Path(app).is_file()), None))
    if not exe:
        raise PrintUnavailable(f"printing the PDFs needs a Chromium (looked for {', '.join(CHROMIUM_NAMES)} on PATH, "
                               "and LLAMA3_CHROMIUM=path): on Debian or Ubuntu, apt install chromium fonts-wqy-microhei")
    return exe


def check_cjk_font(languages) -> None:
    """Stop before printing Chinese without a Chinese font, where fontconfig can tell (Linux: ``fc-list``).

    Raises:
        PrintUnavailable: ``fc-list :lang=zh`` lists no font.
    """
    if "zh_CN" not in languages or not shutil.which("fc-list"):
        return
    found = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout.strip()
    if not found:
        raise PrintUnavailable("the Chinese PDF needs a Chinese font and fontconfig finds none (fc-list :lang=zh is "
                               "empty): on Debian or Ubuntu, apt install fonts-wqy-microhei")


#: In the loaded page: open every folded solution and deep dive, label them for paper, write the table of
#: contents into ``#llama3-print-toc`` (a link and a page number for each notebook and each of its sections),
#: give the PDF its title. Returns what is wrong with the page: images that did not load.
PREPARE = r"""([words, title]) => {
  document.documentElement.dataset.theme = 'light';
  document.title = title;
  for (const d of document.querySelectorAll('details')) d.open = true;
  for (const s of document.querySelectorAll('details.llama3-solution > summary, details.hide > summary')) {
    s.textContent = words.solution;
    s.classList.add('llama3-print-label');
  }
  for (const s of document.querySelectorAll('details.llama3-deep-dives > summary > strong')) s.textContent = words.deep_dives;
  for (const s of document.querySelectorAll('details.llama3-deep-dives > summary')) {
    const strong = s.querySelector('strong'), list = s.querySelector('.llama3-deep-dives-list');
    s.replaceChildren(...[strong, list ? document.createTextNode(words.colon) : null, list].filter(Boolean));
  }
  const toc = document.getElementById('llama3-print-toc');
  let count = 0;
  const heading = section => section && section.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4');
  const entry = (section, level) => {
    const h = heading(section);
    const li = document.createElement('li');
    li.className = 'llama3-toc-' + level;
    const anchor = document.createElement('span');  // the sections' own ids repeat from notebook to notebook
    anchor.id = 'llama3-toc-' + (++count);
    h.prepend(anchor);
    const a = document.createElement('a');
    a.href = '#' + anchor.id;
    const text = document.createElement('span');
    text.className = 'llama3-toc-text';
    const copy = h.cloneNode(true);
    copy.querySelectorAll('.headerlink, [id]').forEach(x => x.remove());
    text.innerHTML = copy.innerHTML;
    const page = document.createElement('span');
    page.className = 'llama3-toc-page';
    page.dataset.target = anchor.id;
    page.textContent = '0';
    a.append(text, page);
    li.append(a);
    return li;
  };
  const chapters = Array.from(document.querySelectorAll('span[id^="document-notebooks/"]'))
    .map(span => span.nextElementSibling).filter(s => s && s.tagName === 'SECTION' && s.id && heading(s));
  const list = document.createElement('ol');
  for (const chapter of chapters) {
    chapter.classList.add('llama3-chapter');
    const li = entry(chapter, 'chapter');
    const sections = Array.from(chapter.querySelectorAll(':scope > section')).filter(s => s.id && heading(s));
    if (sections.length) {
      const sub = document.createElement('ol');
      sections.forEach(s => sub.append(entry(s, 'section')));
      li.append(sub);
    }
    list.append(li);
  }
  const caption = document.createElement('p');
  caption.className = 'llama3-toc-title';
  caption.textContent = toc.dataset.title;
  toc.replaceChildren(caption, list);
  return {
    chapters: chapters.length,
    brokenImages: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 120)),
  };
}"""

#: With the page as wide as the printed text (:data:`TEXT_WIDTH_PX`): what reaches past the right margin, or scrolls
#: inside its box, and so would be cut off on paper: ``[tag, how many pixels, its first words]``.
CUT_OFF = r"""(tolerance) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const right = document.documentElement.clientWidth;  // the article grows with what it holds: the page's width is the margin
  const found = [];
  for (const el of article.querySelectorAll('pre, table, img, svg, mjx-container, div.cell_output > div, p, li')) {
    const box = el.getBoundingClientRect();
    const hidden = el.scrollWidth - el.clientWidth;
    const scrolls = hidden > tolerance && !['visible', ''].includes(getComputedStyle(el).overflowX);
    if (box.width && (box.right - right > tolerance || scrolls)) found.push([el, Math.round(Math.max(box.right - right, hidden))]);
  }
  return found.filter(([el]) => !found.some(([other]) => other !== el && el.contains(other)))  // the innermost: the cause
    .map(([el, px]) => [el.tagName.toLowerCase(), px, (el.textContent || el.getAttribute('src') || '').trim().slice(0, 60)]);
}"""

#: Fill the table of contents' page numbers: ``{section id: page}``.
FILL = r"""(pages) => {
  for (const span of document.querySelectorAll('.llama3-toc-page')) span.textContent = pages[span.dataset.target] || '?';
}"""


def destination_pages(pdf: bytes) -> tuple[int, dict[str, int]]:
    """The number of pages of ``pdf`` (a PDF file's bytes, read with pypdf) and the page (from 1) of each of its
    named destinations, which Chromium writes for the targets of the page's internal links (the contents' entries)."""
    import io

    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(pdf))
    pages = {}
    for name, dest in reader.named_destinations.items():
        number = reader.get_destination_page_number(dest)
        if number is not None and number >= 0:
            pages[str(name).lstrip("/")] = number + 1
    return len(reader.pages), pages


def load_page(context, page_html: Path, edition: Edition, outside: list[str], pages: dict[str, int] | None = None):
    """Open the ``singlehtml`` page ``page_html`` of ``edition`` in the playwright ``context``, ready to print:
    MathJax done, tools/book/print.css added, :data:`PREPARE` run, the contents' page numbers ``pages``
    filled in (:data:`FILL`) when given. ``outside`` collects the requests that left the page's folder.

    Raises:
        SiteError: the page asks for something outside its folder, MathJax fails, an image does not load, the
            page has no notebook, or something reaches past the right margin (:data:`CUT_OFF`).
    """
    words = WORDS[edition.language]
    page = context.new_page()
    page.emulate_media(media="print", color_scheme="light")
    page.goto(page_html.resolve().as_uri(), wait_until="load")
    page.wait_for_function(MATH_READY, timeout=MATHJAX_TIMEOUT_MS)
    if page.evaluate("document.documentElement.dataset.math") == "failed":
        raise SiteError(f"{edition.label} PDF: MathJax failed on {page_html}; `make html` and its browser test show where")
    page.add_style_tag(content=PRINT_CSS.read_text(encoding="utf-8"))
    state = page.evaluate(PREPARE, [words, words["title"]])
    if pages is not None:
        page.evaluate(FILL, pages)
    page.evaluate("document.fonts.ready.then(() => true)")
    if outside:
        raise SiteError(f"{edition.label} PDF: the page asked for files outside the site: {outside[:3]}")
    if state["brokenImages"]:
        raise SiteError(f"{edition.label} PDF: images that did not load: {state['brokenImages'][:5]}")
    if not state["chapters"]:
        raise SiteError(f"{edition.label} PDF: no notebook found in {page_html}")
    cut = page.evaluate(CUT_OFF, OVERFLOW_TOLERANCE_PX)
    if cut:
        listed = "; ".join(f"<{tag}> {px} px: {text!r}" for tag, px, text in cut[:5])
        raise SiteError(f"{edition.label} PDF: {len(cut)} elements reach past the right margin and would be cut off "
                        f"(tools/book/print.css wraps code and outputs; shorten or wrap the rest): {listed}")
    return page


def print_page(browser, page_html: Path, edition: Edition, pdf: Path) -> int:
    """Print the ``singlehtml`` page ``page_html`` of ``edition`` to ``pdf`` (replaced atomically) in the
    playwright ``browser``; nothing outside the page's folder is loaded. Returns the number of pages.

    The page is printed once with the contents' page numbers at 0, then loaded afresh with the numbers
    that print gave and printed again, until the numbers agree with the print (Chromium lays a page out
    differently when it prints it a second time, so every print starts from a fresh load).

    Raises:
        SiteError: see :func:`load_page`; Chromium fails, or the contents' page numbers do not settle in four prints.
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
    options = dict(format="A4", print_background=True, prefer_css_page_size=True, outline=True, tagged=True,
                   display_header_footer=False)
    try:
        pages = None
        for _ in range(4):
            page = load_page(context, page_html, edition, outside, pages)
            data = page.pdf(**options)
            page.close()
            count, found = destination_pages(data)
            if found == pages:
                break
            pages = found
        else:
            raise SiteError(f"{edition.label} PDF: the page numbers of the contents did not settle in four prints")
    except PlaywrightError as e:
        raise SiteError(f"{edition.label} PDF: Chromium failed on {page_html}: {str(e).splitlines()[0]}") from None
    finally:
        context.close()
    atomic_write(pdf, lambda tmp: tmp.write_bytes(data))
    return count


def print_edition(exe: str, page_html: Path, edition: Edition, pdf: Path) -> int:
    """Print one edition's page with a Chromium of its own (:func:`print_page`); returns the number of pages.
    Each edition runs in a thread of its own, so each has its own playwright (its sync API is per thread).

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


def site_path(language: str) -> str:
    """Where the ``language`` edition's PDF is in the site, from the site's root: ``pdf/llama3-step-by-step.pdf``,
    ``zh/pdf/llama3-step-by-step.zh-CN.pdf`` (from the edition's own home page: ``pdf/`` and the file name)."""
    folder = EDITIONS[language].folder
    return f"{folder}/{PDF_FOLDER}/{PDF_NAMES[language]}" if folder else f"{PDF_FOLDER}/{PDF_NAMES[language]}"


def print_editions(staged: dict[Edition, dict], pdfs: dict[Edition, Path], verbose: bool = False) -> dict[Edition, Path]:
    """Print every staged edition (:func:`stage`) to its file of ``pdfs`` (folders created, files replaced
    atomically), the editions side by side (one Sphinx, then one Chromium, each).

    Returns:
        edition -> its PDF.

    Raises:
        PrintUnavailable: no Chromium, no Chinese font or no playwright.
        SiteError: see :func:`singlehtml` and :func:`print_page`.
    """
    from concurrent.futures import ThreadPoolExecutor

    exe = find_chromium()
    check_cjk_font([e.language for e in staged])
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        raise PrintUnavailable("printing the PDFs needs the Python package playwright: pip install -r requirements.lock") from None
    written = {edition: Path(pdfs[edition]) for edition in staged}
    with tempfile.TemporaryDirectory(prefix="llama3-pdf-") as work:
        pages = singlehtml(staged, Path(work), verbose)
        with ThreadPoolExecutor(max_workers=len(pages)) as pool:
            counts = {e: pool.submit(print_edition, exe, page_html, e, written[e]) for e, page_html in pages.items()}
            for edition, future in counts.items():
                count = future.result()  # the first error, as it was raised
                if verbose:
                    print(f"{written[edition]}: {count} pages")
    return written


def site_pdfs(staged: dict[str, dict], included: dict[str, list[str]], stems: list[str], site: Path,
              verbose: bool = False) -> dict[str, Path]:
    """The PDFs of the course site (tools/build_site.py): every edition of ``staged`` printed into its folder of
    the site (:func:`site_path`: ``site/pdf/llama3-step-by-step.pdf``, ``site/zh/pdf/llama3-step-by-step.zh-CN.pdf``),
    from the very files that the site was built from.

    Args:
        staged: language -> :func:`site_stage.stage_files`' map of that edition.
        included: language -> the notebooks of that edition, in order.
        stems: the notebooks of the series (those an edition lacks are named on its title page).
        site: the built site's folder.
        verbose: print Sphinx's progress and the page counts.

    Returns:
        language -> its PDF in the site.

    Raises:
        SiteError: see :func:`print_editions`.
    """
    sources = {}
    for lang, files in staged.items():
        edition = EDITIONS[lang]
        sources[edition] = print_files(files, edition, included[lang], [s for s in stems if s not in included[lang]],
                                       repository())
    pdfs = {edition: site / site_path(edition.language) for edition in sources}
    return {e.language: path for e, path in print_editions(sources, pdfs, verbose).items()}


def build(src: Path, out: Path, home: Path = REPO_ROOT / "notebooks", stems: list[str] | None = None,
          languages: tuple[str, ...] = ("en", "zh_CN"), verbose: bool = False) -> dict[str, Path]:
    """Print the series from the executed notebooks ``src/NN_*.ipynb`` into ``out/``, one PDF per edition.

    Args:
        src: folder of executed notebooks.
        out: the folder of the PDFs (created; only :data:`PDF_NAMES` are written in it).
        home: folder that markdown image paths are relative to.
        stems: the notebooks, in order (default: ``plumbing.series_notebooks()``).
        languages: the editions, ``en`` and/or ``zh_CN``.
        verbose: print Sphinx's progress and the page counts.

    Returns:
        language -> its PDF.

    Raises:
        SiteError: see the module docstring.
    """
    stems = [p.stem for p in plumbing.series_notebooks()] if stems is None else list(stems)
    if not stems:
        raise SiteError("The series has no notebooks (notebooks/NN_*.ipynb).")
    staged = stage(Path(src), Path(home), stems, languages)
    pdfs = {edition: Path(out) / PDF_NAMES[edition.language] for edition in staged}
    return {e.language: path for e, path in print_editions(staged, pdfs, verbose).items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=REPO_ROOT / "build", help="folder of executed NN_*.ipynb (default build/)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "pdf", help="folder of the PDFs (default build/pdf/)")
    parser.add_argument("--home", type=Path, default=REPO_ROOT / "notebooks",
                        help="folder that markdown image paths are relative to (default notebooks/)")
    parser.add_argument("--verbose", action="store_true", help="print Sphinx's progress")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        written = build(args.src, args.out, args.home, verbose=args.verbose)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    import pypdf

    listed = ", ".join(f"{plumbing.display_path(p)} ({len(pypdf.PdfReader(p).pages)} pages)" for p in written.values())
    print(f"PDFs written: {listed} ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
