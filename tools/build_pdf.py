"""Print the series as one PDF per edition (``make pdf``): the site's pages on paper, through headless Chromium.

    python -m tools.build_pdf --src notebooks      # the committed notebooks -> build/pdf/ (what `make pdf` runs)
    python -m tools.build_pdf                      # build/NN_*.ipynb, after `make run`

Stages each edition (tools/pdf_stage.py), builds it into one page with Sphinx's ``singlehtml`` and the site's
configuration, and prints that page (tools/pdf_print.py); what it needs is in docs/publishing.md.

Raises:
    SiteError (one line, exit status 2): staging or Sphinx failed (tools/build_site.py); no Chromium or Chinese font,
    MathJax failed, an image did not load, or something reaches past the margin.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import plumbing
from tools.pdf_print import PrintUnavailable, check_cjk_font, find_chromium, print_edition
from tools.pdf_stage import print_files, repository, stage
from tools.site_stage import EDITIONS, REPO_ROOT, Edition, SiteError, write_files

__all__ = ["PDF_NAMES", "PDF_FOLDER", "PrintUnavailable", "singlehtml", "site_path", "print_editions", "site_pdfs", "build", "main"]

#: the PDF of each edition, in ``--out`` (``build/pdf/``) and in the site's ``pdf/`` folder
PDF_NAMES = {"en": "llama3-step-by-step.pdf", "zh_CN": "llama3-step-by-step.zh-CN.pdf"}
PDF_FOLDER = "pdf"  # in each edition of the site: site/pdf/ and site/zh/pdf/


# --------------------------------------------------------------------------- Sphinx


def singlehtml(staged: dict[Edition, dict], work: Path, verbose: bool = False) -> dict[Edition, Path]:
    """Build each edition's print sources into one page, ``work/<language>/html/index.html``, with Sphinx's
    ``singlehtml`` builder and the site's command line, the editions side by side; return edition -> that page.

    Raises:
        SiteError: Sphinx warned or failed.
    """
    from tools import build_site  # here, not at the top: build_site imports this module

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
    """Where the ``language`` edition's PDF is, from the site's root: ``zh/pdf/llama3-step-by-step.zh-CN.pdf``."""
    folder = EDITIONS[language].folder
    return f"{folder}/{PDF_FOLDER}/{PDF_NAMES[language]}" if folder else f"{PDF_FOLDER}/{PDF_NAMES[language]}"


def print_editions(staged: dict[Edition, dict], pdfs: dict[Edition, Path], verbose: bool = False) -> dict[Edition, Path]:
    """Print every staged edition (``pdf_stage.stage``) to its file of ``pdfs``, the editions side by side; return
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
                count = future.result()  # re-raises the edition's error
                if verbose:
                    print(f"{written[edition]}: {count} pages")
    return written


def site_pdfs(
    staged: dict[str, dict], included: dict[str, list[str]], stems: list[str], site: Path, verbose: bool = False
) -> dict[str, Path]:
    """Print the course site's PDFs (:func:`site_path`) from the files the site was built from; return language -> PDF.

    Args:
        staged: language -> :func:`site_stage.stage_files`' map of that edition.
        included: language -> the edition's notebooks, in order; the other ``stems`` are named on its title page.

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
    """Print the executed notebooks ``src/NN_*.ipynb`` into ``out/`` (only :data:`PDF_NAMES`), one PDF per edition;
    return language -> PDF. ``home``: what markdown image paths are relative to.

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
