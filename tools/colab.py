"""Write or update the two Colab cells of every notebook: the "Open in Colab" link and the setup cell.

    python -m tools.colab          # write or update the two cells in every notebooks/NN_*.ipynb

In Colab, the setup cell installs ``pyproject.toml``'s ``dependencies``, which keep Colab's own torch when it is recent
enough and hold nothing of JupyterLab, Sphinx or transformers; elsewhere it does nothing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LINK_ID, SETUP_ID = "colab-link", "colab-setup"
CLONE = "/content/llama3-step-by-step"  # where the setup cell clones the repository in Colab
#: The setup cell's metadata: its code collapsed in Jupyter (``source_hidden``) and on the site (MyST-NB's tag)
COLLAPSED = {"jupyter": {"source_hidden": True}, "tags": ["hide-input"]}


def repository() -> str:
    """The repository's address, ``https://github.com/OWNER/NAME`` (``[project.urls] Repository``)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]


def colab_url(path_in_repository: str) -> str:
    """Google Colab's address for a notebook of the repository's ``main`` branch."""
    return f"https://colab.research.google.com/github/{repository().removeprefix('https://github.com/')}/blob/main/{path_in_repository}"


def link_source(path_in_repository: str) -> str:
    """The markdown cell: the link to ``path_in_repository`` in Colab."""
    return f"**Google Colab:** [open this notebook there]({colab_url(path_in_repository)}) and run the next cell first."


def setup_source() -> str:
    """The code cell, the same in every notebook."""
    return f"""# Google Colab only (elsewhere this cell does nothing): fetch the series, install it beside Colab's own torch,
# build the synthetic stand-in and download the real small model (SmolLM2), a few minutes once per session.
# For your own weights on Google Drive, first:
#   from google.colab import drive; drive.mount("/content/drive")
#   %env LLAMA3_DIR=/content/drive/MyDrive/Llama-3.2-1B
import sys

if "google.colab" in sys.modules:
    !git clone --quiet --depth 1 {repository()} {CLONE}
    %pip install --quiet --editable {CLONE}
    !python -m plumbing build-standin
    !python -m plumbing build-smollm2
    sys.path.insert(0, "{CLONE}/notebooks")"""


def update(path: Path) -> bool:
    """Write or refresh the two cells in the notebook at ``path``; True when it changed."""
    nb = nbformat.read(path, as_version=4)
    relative = path.resolve().relative_to(ROOT).as_posix()
    want = {LINK_ID: link_source(relative), SETUP_ID: setup_source()}
    cells = {c.get("id"): c for c in nb.cells}
    if LINK_ID in cells and SETUP_ID in cells:
        changed = any(cells[k].source != v for k, v in want.items())
        for k, v in want.items():
            cells[k].source = v
    else:
        setup = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## Setup"))
        link = nbformat.v4.new_markdown_cell(want[LINK_ID])
        code = nbformat.v4.new_code_cell(want[SETUP_ID])
        link["id"], code["id"] = LINK_ID, SETUP_ID
        nb.cells[setup:setup] = [link, code]
        changed = True
    code = next(c for c in nb.cells if c.get("id") == SETUP_ID)
    if code.metadata != COLLAPSED:  # collapsed in Jupyter and on the site: the learner need not read it
        code.metadata, changed = dict(COLLAPSED), True
    if changed:
        nbformat.write(nb, path)
    return changed


def main() -> int:
    import plumbing  # installed by `make setup` (pip install --editable .), as every tool imports it

    for path in plumbing.series_notebooks():
        if update(path):
            print(f"updated {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
