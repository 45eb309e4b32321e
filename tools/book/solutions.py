"""Sphinx extension: exercise solutions are shown collapsed on the site, behind one "Show the solution".

A solution is a cell tagged ``solution`` (NOTEBOOK_GUIDE.md): a markdown cell with the worked answer in
prose (folded in its own ``<details>`` for Jupyter or not), a code cell, or a markdown cell directly
followed by its code cell. In Jupyter the code cell's
``hide-input`` tag collapses only its code, and the printed output would give the answer away. On the
site a markdown solution and the code cell after it go together into one closed ``<details>``
element (code and output shown when opened); a code solution on its own is collapsed whole, code and
output (MyST-NB's ``hide-cell``). Only the text that MyST-NB parses is changed: the download button
serves the executed notebook as it is. The toggle's words are in the build's language (editions.py);
the Chinese edition's folds (``<summary>解答</summary>``) are recognised like the English ones.
"""

from __future__ import annotations

import json
import re

from sphinx.application import Sphinx

from editions import label

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


def collapsed(cell: dict, show: str = SHOW, hide: str = HIDE) -> dict:
    """A code cell collapsed whole, code and output, behind the solution's prompts."""
    meta = shown(cell)["metadata"]
    return {**cell, "metadata": {**meta, "tags": meta["tags"] + ["hide-cell"],
                                 "mystnb": {**meta.get("mystnb", {}), "code_prompt_show": show, "code_prompt_hide": hide}}}


def rewrite(cells: list[dict], show: str = SHOW, hide: str = HIDE) -> list[dict]:
    """The cells with every solution collapsed behind ``show`` (the toggle's words)."""
    opening = f'<details class="llama3-solution"><summary>{show}</summary>\n\n'
    out, i = [], 0
    while i < len(cells):
        cell, after = cells[i], cells[i + 1] if i + 1 < len(cells) else None
        if is_solution(cell, "markdown") and is_solution(after, "code"):
            close = {"cell_type": "markdown", "id": f"{after.get('id', i)}-end"[:64], "metadata": {}, "source": "</details>"}
            out += [{**cell, "source": opening + text(cell)}, shown(after), close]
            i += 2
            continue
        if is_solution(cell, "markdown"):
            out.append({**cell, "source": opening + text(cell) + "\n\n</details>"})
        elif is_solution(cell, "code"):
            out.append(collapsed(cell, show, hide))
        else:
            out.append(cell)
        i += 1
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
