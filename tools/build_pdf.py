"""Print the series as one PDF per edition (``make pdf``): the site's pages on paper, through headless Chromium.

    python tools/build_pdf.py --src notebooks      # the committed notebooks -> build/pdf/ (what `make pdf` runs)
    python tools/build_pdf.py                      # build/NN_*.ipynb, after `make run`

Each edition is staged exactly as the course site stages it (tools/site_stage.py: the executed notebooks, the
Chinese ones translated by ``i18n.notebook_text``, their figures as files), then changed for paper
(tools/pdf_stage.py): the Colab link and setup cells (ids ``colab-link``, ``colab-setup``) are left out and the
home page gives way to a title page. Sphinx's ``singlehtml`` builder with the site's own
configuration (tools/book/conf.py, run as tools/build_site.py runs it: every warning an error) makes one page
of the whole series; Chromium (driven by playwright, as tests/site/test_site_browser.py does) loads it from disk,
waits for MathJax, opens every folded solution and deep dive, writes the table of contents and prints it
with tools/book/print.css (A4, page numbers, code and outputs wrapped, the site's buttons hidden). The
table of contents gets its page numbers from a first print: the page of each heading is read back from
the PDF's named destinations with pypdf, then the page is loaded afresh with the numbers filled in and
printed again, until the numbers agree with the print (tools/pdf_print.py, with the page's JavaScript in
tools/pdf_scripts/). This file builds the page with Sphinx and prints every edition.

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
import sys
import tempfile
import time
from pathlib import Path

import plumbing
from pdf_print import PrintUnavailable, check_cjk_font, find_chromium, print_edition
from pdf_stage import print_files, repository, stage
from site_stage import EDITIONS, REPO_ROOT, Edition, SiteError, write_files

__all__ = ["PDF_NAMES", "PDF_FOLDER", "PrintUnavailable", "singlehtml", "site_path", "print_editions", "site_pdfs", "build", "main"]

#: the PDF of each edition, in ``--out`` (``build/pdf/``) and in the site's ``pdf/`` folder
PDF_NAMES = {"en": "llama3-step-by-step.pdf", "zh_CN": "llama3-step-by-step.zh-CN.pdf"}
PDF_FOLDER = "pdf"  # in each edition of the site, as its slides/: site/pdf/ and site/zh/pdf/, linked from the home pages


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


def site_path(language: str) -> str:
    """Where the ``language`` edition's PDF is in the site, from the site's root: ``pdf/llama3-step-by-step.pdf``,
    ``zh/pdf/llama3-step-by-step.zh-CN.pdf`` (from the edition's own home page: ``pdf/`` and the file name)."""
    folder = EDITIONS[language].folder
    return f"{folder}/{PDF_FOLDER}/{PDF_NAMES[language]}" if folder else f"{PDF_FOLDER}/{PDF_NAMES[language]}"


def print_editions(staged: dict[Edition, dict], pdfs: dict[Edition, Path], verbose: bool = False) -> dict[Edition, Path]:
    """Print every staged edition (``pdf_stage.stage``) to its file of ``pdfs`` (folders created, files replaced
    atomically), the editions side by side (one Sphinx, then one Chromium, each).

    Returns:
        edition -> its PDF.

    Raises:
        PrintUnavailable: no Chromium, no Chinese font or no playwright.
        SiteError: see :func:`singlehtml` and ``pdf_print.print_page``.
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


def site_pdfs(
    staged: dict[str, dict], included: dict[str, list[str]], stems: list[str], site: Path, verbose: bool = False
) -> dict[str, Path]:
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
        sources[edition] = print_files(files, edition, included[lang], [s for s in stems if s not in included[lang]], repository())
    pdfs = {edition: site / site_path(edition.language) for edition in sources}
    return {e.language: path for e, path in print_editions(sources, pdfs, verbose).items()}


def build(
    src: Path,
    out: Path,
    home: Path = REPO_ROOT / "notebooks",
    stems: list[str] | None = None,
    languages: tuple[str, ...] = ("en", "zh_CN"),
    verbose: bool = False,
) -> dict[str, Path]:
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
    parser.add_argument(
        "--home", type=Path, default=REPO_ROOT / "notebooks", help="folder that markdown image paths are relative to (default notebooks/)"
    )
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
