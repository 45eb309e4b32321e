"""Sphinx extension: exercise solutions are shown collapsed on the site, code and output together.

A solution is a code cell tagged ``solution`` (NOTEBOOK_GUIDE.md); its ``hide-input`` tag collapses
only the code in Jupyter, and its printed output would give the answer away. On the site the whole
cell goes behind one "Show the solution" button (MyST-NB's ``hide-cell``). A markdown cell tagged
``solution`` (the worked answer in prose) is collapsed the same way, in a ``<details>`` element.
Only the text that MyST-NB parses is changed: the download button serves the executed copy as it is.
"""

from __future__ import annotations

import json

from sphinx.application import Sphinx

TAG = "solution"
PROMPTS = {"code_prompt_show": "Show the solution", "code_prompt_hide": "Hide the solution"}


def collapse_solutions(app: Sphinx, docname: str, source: list[str]) -> None:
    if not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    nb = json.loads(source[0])
    changed = False
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {})
        if cell.get("cell_type") == "code" and TAG in meta.get("tags", []):
            meta["tags"] = [t for t in meta["tags"] if t not in ("hide-input", "hide-output")] + ["hide-cell"]
            meta["mystnb"] = {**meta.get("mystnb", {}), **PROMPTS}
            cell["metadata"] = meta
            changed = True
        elif cell.get("cell_type") == "markdown" and TAG in meta.get("tags", []):
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = (f'<details class="llama3-solution"><summary>{PROMPTS["code_prompt_show"]}</summary>'
                              f"\n\n{text}\n\n</details>")
            changed = True
    if changed:
        source[0] = json.dumps(nb)


def setup(app: Sphinx) -> dict:
    app.connect("source-read", collapse_solutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
