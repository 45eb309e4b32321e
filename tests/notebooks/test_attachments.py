"""The figures travel inside the notebooks (tools/attachments.py): every image that a markdown cell of either
edition shows is an attachment of that cell, byte for byte the file in images/.

A notebook opened alone (Colab, a downloaded copy) has no ``../images/`` beside it. These tests fail when a
notebook's attachment differs from its file in images/ (a redrawn diagram), when a markdown image points at a
file instead of an attachment, or when a cell carries an attachment it does not show; the fix is
``python -m tools.attachments`` (``make diagrams`` runs it after drawing). They read files only: a second.
"""

from __future__ import annotations

import base64

import nbformat
import pytest

from tools import attachments
import plumbing

ROOT = attachments.ROOT
NOTEBOOKS = attachments.notebooks()
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(ROOT / "notebooks").with_suffix("").as_posix() for p in NOTEBOOKS])
def test_every_figure_travels_inside_its_notebook(path):
    found = attachments.problems(nbformat.read(path, as_version=4), attachments.images_of(path))
    assert not found, (
        f"{path.relative_to(ROOT)}: its figures are not the files of images/:\n"
        + "\n".join(found)
        + "\nRun `python -m tools.attachments` (it rewrites the attachments of both editions from images/)."
    )


def test_both_editions_are_checked():
    series = plumbing.series_notebooks()
    assert NOTEBOOKS[: len(series)] == series and len(NOTEBOOKS) == 2 * len(series), [p.name for p in NOTEBOOKS]
    shown = [
        name
        for path in NOTEBOOKS
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "markdown"
        for name in attachments.attached(cell.source)
    ]
    assert {f"you_are_here_{p.name[:2]}.png" for p in series} <= set(shown)


def tiny(images, markdown: str):
    """A notebook with one markdown cell and one executed code cell; ``images/a.png`` exists."""
    images.mkdir(exist_ok=True)
    (images / "a.png").write_bytes(PNG)
    code = nbformat.v4.new_code_cell("print(1)", execution_count=1, outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")])
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown), code])


def test_the_check_names_each_fault(tmp_path):
    images = tmp_path / "images"
    nb = tiny(images, "A figure: ![a](attachment:a.png)")
    good = {"a.png": {"image/png": base64.b64encode(PNG).decode("ascii")}}
    nb.cells[0]["attachments"] = good
    assert attachments.problems(nb, images) == []
    (images / "a.png").write_bytes(PNG + b"redrawn")
    assert attachments.problems(nb, images) == [f"cell {nb.cells[0].id}: its attachment a.png differs from images/a.png"]
    (images / "a.png").write_bytes(PNG)
    faults = {
        "the image ../images/a.png is a file path": "![a](../images/a.png) ![a](attachment:a.png)",
        "the image figures/b.png is a file path": '<img src="figures/b.png"> ![a](attachment:a.png)',
        "carries the attachment a.png, which it does not show": "No figure any more.",
        "shows attachment:b.png, which is not in images/": "![a](attachment:a.png) ![b](attachment:b.png)",
    }
    for fault, markdown in faults.items():
        nb.cells[0].source = markdown
        found = attachments.problems(nb, images)
        assert len(found) == 1 and fault in found[0], (fault, found)
    nb.cells[0].source = "![a](attachment:a.png)"
    del nb.cells[0]["attachments"]
    assert attachments.problems(nb, images) == [f"cell {nb.cells[0].id}: shows attachment:a.png but does not carry it"]
    nb.cells[0].source = "Remote and embedded images are no files: ![r](https://example.org/r.png) ![d](data:image/png;base64,AA)"
    assert attachments.problems(nb, images) == []


def test_the_tool_attaches_refreshes_and_prunes(tmp_path):
    images, path = tmp_path / "images", tmp_path / "01_tiny.ipynb"
    nbformat.write(tiny(images, '# Tiny\n\n![a figure](../images/a.png "title")\n\n![remote](https://example.org/r.png)'), path)
    code = nbformat.read(path, as_version=4).cells[1]
    assert attachments.update(path, images)
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].source == '# Tiny\n\n![a figure](attachment:a.png "title")\n\n![remote](https://example.org/r.png)'
    assert nb.cells[0].attachments == {"a.png": {"image/png": base64.b64encode(PNG).decode("ascii")}}
    assert nb.cells[1] == code  # code, outputs and execution counts untouched
    assert attachments.problems(nb, images) == []
    written = path.read_bytes()
    assert not attachments.update(path, images) and path.read_bytes() == written  # current: not rewritten

    (images / "a.png").write_bytes(PNG + b"redrawn")
    assert attachments.update(path, images)
    assert base64.b64decode(nbformat.read(path, as_version=4).cells[0].attachments["a.png"]["image/png"]) == PNG + b"redrawn"

    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = "# Tiny, without its figure"
    nbformat.write(nb, path)
    assert attachments.update(path, images)
    assert "attachments" not in nbformat.read(path, as_version=4).cells[0]

    nb.cells[0].source = "![b](../images/b.png)"
    nbformat.write(nb, path)
    with pytest.raises(attachments.AttachmentError, match=f"01_tiny.ipynb: cell {nb.cells[0].id} shows .*b.png"):
        attachments.update(path, images)


def test_file_references_undo_the_attachments(tmp_path):
    images = tmp_path / "images"
    nb = tiny(images, "![a](../images/a.png) and <img alt='x' src='../images/a.png'>")
    before = nbformat.writes(nb)
    assert attachments.update_cells(nb, images)
    assert nb.cells[0].source == "![a](attachment:a.png) and <img alt='x' src='attachment:a.png'>"
    assert nbformat.writes(attachments.file_references(nb)) == before
