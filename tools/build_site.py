"""Build the course site (``make html``) with Sphinx, MyST-NB and sphinx-book-theme from the executed notebooks.

    python tools/build_site.py                     # build/NN_*.ipynb -> site/ (English) and site/zh/ (中文), after `make run`
    python tools/build_site.py --src notebooks     # the committed notebooks, which carry their outputs

Two editions, built from the same executed notebooks: English in ``--out`` and Chinese in ``--out``/zh/.
The Chinese pages are the executed notebooks with their markdown translated by tools/i18n.py from the
catalogues ``locale/zh_CN/LC_MESSAGES/NN_*.po`` (code and outputs as they ran: a run on real weights
gives Chinese pages with the same outputs). A notebook whose catalogue is incomplete (missing, empty or
fuzzy entries, ``python tools/i18n.py check``) is left out of the Chinese edition, and its home page
says so. Each page links to the same page in the other edition.

Reads:
    the series, ``plumbing.series_notebooks()`` (every ``notebooks/NN_*.ipynb``, in order), as executed
    copies ``--src/NN_*.ipynb`` (default ``build/``; never re-executed); the images that markdown cells
    reference (``../images/x.png``, resolved against ``--home``, default ``notebooks/``); the catalogues
    of the translation; the errata pages ``docs/errata.md`` and ``docs/errata.zh-CN.md`` when they
    exist; the Sphinx configuration, the home pages and the site's small extensions in ``tools/book/``.
Writes:
    ``--out`` (default ``site/``), replaced as a whole: ``index.html`` with the series, one page per
    notebook under ``notebooks/`` (sidebar with every notebook, the page's contents, previous/next,
    a download button for the ``.ipynb``, a banner saying which weights it ran on, the link to the other
    edition), ``docs/errata.html``, search, and the theme's and MathJax's files in ``_static/``; the
    same for the Chinese edition under ``zh/``. Nothing is loaded from outside ``--out``: the site
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
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import unquote

import nbformat

import i18n
import plumbing

REPO_ROOT = Path(__file__).resolve().parent.parent
BOOK = Path(__file__).resolve().parent / "book"  # conf.py, the extensions, index.md, _static/
DOCS = REPO_ROOT / "docs"  # errata.md, errata.zh-CN.md

MD_IMAGE = re.compile(r'!\[[^\]]*\]\(\s*<?(?P<src>[^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HTML_IMG = re.compile(r'<img\b[^>]*?\bsrc\s*=\s*(?P<q>["\'])(?P<src>.+?)(?P=q)', re.I)


@dataclass(frozen=True)
class Edition:
    """One language of the site."""

    language: str  # Sphinx's language
    folder: str  # where it goes inside the site: "" (the root) or "zh"
    label: str  # the words of the link to it from the other edition
    lang: str  # its HTML language tag
    index: str  # its home page in tools/book/
    errata: str  # its errata page in docs/
    settings: tuple = ()  # Sphinx settings of its own, (name, value) pairs (conf.py has the English ones)


EDITIONS = {
    "en": Edition("en", "", "English", "en", "index.md", "errata.md"),
    "zh_CN": Edition("zh_CN", "zh", "中文版", "zh-CN", "index.zh_CN.md", "errata.zh-CN.md",
                     (("copyright", "Llama 3, step by step 的作者；文字和图片采用 CC BY 4.0，代码采用 Apache-2.0"),)),
}
#: the toctree of the page after the notebooks (the errata), in each edition's home page
MORE = "\n```{toctree}\n:maxdepth: 1\n\n%s\n```\n"
#: the home page's note on notebooks left out of a translated edition (their catalogue is incomplete)
MISSING = {"zh_CN": "\n**尚未收入中文版：** 以下笔记本的翻译还不完整，请先阅读英文版：%s。\n"}


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


def edition_notebook(path: Path, language: str):
    """The executed notebook at ``path`` in ``language``: as it is for English, else translated by tools/i18n.py.

    Its image links stay relative to the English notebooks' folder (``../images/``), as in the site's layout.

    Raises:
        SiteError: see :func:`read_executed`; or the translation of a markdown cell is missing or stale
            (``i18n.problems``).
    """
    nb = read_executed(path)
    if language == "en":
        return nb
    try:
        nb = i18n.translated_notebook(path, language)
    except plumbing.Llama3Error as e:
        raise SiteError(f"{path.name} has no complete translation: {e}") from None
    for cell in i18n.markdown_cells(nb):  # the generated notebooks live one folder deeper than the site's
        cell.source = cell.source.replace("](../../images/", "](../images/")
    return nb


def translated(src: Path, stems: list[str], language: str) -> list[str]:
    """The notebooks of ``stems`` whose markdown is completely translated into ``language``."""
    if language == "en":
        return list(stems)
    return [stem for stem in stems if not i18n.problems(read_executed_path(src, stem), language)]


def read_executed_path(src: Path, stem: str) -> Path:
    path = src / f"{stem}.ipynb"
    read_executed(path)  # a clear message for a notebook that is missing or never ran
    return path


def errata_page(docs: Path | None, edition: Edition) -> Path | None:
    """The edition's errata page in ``docs``, when it exists."""
    path = docs / edition.errata if docs is not None else None
    return path if path is not None and path.is_file() else None


ERRATA_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>errata(?:\.[A-Za-z_-]+)?\.md)\)")


def errata_link(m: re.Match, edition: Edition) -> str:
    """A link from an errata page to the other language's (``[中文版](errata.zh-CN.md)``), as a link to
    that page in the other edition of the site (which this edition's Sphinx does not know)."""
    other = [e for e in EDITIONS.values() if e.errata == m["target"] and e is not edition]
    if not other:
        return m[0]
    to_root = "../" * (2 if edition.folder else 1)  # from docs/errata.html (in zh/ for the Chinese edition)
    folder = f"{other[0].folder}/" if other[0].folder else ""
    return f'<a href="{to_root}{folder}docs/errata.html" hreflang="{other[0].lang}">{escape(m["text"])}</a>'


NOTEBOOK_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\(\.\./notebooks/(?P<stem>\d\d_\w+)\.ipynb(?P<anchor>#[^)\s]*)?\)")


def notebook_link(m: re.Match, edition: Edition, stems: list[str]) -> str:
    """A link from an errata page to a notebook that this edition left out (its translation is incomplete),
    as a link to the notebook's English page; links to the edition's own notebooks stay."""
    if m["stem"] in stems or not edition.folder:
        return m[0]
    return f'<a href="../../notebooks/{m["stem"]}.html{m["anchor"] or ""}" hreflang="en">{escape(m["text"])}</a>'


#: CJK ideographs, CJK and full-width punctuation: a line break between two of them is no space in Chinese
WIDE = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
WIDE_BREAK = re.compile(f"(?<=[{WIDE}])[ \\t]*\\n[ \\t]*(?=[{WIDE}])")


def east_asian_line_breaks(markdown: str) -> str:
    """``markdown`` without the line breaks that fall between two Chinese characters, outside fenced code.

    A browser shows a line break inside a paragraph as a space, which in Chinese text is a gap between
    characters (Pandoc's ``east_asian_line_breaks`` extension does the same). Block markup is untouched:
    a line that starts with a Chinese character starts no list, heading, table or fence.
    """
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[ \t]*$)", markdown, flags=re.M | re.S)
    return "".join(part if i % 2 else WIDE_BREAK.sub("", part) for i, part in enumerate(parts))


REPO_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>(?![a-z][a-z0-9+.-]*:|#|/)[^)\s]+)\)", re.I)


def repo_link(m: re.Match, folder: Path) -> str:
    """A link from a page in ``folder`` to a file of the repository that is no page of the site (a README),
    as its text and the file's path in the repository; links to the notebooks and errata pages stay."""
    target = m["target"].split("#")[0]
    if re.fullmatch(r"\.\./notebooks/(zh/)?\d\d_\w+\.ipynb|errata(\.[A-Za-z_-]+)?\.md", target):
        return m[0]
    path = (folder / unquote(target)).resolve()
    where = path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else target
    return m["text"] if m["text"].strip("` ") == where else f"{m['text']} (`{where}`)"


def stage(src: Path, stems: list[str], home: Path, dest: Path, edition: Edition = EDITIONS["en"],
          errata: Path | None = None, missing: list[str] = ()) -> list[str]:
    """Write Sphinx's source folder ``dest``: ``index.md``, ``notebooks/NN_*.ipynb``, the images they use
    and ``docs/errata.md``; return the page names (``index``, ``notebooks/NN_name``, ``docs/errata``).

    The layout mirrors the repository (``notebooks/`` beside ``images/`` and ``docs/``), so the English
    notebooks are copied unchanged and the download button serves them as they are; a translated
    edition's notebooks are written by tools/i18n.py's ``translated_notebook``.
    """
    (dest / "notebooks").mkdir(parents=True)
    images = {REPO_ROOT / "images" / "path_overview.png": dest / "images" / "path_overview.png"}  # index.md's figure
    for stem in stems:
        path = src / f"{stem}.ipynb"
        nb = edition_notebook(path, edition.language)
        for image in local_images(nb, path.name, home):
            images[image] = dest / image.relative_to(home.resolve().parent)
        if edition.language == "en":
            shutil.copy2(path, dest / "notebooks" / path.name)
        else:
            (dest / "notebooks" / path.name).write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    pages = ["index"] + [f"notebooks/{stem}" for stem in stems]
    more = ""
    if errata is not None:
        text = errata.read_text(encoding="utf-8")
        text = text.replace("](../notebooks/zh/", "](../notebooks/")  # a translated page links its own edition
        text = NOTEBOOK_LINK.sub(lambda m: notebook_link(m, edition, stems), text)
        text = ERRATA_LINK.sub(lambda m: errata_link(m, edition), text)
        text = REPO_LINK.sub(lambda m: repo_link(m, errata.parent), text)
        if edition.folder:  # a translated page (Chinese)
            text = east_asian_line_breaks(text)
        page = nbformat.v4.new_markdown_cell(text)
        for image in local_images(nbformat.v4.new_notebook(cells=[page]), errata.name, errata.parent):
            images[image] = dest / image.relative_to(errata.parent.resolve().parent)
        (dest / "docs").mkdir()
        (dest / "docs" / "errata.md").write_text(text, encoding="utf-8")
        pages.append("docs/errata")
        more = MORE % "docs/errata"
    for image, to in images.items():
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(image, to)
    entries = "\n".join(f"notebooks/{stem}" for stem in stems)
    left_out = ""
    if missing:
        english = "../" * (edition.folder.count("/") + 1)
        links = "、".join(f'<a href="{english}notebooks/{stem}.html">{stem}</a>' for stem in missing)
        left_out = MISSING.get(edition.language, "\n%s\n") % links
    index = (BOOK / edition.index).read_text(encoding="utf-8")
    index = index.replace("%(notebooks)s", entries).replace("%(more)s", more).replace("%(missing)s", left_out)
    (dest / "index.md").write_text(index, encoding="utf-8")
    return pages


def sphinx_build(srcdir: Path, outdir: Path, builder: str, language: str | None, verbose: bool,
                 other: dict | None = None, settings: dict | None = None) -> None:
    """Run Sphinx with tools/book/conf.py; every warning is an error.

    ``other`` describes the other edition for the links between them (tools/book/editions.py);
    ``settings`` override conf.py's.

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
    if other:
        overrides["llama3_other_edition"] = other
    overrides.update(settings or {})
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


def build_edition(src: Path, stems: list[str], home: Path, work: Path, edition: Edition, verbose: bool,
                  errata: Path | None = None, missing: list[str] = (), other: dict | None = None) -> Path:
    """Stage and build one edition in the folder ``work``; return the folder of its HTML."""
    stage(src, stems, home, work / "src", edition, errata, missing)
    sphinx_build(work / "src", work / "out", "html", edition.language, verbose, other, dict(edition.settings))
    built = work / "out" / "html"
    # Sphinx's build record, and the themes' template macros that they ship among their static files
    for leftover in [built / ".buildinfo", built / ".buildinfo.bak", *(built / "_static").glob("*webpack-macros.html")]:
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


def pages_of(out: Path, names: list[str]) -> list[Path]:
    return [out / f"{name}.html" for name in names]


def build(src: Path, out: Path, home: Path = REPO_ROOT / "notebooks", stems: list[str] | None = None,
          language: str = "en", docs: Path | None = DOCS, verbose: bool = False) -> list[Path]:
    """Build one edition of the site from the executed notebooks ``src/NN_*.ipynb`` into ``out``, alone.

    Args:
        src: folder of executed notebooks.
        out: the site folder, replaced whole.
        home: folder that markdown image paths are relative to.
        stems: the notebooks, in order (default: ``plumbing.series_notebooks()``).
        language: ``en`` or ``zh_CN`` (a translated edition holds the notebooks translated completely).
        docs: the folder of the errata pages (``None``: no errata page).
        verbose: print Sphinx's progress.

    Returns:
        The pages written: ``index.html``, one page per notebook in order, then the errata page if any.

    Raises:
        SiteError: see the module docstring.
    """
    return build_editions(src, out, home, stems, languages=(language,), docs=docs, verbose=verbose)[language]


def build_editions(src: Path, out: Path, home: Path = REPO_ROOT / "notebooks", stems: list[str] | None = None,
                   languages: tuple[str, ...] = ("en", "zh_CN"), docs: Path | None = DOCS,
                   verbose: bool = False) -> dict[str, list[Path]]:
    """Build the site, every edition of ``languages`` (the first at the root of ``out``, the others in
    their folders), from the executed notebooks ``src/NN_*.ipynb``; see :func:`build`.

    Returns:
        language -> the pages of that edition (``index.html``, the notebooks in order, the errata page).

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
    plan = {}  # language -> (notebooks, errata page, page names)
    for edition in editions:
        included = translated(src, stems, edition.language)
        errata = errata_page(docs, edition)
        names = ["index"] + [f"notebooks/{stem}" for stem in included] + (["docs/errata"] if errata else [])
        plan[edition.language] = (included, errata, names)
    root = editions[0]
    with tempfile.TemporaryDirectory(prefix="llama3-site-") as work:
        work = Path(work)
        built = {}
        for edition in editions:
            others = [e for e in editions if e is not edition]
            other = None
            if others:  # two editions: each page links to its counterpart
                o = others[0]
                up = "" if edition is root else "../" * (edition.folder.count("/") + 1)
                other = {"label": o.label, "lang": o.lang, "root": up + (f"{o.folder}/" if o.folder else ""),
                         "pages": plan[o.language][2]}
            included, errata, _ = plan[edition.language]
            missing = [stem for stem in stems if stem not in included]
            built[edition.language] = build_edition(src, included, home, work / edition.language, edition, verbose,
                                                    errata, missing, other)
        site = built[root.language]
        for edition in editions[1:]:
            shutil.move(built[edition.language], site / edition.folder)
        replace(out, site)
    return {e.language: pages_of(out / e.folder, plan[e.language][2]) for e in editions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=REPO_ROOT / "build", help="folder of executed NN_*.ipynb (default build/)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "site", help="the site folder, replaced whole (default site/)")
    parser.add_argument("--home", type=Path, default=REPO_ROOT / "notebooks",
                        help="folder that markdown image paths are relative to (default notebooks/)")
    parser.add_argument("--verbose", action="store_true", help="print Sphinx's progress")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        editions = build_editions(args.src, args.out, args.home, verbose=args.verbose)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{len(pages)} pages in {EDITIONS[lang].label}"
                       + (f" ({EDITIONS[lang].folder}/)" if EDITIONS[lang].folder else "")
                       for lang, pages in editions.items())
    print(f"site written in {args.out}: {counts} ({time.perf_counter() - start:.1f} s); "
          f"open {args.out / 'index.html'} or serve the folder")
    for lang, pages in editions.items():
        included = {p.stem for p in pages if p.parent.name == "notebooks"}
        left = [nb for nb in plumbing.series_notebooks() if nb.stem not in included]
        older = [nb.stem for nb in left if not i18n.problems(nb, lang)]  # translated, but --src ran an older text
        if older:
            print(f"note: left out of the {EDITIONS[lang].label} edition: {', '.join(older)}, whose copies in "
                  f"{args.src} ran an older text than notebooks/ has (`make run` executes them again)")
        if len(left) > len(older):
            print(f"note: left out of the {EDITIONS[lang].label} edition: "
                  f"{', '.join(nb.stem for nb in left if nb.stem not in older)}, whose translation is incomplete "
                  "(python tools/i18n.py check)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
