"""Build the course site (``make html``) with Sphinx, MyST-NB and sphinx-book-theme from the executed notebooks.

    python tools/build_site.py                     # build/NN_*.ipynb -> site/ (after `make run`)
    python tools/build_site.py --src notebooks     # the committed notebooks, which carry their outputs
    python tools/build_site.py --builder gettext --out build/gettext   # .pot catalogues for a translation
    python tools/build_site.py --language zh_CN --out site-zh_CN       # an edition translated in tools/book/locale/

Reads:
    the series, ``plumbing.series_notebooks()`` (every ``notebooks/NN_*.ipynb``, in order), as executed
    copies ``--src/NN_*.ipynb`` (default ``build/``; never re-executed); the images that markdown cells
    reference (``../images/x.png``, resolved against ``--home``, default ``notebooks/``); the Sphinx
    configuration and the site's small extensions in ``tools/book/``.
Writes:
    ``--out`` (default ``site/``), replaced as a whole: ``index.html`` with the series, one page per
    notebook under ``notebooks/`` (sidebar with every notebook, the page's contents, previous/next,
    a download button for the ``.ipynb``, a banner saying which weights it ran on), search, and the
    theme's and MathJax's files in ``_static/``. Nothing is loaded from outside ``--out``: the site
    works from ``file://`` and from any static server.
Raises:
    SiteError (printed as one line, exit status 2): a notebook of the series missing from ``--src`` or
    never executed, a markdown image that is missing, empty, outside the repository or remote, any
    Sphinx warning (a notebook without the ``llama3`` run metadata among them), or an ``--out`` folder
    that holds something other than a site.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from urllib.parse import unquote

import nbformat

import plumbing

REPO_ROOT = Path(__file__).resolve().parent.parent
BOOK = Path(__file__).resolve().parent / "book"  # conf.py, the extensions, index.md, _static/

MD_IMAGE = re.compile(r'!\[[^\]]*\]\(\s*<?(?P<src>[^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HTML_IMG = re.compile(r'<img\b[^>]*?\bsrc\s*=\s*(?P<q>["\'])(?P<src>.+?)(?P=q)', re.I)


class SiteError(Exception):
    """The site cannot be built; the message says why and what to do."""


def read_executed(path: Path) -> nbformat.NotebookNode:
    """Read an executed notebook of the series.

    Raises:
        SiteError: the notebook is missing, or has code cells but none was executed.
    """
    if not path.is_file():
        raise SiteError(f"{path} is missing: run `make run`, which executes every notebook of the series into build/.")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if code and not any(c.get("execution_count") or c.get("outputs") for c in code):
        raise SiteError(f"{path} was never executed: run `make run`, which executes the notebooks into build/.")
    return nb


def local_images(nb, name: str, home: Path) -> list[Path]:
    """The image files that the markdown cells of ``nb`` reference, relative to ``home``.

    Raises:
        SiteError: an image is a remote address, missing, empty, or outside ``home``'s parent folder.
    """
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for src in [m["src"] for m in MD_IMAGE.finditer(cell.source)] + [m["src"] for m in HTML_IMG.finditer(cell.source)]:
            if src.startswith(("data:", "attachment:")):
                continue
            if re.match(r"([a-z][a-z0-9+.-]*:|//)", src, re.I):
                raise SiteError(f"{name}: the image {src} is a remote address; the site must work offline, "
                                "so save it under images/.")
            path = (home / unquote(src.split("#")[0].split("?")[0])).resolve()
            if not path.is_file() or path.stat().st_size == 0:
                raise SiteError(f"{name}: the image {src} is missing or empty (looked for {path}).")
            if not path.is_relative_to(home.resolve().parent):
                raise SiteError(f"{name}: the image {src} is outside {home.resolve().parent}; keep images in images/.")
            found.append(path)
    return found


def stage(src: Path, stems: list[str], home: Path, dest: Path) -> None:
    """Write Sphinx's source folder ``dest``: ``index.md``, ``notebooks/NN_*.ipynb`` and the images they use.

    The layout mirrors the repository (``notebooks/`` beside ``images/``), so the notebooks are copied
    unchanged and the download button serves them as they are.
    """
    (dest / "notebooks").mkdir(parents=True)
    images = {REPO_ROOT / "images" / "path_overview.png": dest / "images" / "path_overview.png"}  # index.md's figure
    for stem in stems:
        path = src / f"{stem}.ipynb"
        nb = read_executed(path)
        for image in local_images(nb, path.name, home):
            images[image] = dest / image.relative_to(home.resolve().parent)
        shutil.copy2(path, dest / "notebooks" / path.name)
    for image, to in images.items():
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(image, to)
    entries = "\n".join(f"notebooks/{stem}" for stem in stems)
    index = (BOOK / "index.md").read_text(encoding="utf-8").replace("%(notebooks)s", entries)
    (dest / "index.md").write_text(index, encoding="utf-8")


def sphinx_build(srcdir: Path, outdir: Path, builder: str, language: str | None, verbose: bool) -> None:
    """Run Sphinx with tools/book/conf.py; every warning is an error.

    Raises:
        SiteError: Sphinx warned or failed; the message holds its warnings.
    """
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxError
    from sphinx.util.console import nocolor
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    nocolor()
    log = io.StringIO()
    overrides = {"language": language} if language else {}
    try:
        with patch_docutils(BOOK), docutils_namespace(), warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)  # the themes' use of Sphinx APIs, not ours to fix
            warnings.simplefilter("ignore", DeprecationWarning)
            app = Sphinx(srcdir, BOOK, outdir / builder, outdir / "doctrees", builder,
                         confoverrides=overrides, status=sys.stdout if verbose else None,
                         warning=log, freshenv=True, warningiserror=True, keep_going=True)
            app.build(force_all=True)
    except SphinxError as e:
        raise SiteError(f"Sphinx stopped: {e}\n{log.getvalue().strip()}") from None
    if app.statuscode or log.getvalue().strip():
        raise SiteError(f"Sphinx warned (the site treats warnings as errors):\n{log.getvalue().strip()}")


def build(src: Path, out: Path, home: Path = REPO_ROOT / "notebooks", stems: list[str] | None = None,
          builder: str = "html", language: str | None = None, verbose: bool = False) -> list[Path]:
    """Build the site from the executed notebooks ``src/NN_*.ipynb`` into ``out``.

    Args:
        src: folder of executed notebooks.
        out: the site folder, replaced whole.
        home: folder that markdown image paths are relative to.
        stems: the notebooks, in order (default: ``plumbing.series_notebooks()``).
        builder: Sphinx builder: ``html`` (the site) or ``gettext`` (catalogues for translators).
        language: the edition's language (default ``$LLAMA3_SITE_LANGUAGE`` or ``en``).
        verbose: print Sphinx's progress.

    Returns:
        The pages written (for ``html``: ``index.html``, then one page per notebook in order).

    Raises:
        SiteError: see the module docstring.
    """
    src, out, home = Path(src), Path(out), Path(home)
    stems = [p.stem for p in plumbing.series_notebooks()] if stems is None else list(stems)
    if not stems:
        raise SiteError("The series has no notebooks (notebooks/NN_*.ipynb).")
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file() and builder == "html":
        raise SiteError(f"{out} is not empty and holds no index.html; refusing to replace it with the site.")
    with tempfile.TemporaryDirectory(prefix="llama3-site-") as work:
        work = Path(work)
        stage(src, stems, home, work / "src")
        sphinx_build(work / "src", work / "out", builder, language, verbose)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.partial")  # moved beside out, then renamed: no half-built site
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.move(work / "out" / builder, tmp)
        # Sphinx's build record, and the themes' template macros that they ship among their static files
        for leftover in [tmp / ".buildinfo", tmp / ".buildinfo.bak", *(tmp / "_static").glob("*webpack-macros.html")]:
            leftover.unlink(missing_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    if builder != "html":
        return sorted(out.rglob("*.pot"))
    return [out / "index.html"] + [out / "notebooks" / f"{stem}.html" for stem in stems]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=REPO_ROOT / "build", help="folder of executed NN_*.ipynb (default build/)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "site", help="the site folder, replaced whole (default site/)")
    parser.add_argument("--home", type=Path, default=REPO_ROOT / "notebooks",
                        help="folder that markdown image paths are relative to (default notebooks/)")
    parser.add_argument("--builder", default="html", choices=["html", "gettext"],
                        help="html: the site; gettext: .pot message catalogues for translators")
    parser.add_argument("--language", help="language of the edition, e.g. zh_CN (default $LLAMA3_SITE_LANGUAGE or en)")
    parser.add_argument("--verbose", action="store_true", help="print Sphinx's progress")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        pages = build(args.src, args.out, args.home, builder=args.builder, language=args.language, verbose=args.verbose)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    what = "pages" if args.builder == "html" else "catalogues"
    print(f"site written: {len(pages)} {what} in {args.out} ({time.perf_counter() - start:.1f} s)"
          + (f"; open {args.out / 'index.html'} or serve the folder" if args.builder == "html" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
