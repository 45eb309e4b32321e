"""Build the course site (``make html``) with Sphinx, MyST-NB and sphinx-book-theme from the executed notebooks.

    python tools/build_site.py                     # build/NN_*.ipynb -> site/ (English) and site/zh/ (Chinese), after `make run`
    python tools/build_site.py --src notebooks     # the committed notebooks, which carry their outputs

Two editions, built from the same executed notebooks: English in ``--out`` and Chinese in ``--out``/zh/.
The Chinese pages are the executed notebooks with their markdown translated by tools/i18n.py from the
catalogues ``locale/zh_CN/LC_MESSAGES/NN_*.po`` (code and outputs as they ran: a run on real weights
gives Chinese pages with the same outputs). A notebook whose catalogue is incomplete (missing, empty or
fuzzy entries, ``python tools/i18n.py check``) is left out of the Chinese edition, and its home page
says so. Each page links to the same page in the other edition.

Each edition is staged by tools/site_stage.py (pure functions: the source folder's files, the links of
the errata pages, the images; the Chinese notebooks are ``i18n.notebook_text``, what ``python
tools/i18n.py build`` writes into notebooks/zh/) and built by a plain ``python -m sphinx`` with the
configuration in ``tools/book/`` (``-D language=...``, ``-W``: every warning is an error).

Reads:
    the series, ``plumbing.series_notebooks()`` (every ``notebooks/NN_*.ipynb``, in order), as executed
    copies ``--src/NN_*.ipynb`` (default ``build/``; never re-executed); the images that markdown cells
    show (``attachment:x.png`` of tools/attachments.py in both editions, staged as the file ``../images/x.png``,
    resolved against ``--home``, default ``notebooks/``);
    the catalogues of the translation; the pages of docs/ when they exist (``site_stage.DOC_PAGES``: the overview, models,
    platforms, errata, performance, publishing and instructor pages, ``docs/errata.md`` in English and
    ``docs/errata.zh-CN.md`` in Chinese, and so on); the Sphinx configuration, the home pages and the site's small
    extensions in ``tools/book/``.
Writes:
    ``--out`` (default ``site/``), replaced as a whole: ``index.html`` with the series, one page per
    notebook under ``notebooks/`` (sidebar with every notebook, the page's contents, previous/next,
    a download button for the ``.ipynb``, as it is with its figures attached, a banner saying which
    weights it ran on, the link to the other edition; on every page a link to the repository and a
    launch menu that opens the page's notebook in the repository, ``notebooks/`` or ``notebooks/zh/``,
    in Google Colab and on Binder: the address is ``[project.urls] Repository`` of pyproject.toml),
    ``docs/<page>.html`` for each page of docs/ (``docs/errata.html``, ...), search, and the theme's and MathJax's
    files in ``_static/``; the same for the Chinese edition under ``zh/``. The notebooks' reveal.js slide decks
    (tools/slides.py): ``slides/NN_name.slides.html`` and ``zh/slides/NN_name.slides.html``, reveal.js and MathJax for
    them in ``slides/_static/``. The series
    printed, one PDF per edition (tools/build_pdf.py, headless Chromium): ``pdf/llama3-step-by-step.pdf`` and
    ``zh/pdf/llama3-step-by-step.zh-CN.pdf``.
    Nothing is loaded from outside ``--out`` (links lead out of it): the site works from ``file://`` and from
    any static server.
Raises:
    SiteError (printed as one line, exit status 2): a notebook of the series missing from ``--src`` or
    never executed, a markdown image that is missing, empty, outside the repository or remote, any
    Sphinx warning (a notebook without the ``llama3`` run metadata among them), an ``--out`` folder
    that holds something other than a site. Without a Chromium or a Chinese font to print the PDFs with, the
    site is built without them (one note says what to install) and its home pages do not link them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import build_pdf
import i18n
import plumbing
import slides
from site_stage import (
    BOOK,
    DOCS,
    EDITIONS,
    REPO_ROOT,
    Edition,
    SiteError,
    doc_pages,
    errata_page,
    page_names,
    served_files,
    source_files,
    stage_files,
    translated,
    write_files,
)

__all__ = ["EDITIONS", "DOCS", "SiteError", "build", "build_editions", "doc_pages", "errata_page", "translated"]


def sphinx_command(
    srcdir: Path,
    outdir: Path,
    edition: Edition,
    other: dict | None = None,
    verbose: bool = False,
    python: str = sys.executable,
    tags: tuple[str, ...] = (),
) -> list[str]:
    """The command line that builds ``srcdir`` into ``outdir`` as HTML, with tools/book/conf.py.

    ``-E -a``: a fresh build of every page; ``-W --keep-going``: every warning is an error, all of them
    reported; ``-q`` unless ``verbose``. ``other`` describes the other edition for the links between them
    (tools/book/editions.py); the edition's own settings follow its ``-D language``.
    """
    settings = [("language", edition.language), *edition.sphinx_settings()]
    if other:
        settings.append(("llama3_other_edition", json.dumps(other, ensure_ascii=False)))
    command = [
        python,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-c",
        str(BOOK),
        "-d",
        str(outdir.parent / "doctrees"),
        "-E",
        "-a",
        "-W",
        "--keep-going",
        "--no-color",
    ]
    command += [] if verbose else ["-q"]
    for tag in tags:  # ``pdf``: the site holds the printed series, and the home pages link it (``{only} pdf``)
        command += ["-t", tag]
    for name, value in settings:
        command += ["-D", f"{name}={value}"]
    return command + [str(srcdir), str(outdir)]


def start_sphinx(command: list[str], log: Path, verbose: bool = False) -> subprocess.Popen:
    """Start Sphinx's command line, its error stream (its warnings) into the file ``log``."""
    env = dict(os.environ, PYTHONWARNINGS="ignore::DeprecationWarning,ignore::PendingDeprecationWarning")
    with open(log, "w", encoding="utf-8") as stream:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(command, stdout=None if verbose else subprocess.DEVNULL, stderr=stream, env=env)


def finish_sphinx(process: subprocess.Popen, log: Path) -> None:
    """Wait for a Sphinx started by :func:`start_sphinx`; any warning is an error.

    Raises:
        SiteError: Sphinx warned or failed; the message holds what it printed on its error stream.
    """
    status = process.wait()
    text = log.read_text(encoding="utf-8", errors="replace").strip()
    if status or text:
        raise SiteError(f"Sphinx warned or stopped (the site treats warnings as errors):\n{text}")


def build_all(
    staged: dict[Edition, dict], work: Path, verbose: bool, others: dict[Edition, dict | None], tags: tuple[str, ...] = ()
) -> dict[Edition, Path]:
    """Build every staged edition at once (one ``python -m sphinx`` each, side by side), each in its own
    folder ``work/<language>/``: ``src/`` the staged files, ``html/`` the pages (then the staged files that
    the site serves as they are, :func:`site_stage.served_files`); return edition -> ``html/``.

    Raises:
        SiteError: a build warned or failed (see :func:`finish_sphinx`).
    """
    running = {}
    for edition, files in staged.items():
        folder = work / edition.language
        write_files(source_files(files), folder / "src")
        command = sphinx_command(folder / "src", folder / "html", edition, others[edition], verbose, tags=tags)
        running[edition] = start_sphinx(command, folder / "sphinx.log", verbose)
    try:
        for edition, process in running.items():
            finish_sphinx(process, work / edition.language / "sphinx.log")
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    built = {}
    for edition in staged:
        built[edition] = html = work / edition.language / "html"
        write_files(served_files(staged[edition]), html)  # the notebooks with their attachments, for download
        # Sphinx's build record, and the themes' template macros that they ship among their static files
        for leftover in [html / ".buildinfo", html / ".buildinfo.bak", *(html / "_static").glob("*webpack-macros.html")]:
            leftover.unlink(missing_ok=True)
    return built


def replace(out: Path, built: Path) -> None:
    """Put the site folder ``built`` in place of ``out`` (moved beside it, then renamed: no half-built site).

    Raises:
        SiteError: ``out`` holds something other than a site.
    """
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise SiteError(f"{out} is not empty and holds no index.html; refusing to replace it with the site.")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.move(built, tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def build(
    src: Path,
    out: Path,
    home: Path = REPO_ROOT / "notebooks",
    stems: list[str] | None = None,
    language: str = "en",
    docs: Path | None = DOCS,
    verbose: bool = False,
) -> list[Path]:
    """Build one edition of the site from the executed notebooks ``src/NN_*.ipynb`` into ``out``, alone.

    Args:
        src: folder of executed notebooks.
        out: the site folder, replaced whole.
        home: folder that markdown image paths are relative to.
        stems: the notebooks, in order (default: ``plumbing.series_notebooks()``).
        language: ``en`` or ``zh_CN`` (a translated edition holds the notebooks translated completely).
        docs: the folder of the errata pages and instructor guides (``None``: no such page).
        verbose: print Sphinx's progress.

    Returns:
        The pages written: ``index.html``, one page per notebook in order, then the pages of docs/ if any.

    Raises:
        SiteError: see the module docstring.
    """
    return build_editions(src, out, home, stems, languages=(language,), docs=docs, verbose=verbose)[language]


def other_edition(edition: Edition, root: Edition, other: Edition, pages: list[str]) -> dict:
    """What ``edition``'s pages need to link to ``other``'s (tools/book/editions.py's ``llama3_other_edition``)."""
    up = "" if edition is root else "../" * (edition.folder.count("/") + 1)
    return {"label": other.label, "lang": other.lang, "root": up + (f"{other.folder}/" if other.folder else ""), "pages": pages}


def build_editions(
    src: Path,
    out: Path,
    home: Path = REPO_ROOT / "notebooks",
    stems: list[str] | None = None,
    languages: tuple[str, ...] = ("en", "zh_CN"),
    docs: Path | None = DOCS,
    verbose: bool = False,
) -> dict[str, list[Path]]:
    """Build the site, every edition of ``languages`` (the first at the root of ``out``, the others in
    their folders), from the executed notebooks ``src/NN_*.ipynb``; see :func:`build`.

    Returns:
        language -> the pages of that edition (``index.html``, the notebooks in order, the pages of docs/).

    Raises:
        SiteError: see the module docstring.
    """
    src, out, home = Path(src), Path(out), Path(home)
    stems = [p.stem for p in plumbing.series_notebooks()] if stems is None else list(stems)
    if not stems:
        raise SiteError("The series has no notebooks (notebooks/NN_*.ipynb).")
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise SiteError(f"{out} is not empty and holds no index.html; refusing to replace it with the site.")
    editions = [EDITIONS[lang] for lang in languages]
    included = {e.language: translated(src, stems, e.language) for e in editions}
    errata = {e.language: doc_pages(docs, e) for e in editions}  # the errata page and the instructor guide
    pages = {e.language: page_names(included[e.language], errata[e.language]) for e in editions}
    staged = {e.language: stage_files(src, included[e.language], home, e, errata[e.language]) for e in editions}
    root = editions[0]
    others = {}  # two editions: each page links to its counterpart
    for edition in editions:
        other = [e for e in editions if e is not edition]
        others[edition] = other_edition(edition, root, other[0], pages[other[0].language]) if other else None
    try:  # the printed series needs a Chromium (and a Chinese font); without them the site has no PDFs
        build_pdf.find_chromium()
        build_pdf.check_cjk_font(languages)
        printed = True
    except build_pdf.PrintUnavailable as e:
        print(f"note: the site is built without its PDFs: {e}", file=sys.stderr)
        printed = False
    with tempfile.TemporaryDirectory(prefix="llama3-site-") as work:
        built = build_all({e: staged[e.language] for e in editions}, Path(work), verbose, others, ("pdf",) if printed else ())
        site = built[root]
        for edition in editions[1:]:
            shutil.move(built[edition], site / edition.folder)
        slides.site_decks(src, site, {e.language: (e.folder, included[e.language]) for e in editions})  # tools/slides.py
        if printed:
            build_pdf.site_pdfs(staged, included, stems, site, verbose)  # tools/build_pdf.py: pdf/*.pdf, Chromium's print
        replace(out, site)
    return {e.language: [out / e.folder / f"{name}.html" for name in pages[e.language]] for e in editions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=REPO_ROOT / "build", help="folder of executed NN_*.ipynb (default build/)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "site", help="the site folder, replaced whole (default site/)")
    parser.add_argument(
        "--home", type=Path, default=REPO_ROOT / "notebooks", help="folder that markdown image paths are relative to (default notebooks/)"
    )
    parser.add_argument("--verbose", action="store_true", help="print Sphinx's progress")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        editions = build_editions(args.src, args.out, args.home, verbose=args.verbose)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts = ", ".join(
        f"{len(pages)} pages in {EDITIONS[lang].label}" + (f" ({EDITIONS[lang].folder}/)" if EDITIONS[lang].folder else "")
        for lang, pages in editions.items()
    )
    print(f"site written in {args.out}: {counts} ({time.perf_counter() - start:.1f} s); open {args.out / 'index.html'} or serve the folder")
    for lang, pages in editions.items():
        included = {p.stem for p in pages if p.parent.name == "notebooks"}
        left = [nb for nb in plumbing.series_notebooks() if nb.stem not in included]
        older = [nb.stem for nb in left if not i18n.problems(nb, lang)]  # translated, but --src ran an older text
        if older:
            print(
                f"note: left out of the {EDITIONS[lang].label} edition: {', '.join(older)}, whose copies in "
                f"{args.src} ran an older text than notebooks/ has (`make run` executes them again)"
            )
        if len(left) > len(older):
            print(
                f"note: left out of the {EDITIONS[lang].label} edition: "
                f"{', '.join(nb.stem for nb in left if nb.stem not in older)}, whose translation is incomplete "
                "(python tools/i18n.py check)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
