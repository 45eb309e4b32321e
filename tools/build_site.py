"""Build the course site (``make html``) with Sphinx, MyST-NB and sphinx-book-theme from the executed notebooks.

    python -m tools.build_site                     # build/NN_*.ipynb -> site/ (English) and site/zh/ (Chinese), after `make run`
    python -m tools.build_site --src notebooks     # the committed notebooks, which carry their outputs

tools/site_stage.py stages each edition; both build at once, with ``-W`` (a warning is an error). A notebook whose
translation is incomplete is left out of the Chinese edition; without a Chromium or a Chinese font the site has no
PDFs (a note says what to install). How the site is built: docs/publishing.md.

Raises:
    SiteError (one line, exit status 2): a notebook missing from ``--src`` or never executed; a markdown image missing,
    empty, remote or outside the repository; any Sphinx warning; an ``--out`` that holds something other than a site.
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

from tools import build_pdf
from tools import i18n
import plumbing
from tools import slides
from tools.site_stage import (
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

    ``other``: the other edition, for the links between them (tools/book/editions.py).
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
        str(outdir.resolve().parent / "doctrees"),
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
    return command + [str(srcdir.resolve()), str(outdir.resolve())]


def start_sphinx(command: list[str], log: Path, verbose: bool = False) -> subprocess.Popen:
    """Start Sphinx's command line from the repository root (conf.py's extensions are ``tools.book.*``), its error
    stream (its warnings) into the file ``log``."""
    env = dict(os.environ, PYTHONWARNINGS="ignore::DeprecationWarning,ignore::PendingDeprecationWarning")
    with open(log, "w", encoding="utf-8") as stream:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(command, stdout=None if verbose else subprocess.DEVNULL, stderr=stream, env=env, cwd=REPO_ROOT)


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
    """Build every staged edition at once, each into ``work/<language>/html/``; return edition -> that folder.

    Raises:
        SiteError: a build warned or failed.
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
        # Sphinx's build record, and template macros that the themes ship among their static files
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
    """Build one edition of the site from ``src/NN_*.ipynb`` into ``out``; return its pages (see :func:`build_editions`).

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
    """Build every edition of ``languages`` from ``src/NN_*.ipynb`` into ``out`` (the first at its root).

    ``home``: the folder that markdown image paths are relative to; ``docs``: ``None`` for no pages of docs/.

    Returns:
        language -> its pages: ``index.html``, the notebooks in order, the pages of docs/.

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
    errata = {e.language: doc_pages(docs, e) for e in editions}
    pages = {e.language: page_names(included[e.language], errata[e.language]) for e in editions}
    staged = {e.language: stage_files(src, included[e.language], home, e, errata[e.language]) for e in editions}
    root = editions[0]
    others = {}
    for edition in editions:
        other = [e for e in editions if e is not edition]
        others[edition] = other_edition(edition, root, other[0], pages[other[0].language]) if other else None
    try:  # without a Chromium (and a Chinese font) the site has no PDFs
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
        slides.site_decks(src, site, {e.language: (e.folder, included[e.language]) for e in editions})
        if printed:
            build_pdf.site_pdfs(staged, included, stems, site, verbose)
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
                "(python -m tools.i18n check)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
