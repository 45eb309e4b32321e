"""Stage each edition's Sphinx source folder (home page, notebooks, figures, docs pages) for tools/build_site.py.

:func:`stage_files` maps each file of an edition's source folder to a path to copy or the text to write. The folder
mirrors the repository (``index.md``, ``notebooks/``, ``images/``, ``docs/``), so image paths relative to a page stay
right. Notebooks carry their figures as attachments, which MyST-NB does not show: Sphinx reads a copy that names
the files (:func:`shown_notebook`), and the download button serves the notebook itself (:data:`SERVED`).
"""

from __future__ import annotations

import posixpath
import re
import shutil
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import unquote

import nbformat

from tools import attachments
from tools import i18n
from tools import interface
import plumbing

REPO_ROOT = Path(__file__).resolve().parent.parent
BOOK = Path(__file__).resolve().parent / "book"  # conf.py, the extensions, index.md, _static/
DOCS = REPO_ROOT / "docs"
#: the built site's folder that the download button serves (conf.py: html_copy_source); staged files under it are
#: written there after Sphinx, in place of Sphinx's copy (:func:`served_files`)
SERVED = "_sources/"


class SiteError(Exception):
    """The site cannot be built; the message says why and what to do."""


@dataclass(frozen=True)
class Edition:
    """One language of the site; the fields from ``errata`` on name its file in docs/ for each of :data:`DOC_PAGES`."""

    language: str  # Sphinx's language
    folder: str  # where it goes inside the site: "" (the root) or "zh"
    name: str  # its name in English; :attr:`label` is the name in its own language
    lang: str  # its HTML language tag
    index: str  # its home page in tools/book/
    settings: tuple = ()  # Sphinx settings of its own, (name, value) pairs (conf.py has the English ones)
    copyright: str = ""  # conf.py's copyright line (English), to translate (none: conf.py's)
    errata: str = ""
    instructor: str = ""
    overview: str = ""
    models: str = ""
    platforms: str = ""
    performance: str = ""
    publishing: str = ""

    @property
    def label(self) -> str:
        """Its name in its own language (interface.po), the words of the link to it from the other edition.

        Raises:
            plumbing.Llama3Error: interface.po lacks it (so does :meth:`sphinx_settings`).
        """
        return interface.text("edition.name", self.name, self.language)

    def sphinx_settings(self) -> list[tuple[str, str]]:
        """Its ``-D`` settings after ``language``: its copyright line, translated, then :attr:`settings`."""
        own = [("copyright", interface.text("edition.copyright", self.copyright, self.language))] if self.copyright else []
        return own + list(self.settings)


#: The pages of docs/ on the site, ``docs/<page>``, after the notebooks in this order (a missing file is left out).
DOC_PAGES = ("overview", "models", "platforms", "errata", "performance", "publishing", "instructor")
EDITIONS = {
    "en": Edition("en", "", "English", "en", "index.md", **{page: f"{page}.md" for page in DOC_PAGES}),
    "zh_CN": Edition(
        "zh_CN",
        "zh",
        "Chinese edition",
        "zh-CN",
        "index.zh_CN.md",
        settings=(("llama3_notebooks", f"notebooks/{i18n.EDITIONS['zh_CN']}"),),  # its launch links: notebooks/zh/
        copyright="the Llama 3, step by step authors; text and figures CC BY 4.0, code Apache-2.0",
        **{page: f"{page}.zh-CN.md" for page in DOC_PAGES},
    ),
}
#: Folders of the built site that other tools write, not Sphinx: links to them stay plain links (:func:`site_link`).
SITE_ONLY = ("slides", "pdf")


# --------------------------------------------------------------------------- notebooks


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


def notebook_file(path: Path, language: str) -> Path | str:
    """The executed notebook at ``path`` in the ``language`` edition: the file for English, else ``i18n.notebook_text``.

    Raises:
        SiteError: see :func:`read_executed`; or the translation of a markdown cell is missing or stale.
    """
    read_executed(path)
    if language == "en":
        return path
    try:
        return i18n.notebook_text(path, language)
    except plumbing.Llama3Error as e:
        raise SiteError(f"{path.name} has no complete translation: {e}") from None


def edition_notebook(path: Path, language: str) -> nbformat.NotebookNode:
    """The notebook that :func:`notebook_file` gives, read: what the download button serves."""
    staged = notebook_file(path, language)
    return nbformat.read(staged, as_version=4) if isinstance(staged, Path) else nbformat.reads(staged, as_version=4)


def shown_notebook(nb, language: str = "en") -> nbformat.NotebookNode | None:
    """The copy of ``nb`` that Sphinx renders, or ``None`` when that is ``nb`` itself.

    Attachments become files (``attachment:x.png`` -> ``../images/x.png``, Chinese ``../images/zh/x.png``): MyST-NB
    does not show attachments (executablebooks/MyST-NB issues 492 and 655). Code is highlighted as ``ipython3``, so
    that the Colab cell's ``!git`` and ``%pip`` lines raise no warning, which would stop the build.
    """
    shown = attachments.file_references(nb, None if language == "en" else language)
    info = shown.metadata.get("language_info")
    if info is not None and info.get("name") == "python":
        info["pygments_lexer"] = "ipython3"
    return None if shown == nb else shown


def translated(src: Path, stems: list[str], language: str) -> list[str]:
    """The notebooks of ``stems`` whose markdown is completely translated into ``language``.

    Raises:
        SiteError: a notebook is missing from ``src`` or never ran (:func:`read_executed`).
    """
    for stem in stems:
        read_executed(src / f"{stem}.ipynb")  # a clear message for a notebook that is missing or never ran
    if language == "en":
        return list(stems)
    return [stem for stem in stems if not i18n.problems(src / f"{stem}.ipynb", language)]


def errata_page(docs: Path | None, edition: Edition) -> Path | None:
    """The edition's errata page in ``docs``, when it exists."""
    path = docs / edition.errata if docs is not None else None
    return path if path is not None and path.is_file() else None


def doc_pages(docs: Path | None, edition: Edition) -> dict[str, Path]:
    """The edition's pages of ``docs`` that exist, in :data:`DOC_PAGES`' order: Sphinx's name -> the file."""
    found = {}
    for page in DOC_PAGES:
        name = getattr(edition, page)
        path = docs / name if docs is not None and name else None
        if path is not None and path.is_file():
            found[f"docs/{page}"] = path
    return found


def page_names(stems: list[str], errata=False) -> list[str]:
    """Sphinx's names of an edition's pages: ``index``, ``notebooks/NN_name`` in order, then the pages of docs/.

    ``errata``: :func:`doc_pages`' names (``True``: the errata page alone; ``False``: none).
    """
    docs = ["docs/errata"] if errata is True else [] if errata is False else list(errata)
    return ["index"] + [f"notebooks/{stem}" for stem in stems] + docs


# --------------------------------------------------------------------------- images

MD_IMAGE = re.compile(r'!\[[^\]]*\]\(\s*<?(?P<src>[^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HTML_IMG = re.compile(r'<img\b[^>]*?\bsrc\s*=\s*(?P<q>["\'])(?P<src>.+?)(?P=q)', re.I)
REMOTE = re.compile(r"([a-z][a-z0-9+.-]*:|//)", re.I)


def image_sources(markdown: str) -> list[str]:
    """The image addresses of ``markdown`` (``![..](src)`` and ``<img src=..>``), embedded ones left out."""
    found = [m["src"] for m in MD_IMAGE.finditer(markdown)] + [m["src"] for m in HTML_IMG.finditer(markdown)]
    return [src for src in found if not src.startswith(("data:", "attachment:"))]


def page_images(markdown: str, name: str, folder: Path, staged: str, within: Path) -> dict[str, Path]:
    """The images of a page: where each goes in the source folder -> the file to copy there.

    ``folder``: the page's folder in the repository; ``staged``: in the source folder (``notebooks``, ``docs``,
    ``""``); ``within``: the folder that every image must be in.

    Raises:
        SiteError: an image is a remote address, missing, empty, or outside ``within`` or the site.
    """
    found = {}
    for src in image_sources(markdown):
        if REMOTE.match(src):
            raise SiteError(f"{name}: the image {src} is a remote address; the site must work offline, so save it under images/.")
        relative = unquote(src.split("#")[0].split("?")[0])
        path = (folder / relative).resolve()
        if not path.is_file() or path.stat().st_size == 0:
            raise SiteError(f"{name}: the image {src} is missing or empty (looked for {path}).")
        where = posixpath.normpath(posixpath.join(staged, relative))
        if not path.is_relative_to(within.resolve()) or where.startswith("../") or posixpath.isabs(where):
            raise SiteError(f"{name}: the image {src} is outside {within.resolve()}; keep images in images/.")
        found[where] = path
    return found


def markdown_of(nb) -> str:
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


# --------------------------------------------------------------------------- links of the pages of docs/

DOC_FILE = "(?:" + "|".join(DOC_PAGES) + r")(?:\.[A-Za-z_-]+)?\.md"
ERRATA_LINK = re.compile(rf"\[(?P<text>[^\]]*)\]\((?P<target>{DOC_FILE})\)")
SITE_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\(\.\./(?P<target>(?:" + "|".join(SITE_ONLY) + r")/[^)\s]+)\)")
NOTEBOOK_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\(\.\./notebooks/(?P<stem>\d\d_\w+)\.ipynb(?P<anchor>#[^)\s]*)?\)")
REPO_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>(?![a-z][a-z0-9+.-]*:|#|/)[^)\s]+)\)", re.I)
#: CJK ideographs, CJK and full-width punctuation: a line break between two of them is no space in Chinese
WIDE = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
WIDE_BREAK = re.compile(f"(?<=[{WIDE}])[ \\t]*\\n[ \\t]*(?=[{WIDE}])")


def errata_link(m: re.Match, edition: Edition) -> str:
    """A link from a page of docs/ to one of :data:`DOC_PAGES`: to this language's file as its staged name
    (``errata.md``); to the other language's (``errata.zh-CN.md``) as an HTML link into the other edition."""
    for page in DOC_PAGES:
        if getattr(edition, page) == m["target"]:
            return f"[{m['text']}]({page}.md)"
        other = [e for e in EDITIONS.values() if getattr(e, page) == m["target"] and e is not edition]
        if other:
            to_root = "../" * (2 if edition.folder else 1)  # from docs/<page>.html (in zh/ for the Chinese edition)
            folder = f"{other[0].folder}/" if other[0].folder else ""
            return f'<a href="{to_root}{folder}docs/{page}.html" hreflang="{other[0].lang}">{escape(m["text"])}</a>'
    return m[0]


def site_link(m: re.Match) -> str:
    """A link from a page of docs/ to :data:`SITE_ONLY` (``../slides/...``), as plain HTML: Sphinx would look for a page."""
    return f'<a href="../{escape(m["target"])}">{escape(m["text"])}</a>'


def notebook_link(m: re.Match, edition: Edition, stems: list[str]) -> str:
    """A link from an errata page to a notebook that this edition left out (its translation is incomplete),
    as a link to the notebook's English page; links to the edition's own notebooks stay."""
    if m["stem"] in stems or not edition.folder:
        return m[0]
    return f'<a href="../../notebooks/{m["stem"]}.html{m["anchor"] or ""}" hreflang="en">{escape(m["text"])}</a>'


def repo_link(m: re.Match, folder: Path, repo_root: Path = REPO_ROOT) -> str:
    """A link from a page in ``folder`` to a file of the repository that is no page of the site (a README),
    as its text and the file's path in the repository; links to the notebooks and errata pages stay."""
    target = m["target"].split("#")[0]
    if re.fullmatch(rf"\.\./notebooks/(zh/)?\d\d_\w+\.ipynb|{DOC_FILE}", target):
        return m[0]
    path = (folder / unquote(target)).resolve()
    root = repo_root.resolve()
    where = path.relative_to(root).as_posix() if path.is_relative_to(root) else target
    return m["text"] if m["text"].strip("` ") == where else f"{m['text']} (`{where}`)"


def east_asian_line_breaks(markdown: str) -> str:
    """``markdown`` without the line breaks between two Chinese characters, outside fenced code.

    A browser shows such a break as a space, a gap in Chinese text (as Pandoc's ``east_asian_line_breaks``).
    """
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[ \t]*$)", markdown, flags=re.M | re.S)
    return "".join(part if i % 2 else WIDE_BREAK.sub("", part) for i, part in enumerate(parts))


def errata_text(text: str, edition: Edition, stems: list[str], folder: Path, repo_root: Path = REPO_ROOT) -> str:
    """A page of docs/ (markdown, from ``folder``) as ``edition``'s ``docs/<page>.md``, its links rewritten for the site.

    ``../notebooks/zh/`` links lead to the edition's own notebook pages; ``stems``: the notebooks it has.
    """
    text = text.replace("](../notebooks/zh/", "](../notebooks/")
    text = NOTEBOOK_LINK.sub(lambda m: notebook_link(m, edition, stems), text)
    text = SITE_LINK.sub(site_link, text)
    text = ERRATA_LINK.sub(lambda m: errata_link(m, edition), text)
    text = REPO_LINK.sub(lambda m: repo_link(m, folder, repo_root), text)
    return east_asian_line_breaks(text) if edition.folder else text


# --------------------------------------------------------------------------- staging


def stage_files(
    src: Path,
    stems: list[str],
    home: Path,
    edition: Edition = EDITIONS["en"],
    errata: dict[str, Path] | Path | None = None,
    book: Path = BOOK,
    repo_root: Path = REPO_ROOT,
) -> dict[str, Path | str]:
    """The source folder of one edition: relative path -> a file to copy or the text to write.

    ``stems``: the edition's notebooks in ``src``, in order; ``home``: their folder in the repository;
    ``errata``: :func:`doc_pages`' map (a path: the errata page alone; ``None``: none).

    Raises:
        SiteError: a notebook is missing, never ran or not translated; an image is missing or remote.
    """
    index = book / edition.index
    files: dict[str, Path | str] = {"index.md": index}
    files.update(page_images(index.read_text(encoding="utf-8"), index.name, repo_root, "", repo_root))
    for stem in stems:
        path = src / f"{stem}.ipynb"
        staged = notebook_file(path, edition.language)
        nb = nbformat.read(staged, as_version=4) if isinstance(staged, Path) else nbformat.reads(staged, as_version=4)
        shown = shown_notebook(nb, edition.language)
        if shown is None:
            files[f"notebooks/{path.name}"] = staged
        else:  # rendered with file paths; downloaded as it is
            files[f"notebooks/{path.name}"] = nbformat.writes(shown) + "\n"
            files[f"{SERVED}notebooks/{path.name}"] = staged
            nb = shown
        files.update(page_images(markdown_of(nb), path.name, home, "notebooks", home.resolve().parent))
    pages = {} if errata is None else {"docs/errata": errata} if isinstance(errata, Path) else errata
    for name, page in pages.items():
        text = errata_text(page.read_text(encoding="utf-8"), edition, stems, page.parent, repo_root)
        files[f"{name}.md"] = text
        files.update(page_images(text, page.name, page.parent, "docs", page.parent.resolve().parent))
    return files


def source_files(files: dict[str, Path | str]) -> dict[str, Path | str]:
    """The entries of :func:`stage_files`'s map that go into Sphinx's source folder."""
    return {name: content for name, content in files.items() if not name.startswith(SERVED)}


def served_files(files: dict[str, Path | str]) -> dict[str, Path | str]:
    """The entries of :func:`stage_files`'s map that go into the built site, after Sphinx (:data:`SERVED`)."""
    return {name: content for name, content in files.items() if name.startswith(SERVED)}


def write_files(files: dict[str, Path | str], dest: Path) -> None:
    """Write :func:`stage_files`'s map into the folder ``dest`` (text as UTF-8, files copied)."""
    for name, content in files.items():
        to = dest / name
        to.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copy2(content, to)
        else:
            to.write_text(content, encoding="utf-8")
