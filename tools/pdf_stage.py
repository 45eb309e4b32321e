"""Stage the series for paper: each edition's Sphinx sources as for the site, without Colab cells, with a title page.

Reads the notebooks and pyproject.toml; writes nothing.

Raises:
    SiteError: a notebook is missing, never ran or its translation is stale; an image is missing or remote.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat

from tools import interface
from tools.site_stage import EDITIONS, REPO_ROOT, Edition, source_files, stage_files, translated

__all__ = ["WORDS", "LEFT_OUT_CELLS", "print_notebook", "notebook_title", "title_page", "print_files", "stage", "repository"]

#: Colab's cells, which tools/colab.py writes into every notebook
LEFT_OUT_CELLS = ("colab-link", "colab-setup")

#: the title page's and the printed labels' words in each edition (Chinese: interface.po, ``pdf.<key>``)
WORDS = interface.Words(
    "pdf",
    {
        "title": "Llama 3, step by step",
        "subtitle": "Meta-Llama-3-8B rebuilt one operation at a time, from text to the next token and on to generated text",
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
        "full_stop": ".",
    },
)


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
    (tools/pdf_scripts/prepare.js), and a hidden toctree of the notebooks.

    Args:
        runs: each printed notebook's ``llama3`` metadata (which weights its outputs come from) and ``stem``.
        left_out: the notebooks this edition lacks (an incomplete translation).
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
    lines = [
        f'<div id="llama3-title-page" class="llama3-title-page" lang="{edition.lang}">',
        f'<p class="llama3-title">{html.escape(words["title"])}</p>',
        f'<p class="llama3-subtitle">{html.escape(words["subtitle"])}</p>',
        f'<p>{html.escape(words["about"].format(n=len(runs)))} <a href="{html.escape(repository)}">{html.escape(repository)}</a></p>',
    ]
    if described:
        lines.append(
            f'<p class="llama3-weights">{html.escape(words["weights"] + words["colon"])}'
            f"{html.escape('; '.join(described))}{words['full_stop']}</p>"
        )
    if left_out:
        lines.append(f"<p>{html.escape(words['left_out'].format(names=', '.join(left_out)))}</p>")
    lines += [
        f'<p class="llama3-licence">{html.escape(words["licence"])}</p>',
        "</div>",
        "",
        f'<nav id="llama3-print-toc" class="llama3-print-toc" data-title="{html.escape(words["contents"])}"></nav>',
        "",
        "```{toctree}",
        ":hidden:",
        "",
        *[f"notebooks/{run['stem']}" for run in runs],
        "```",
        "",
    ]
    return "\n".join(lines)


def print_files(
    files: dict[str, Path | str], edition: Edition, stems: list[str], left_out: list[str] = (), repository: str = ""
) -> dict[str, Path | str]:
    """Sphinx's sources for the print from :func:`site_stage.stage_files`' map ``files`` of the same edition: its
    notebooks ``stems`` through :func:`print_notebook`, ``index.md`` a :func:`title_page`, no pages of docs/."""
    # the pages of docs/ (errata, instructor guide) and their images belong to the site, not to the series
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
    """Every edition's print sources (:func:`print_files`), from the executed ``src/NN_*.ipynb``, images relative
    to ``home``.

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
    """The repository's address: pyproject.toml's ``[project.urls] Repository``."""
    import tomllib

    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["project"]["urls"]["Repository"].rstrip("/")
