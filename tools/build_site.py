"""Export the executed notebooks to a static HTML site that works offline (``make html``).

    python tools/build_site.py                   # build/NN_*.ipynb -> site/ (after `make run`)
    python tools/build_site.py --src notebooks   # the committed notebooks, which carry their outputs

Reads:
    ``NN_*.ipynb`` in ``--src`` (default ``build/``), in name order; the images that markdown
    cells reference (``../images/x.png``), resolved against ``--home`` (default ``notebooks/``,
    where the notebooks live and run); the templates and CSS in ``tools/site/``; MathJax from
    ``tools/site/node_modules`` (installed by ``npm ci --prefix tools/site``).
Writes:
    ``--out`` (default ``site/``), replaced as a whole: ``index.html`` (the notebooks in order,
    each with a one-line summary taken from its first markdown cell and the weights it ran on),
    one ``NN_name.html`` per notebook with previous/next links, and ``assets/`` (CSS and
    MathJax). Figures are embedded in the pages, links between notebooks point at the ``.html``
    pages, and nothing is loaded from outside ``--out``: the site works from ``file://`` and
    from any static server. Pages run on real weights carry a banner that says so.
Raises:
    SiteError (printed as one line, exit status 2): no notebooks in ``--src``, a notebook that
    was never executed, a markdown image that is missing, empty or remote, MathJax not
    installed, or an ``--out`` folder that holds something other than a site.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import mimetypes
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import nbconvert
import nbformat
from jinja2 import Environment, FileSystemLoader
from nbconvert import HTMLExporter
from nbconvert.filters import markdown2html_mistune
from tqdm.auto import tqdm

REPO_ROOT = Path(__file__).resolve().parent.parent
SITE_SRC = Path(__file__).resolve().parent / "site"  # templates/, assets/, package.json
TEMPLATES = SITE_SRC / "templates"
MATHJAX = SITE_SRC / "node_modules" / "mathjax"
MATHJAX_FILE = "tex-svg-full.js"  # TeX input with every extension, SVG output: no font files
TITLE = "Llama 3, step by step"
STANDIN_PREFIX = "synthetic stand-in"  # how plumbing.WeightsSource.description starts for the stand-in

MD_IMAGE = re.compile(r'!\[(?P<alt>[^\]]*)\]\(\s*<?(?P<src>[^)\s>]+)>?(?:\s+"(?P<title>[^"]*)")?\s*\)')
HTML_IMG = re.compile(r'(?P<pre><img\b[^>]*?\bsrc\s*=\s*)(?P<q>["\'])(?P<src>.+?)(?P=q)', re.I)
NB_LINK = re.compile(r'(?P<pre>\]\(\s*<?|\bhref\s*=\s*["\'])(?:\./)?(?P<stem>[\w.-]+)\.ipynb(?=[#)>"\'\s])')


class SiteError(Exception):
    """The site cannot be built; the message says why and what to do."""


@dataclass
class Page:
    """One notebook of the series, as the site shows it."""

    stem: str  # "02_embedding_lookup"
    title: str  # the first "# " heading of the first markdown cell
    summary: str  # one sentence of the first paragraph of that cell, in markdown (see first_sentence)
    weights: str  # the text after "weights: " in the outputs, "" when not printed

    @property
    def href(self) -> str:
        return f"{self.stem}.html"

    @property
    def number(self) -> int:
        return int(self.stem[:2])

    @property
    def real(self) -> bool:
        return bool(self.weights) and not self.weights.startswith(STANDIN_PREFIX)

    @property
    def summary_html(self) -> str:
        """The summary as inline HTML (code spans kept; math is left for MathJax)."""
        out = markdown2html_mistune(self.summary).strip()
        return out[3:-4] if out.startswith("<p>") and out.endswith("</p>") else out


def read_page(path: Path) -> tuple[nbformat.NotebookNode, Page]:
    """Read an executed notebook and what the site says about it.

    Raises:
        SiteError: the notebook has code cells but none was executed.
    """
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if code and not any(c.get("execution_count") or c.get("outputs") for c in code):
        raise SiteError(f"{path} was never executed: run `make run`, which executes the notebooks into build/.")
    first_md = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
    heading = re.search(r"^#\s+(.+?)\s*#*\s*$", first_md, re.M)
    title = heading.group(1).replace("`", "") if heading else path.stem
    return nb, Page(path.stem, title, first_sentence(first_md), weights_line(nb))


def first_sentence(markdown: str) -> str:
    """The one-line summary: in the first prose paragraph (headings, images, HTML and tables
    skipped), the first sentence that starts with "This notebook", else the first sentence."""
    for para in re.split(r"\n\s*\n", markdown):
        para = " ".join(line.strip().lstrip(">").strip() for line in para.strip().splitlines())
        if para and not para.startswith(("#", "!", "<", "|")):
            sentences = re.split(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z0-9(`*$\[])", para)
            return next((s for s in sentences if s.startswith("This notebook")), sentences[0])
    return ""


def weights_line(nb) -> str:
    """The text after ``weights: `` in the first output that has such a line, or ``""``."""
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            text = out.get("text", "") if out.output_type == "stream" else out.get("data", {}).get("text/plain", "")
            m = re.search(r"^weights: (.+?)\s*$", text, re.M)
            if m:
                return m.group(1)
    return ""


def data_uri(src: str, home: Path, where: str) -> str:
    """``src`` (relative to ``home``) as a ``data:`` URI; data and attachment URIs are kept.

    Raises:
        SiteError: ``src`` is a remote address, or the file is missing or empty.
    """
    if src.startswith(("data:", "attachment:")):
        return src
    if re.match(r"([a-z][a-z0-9+.-]*:|//)", src, re.I):
        raise SiteError(f"{where}: the image {src} is a remote address; the site must work offline, so save it under images/.")
    path = home / unquote(src.split("#")[0].split("?")[0])
    if not path.is_file() or path.stat().st_size == 0:
        raise SiteError(f"{where}: the image {src} is missing or empty (looked for {path}).")
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def prepare_markdown(nb, name: str, home: Path, stems: set[str]) -> list[str]:
    """Embed local images of markdown cells as data URIs and point notebook links at the pages.

    Returns warnings: links to notebooks that are not part of the site.
    """
    warnings = []

    def md_image(m):
        title = f' title="{html.escape(m["title"])}"' if m["title"] else ""
        return f'<img src="{data_uri(m["src"], home, name)}" alt="{html.escape(m["alt"])}"{title}>'

    def link(m):
        if m["stem"] not in stems:
            warnings.append(f"{name} links to {m['stem']}.ipynb, which is not part of the site")
            return m[0]
        return f"{m['pre']}{m['stem']}.html"

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            src = MD_IMAGE.sub(md_image, cell.source)
            src = HTML_IMG.sub(lambda m: f"{m['pre']}{m['q']}{data_uri(m['src'], home, name)}{m['q']}", src)
            cell.source = NB_LINK.sub(link, src)
    return warnings


def banner(pages: list[Page], whole_site: bool) -> dict | None:
    """The note on top of a page: which weights its outputs come from (``None`` when unknown)."""
    real = [p for p in pages if p.real]
    if real and whole_site:
        return {"kind": "real", "headline": "Built from runs on real weights.",
                "text": f"{len(real)} of {len(pages)} notebooks ran on a real Llama 3 checkpoint (LLAMA3_DIR), "
                        "not on the synthetic stand-in; each page says which weights it used."}
    if real:
        return {"kind": "real", "headline": "Run on real weights:",
                "text": f"{real[0].weights}. The outputs on this page come from a real Llama 3 checkpoint "
                        "(LLAMA3_DIR), not from the synthetic stand-in."}
    if any(p.weights for p in pages):
        return {"kind": "standin", "headline": "Run on the synthetic stand-in:",
                "text": "random weights with Meta-Llama-3-8B's names, shapes and dtype, not Meta's weights. "
                        "The values differ from the real model's; shapes, dtypes and every check do not."}
    return None


def build(src: Path, out: Path, home: Path = REPO_ROOT / "notebooks", progress: bool = True) -> list[Path]:
    """Build the site from the notebooks ``src/NN_*.ipynb`` into ``out``; return the pages written.

    Raises:
        SiteError: see the module docstring.
    """
    src, out, home = Path(src), Path(out), Path(home)
    notebooks = sorted(src.glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise SiteError(f"No NN_*.ipynb notebooks in {src}: run `make run` first (or use --src notebooks).")
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise SiteError(f"{out} is not empty and holds no index.html; refusing to replace it with the site.")
    if not (MATHJAX / "es5" / MATHJAX_FILE).is_file():
        raise SiteError("MathJax is not installed in tools/site/node_modules: run `npm ci --prefix tools/site` "
                        "(needs Node.js and npm; `make html` does it).")
    read = [read_page(p) for p in notebooks]
    pages = [page for _, page in read]
    site = {"title": TITLE, "pages": pages, "page": None, "prev": None, "next": None,
            "nbconvert_version": nbconvert.__version__,
            "mathjax_version": json.loads((MATHJAX / "package.json").read_text())["version"]}

    tmp = out.with_name(f".{out.name}.partial")  # built beside out, then renamed: no half-built site
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        written = _write_site(tmp, read, site, home, progress)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return [out / p.name for p in written]


def _write_site(tmp: Path, read: list, site: dict, home: Path, progress: bool) -> list[Path]:
    """Write the site into the new folder ``tmp``; return the pages written, index first."""
    pages = site["pages"]
    stems = {p.stem for p in pages}
    shutil.copytree(SITE_SRC / "assets", tmp / "assets")
    (tmp / "assets" / "mathjax").mkdir()
    for name in (f"es5/{MATHJAX_FILE}", "LICENSE"):
        shutil.copy2(MATHJAX / name, tmp / "assets" / "mathjax")

    exporter = HTMLExporter(template_name="llama3", extra_template_basedirs=[str(TEMPLATES)], theme="light")
    warnings, written = [], [tmp / "index.html"]
    for i, (nb, page) in enumerate(tqdm(read, desc="exporting notebooks to HTML", unit="page", disable=not progress)):
        warnings += prepare_markdown(nb, page.stem + ".ipynb", home, stems)
        if not page.weights:
            warnings.append(f"{page.stem}.ipynb prints no 'weights: ' line, so its page cannot say which weights it ran on")
        context = {**site, "page": page, "prev": pages[i - 1] if i else None,
                   "next": pages[i + 1] if i + 1 < len(pages) else None, "banner": banner([page], False)}
        resources = {"metadata": {"name": f"{page.title} · {TITLE}", "path": str(home)}, "site": context}
        body, _ = exporter.from_notebook_node(nb, resources=resources)
        written.append(tmp / page.href)
        written[-1].write_text(body, encoding="utf-8")
    env = Environment(loader=FileSystemLoader(TEMPLATES / "llama3"))
    index = env.get_template("site_index.html.j2").render(site={**site, "banner": banner(pages, True)})
    (tmp / "index.html").write_text(index, encoding="utf-8")
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=REPO_ROOT / "build", help="folder of executed NN_*.ipynb (default build/)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "site", help="the site folder, replaced whole (default site/)")
    parser.add_argument("--home", type=Path, default=REPO_ROOT / "notebooks",
                        help="folder that markdown image paths are relative to (default notebooks/)")
    args = parser.parse_args(argv)
    try:
        pages = build(args.src, args.out, args.home)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"site written: {len(pages)} pages in {args.out}; open {args.out / 'index.html'} or serve the folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
