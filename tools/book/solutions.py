"""Sphinx extension: exercise solutions are shown collapsed on the site, behind one "Show the solution".

A solution is a run of cells tagged ``solution`` (CONTRIBUTING.md): prose in a markdown cell (perhaps folded for
Jupyter in ``<details>``, the Chinese edition's with ``<summary>解答</summary>``), code cells, or both. The whole run
goes into one closed ``<details class="llama3-solution">``, the code cells without their hide tags (no second
toggle). Only what MyST-NB parses changes: the download button serves the notebook as it is.
"""

from __future__ import annotations

import json
import re

from sphinx.application import Sphinx

from tools.book.editions import label

TAG = "solution"
SHOW, HIDE = "Show the solution", "Hide the solution"  # the English edition's words (editions.LABELS)
HIDE_TAGS = ("hide-input", "hide-output", "hide-cell")


def is_solution(cell: dict | None, kind: str) -> bool:
    return bool(cell) and cell.get("cell_type") == kind and TAG in cell.get("metadata", {}).get("tags", [])


#: A solution that its markdown already folds for Jupyter (``<details><summary>...</summary> ... </details>``).
FOLDED = re.compile(r"^\s*<details[^>]*>\s*(?:<summary>.*?</summary>)?\s*(?P<body>.*?)\s*</details>\s*$", re.S | re.I)


def text(cell: dict) -> str:
    """The cell's markdown, without the ``<details>`` fold it may carry for Jupyter (the site folds it)."""
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    folded = FOLDED.match(source)
    return folded["body"] if folded else source


def shown(cell: dict) -> dict:
    """``cell`` with its hide tags removed (it is inside a collapsed solution already)."""
    meta = cell.get("metadata", {})
    return {**cell, "metadata": {**meta, "tags": [t for t in meta.get("tags", []) if t not in HIDE_TAGS]}}


def marker(source: str, cell_id: str) -> dict:
    """A markdown cell of raw HTML that opens or closes a solution's ``<details>``."""
    return {"cell_type": "markdown", "id": cell_id[:64], "metadata": {}, "source": source}


def rewrite(cells: list[dict], show: str = SHOW, hide: str = HIDE) -> list[dict]:
    """The cells with each solution collapsed behind one toggle, ``show``; ``hide`` is unused, kept for the callers."""
    opening = f'<details class="llama3-solution"><summary>{show}</summary>\n\n'
    out, i = [], 0
    while i < len(cells):
        cell = cells[i]
        if not is_solution(cell, cell.get("cell_type")):
            out.append(cell)
            i += 1
            continue
        first = cell.get("id") or f"solution-{i}"
        prose = cell if cell.get("cell_type") == "markdown" else None
        i += 1 if prose else 0
        code = []
        while i < len(cells) and is_solution(cells[i], "code"):
            code.append(shown(cells[i]))
            i += 1
        if prose and not code:  # prose alone: one cell, opened and closed
            out.append({**prose, "source": opening + text(prose) + "\n\n</details>"})
            continue
        out.append({**prose, "source": opening + text(prose)} if prose else marker(opening, f"{first}-start"))
        out += code
        out.append(marker("</details>", f"{code[-1].get('id') or first}-end"))
    return out


def collapse_solutions(app: Sphinx, docname: str, source: list[str]) -> None:
    if not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    nb = json.loads(source[0])
    cells = nb.get("cells", [])
    if any(is_solution(c, c.get("cell_type")) for c in cells):
        nb["cells"] = rewrite(cells, label(app, "show_solution"), label(app, "hide_solution"))
        source[0] = json.dumps(nb)


def setup(app: Sphinx) -> dict:
    app.connect("source-read", collapse_solutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
