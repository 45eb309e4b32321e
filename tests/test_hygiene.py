"""The committed notebooks are clean: what nbval, a course export and a reviewer would trip on."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import nbformat
import pytest

import plumbing

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = plumbing.series_notebooks()

URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")
PATTERNS = {
    "an absolute path": re.compile(r"(?:^|[\s'\"(=\[<])(?:/(?:[\w.@-]+/)+[\w.@-]*|[A-Za-z]:\\|~/)"),
    "a memory address": re.compile(r"\b0x[0-9a-fA-F]{6,}\b"),
    "a date": re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b|\b\d{1,2}:\d\d:\d\d\b"),
    "a timing": re.compile(r"(?i)\bwall time\b|\bcpu times\b|\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|sec|seconds)\b|\d+(?:\.\d+)?s/it|it/s\b"),
}
ALLOWED_CELL_METADATA = {"tags", "jupyter"}  # jupyter: {"source_hidden": true} keeps a solution collapsed
ALLOWED_NB_METADATA = {"kernelspec", "language_info", "llama3"}  # llama3: the weights and prompt of the run


def output_text(output) -> str:
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    data = output.get("data", {})
    return "".join(data.get("text/plain", "")) + "".join(data.get("text/html", ""))


def notebook_problems(nb) -> list[str]:
    """Everything that makes a committed notebook unclean, as readable lines (empty: clean)."""
    problems = []
    ks = nb.metadata.get("kernelspec", {})
    if ks.get("name") != "python3":
        problems.append(f"kernel spec is {ks.get('name')!r}, not 'python3'")
    extra = set(nb.metadata) - ALLOWED_NB_METADATA
    if extra:
        problems.append(f"notebook metadata has {sorted(extra)} (widget state or other bulky metadata)")
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.get("execution_count") for c in code]
    if counts != list(range(1, len(code) + 1)):
        problems.append(f"execution counts are {counts}, not 1..{len(code)} top to bottom")
    user_words = {w for w in (socket.gethostname(),) if len(w) >= 4}
    for i, cell in enumerate(nb.cells):
        extra = set(cell.get("metadata", {})) - ALLOWED_CELL_METADATA
        if extra:
            problems.append(f"cell {i}: metadata {sorted(extra)}")
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                problems.append(f"cell {i}: error output ({out.get('ename')})")
            if kind == "stream" and out.get("name") == "stderr":
                problems.append(f"cell {i}: output on stderr: {''.join(out.get('text', ''))[:80]!r}")
            text = URL.sub("", output_text(out))
            for what, pattern in PATTERNS.items():
                m = pattern.search(text)
                if m:
                    problems.append(f"cell {i}: {what} in the output: {m.group(0).strip()!r}")
            for word in user_words:
                if word in text:
                    problems.append(f"cell {i}: the host name in the output")
    return problems


def test_the_series_is_numbered_and_listed():
    """Notebooks are numbered 01, 02, ... in order, and both READMEs link every one."""
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert numbers[:1] == [1] and numbers == sorted(set(numbers)), numbers
    for readme in (ROOT / "README.md", ROOT / "notebooks" / "README.md"):
        text = readme.read_text(encoding="utf-8")
        missing = [p.name for p in NOTEBOOKS if p.name not in text]
        assert not missing, f"{readme.relative_to(ROOT)} does not mention {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_is_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert notebook_problems(nb) == []


def make_nb(cells_outputs, counts=None):
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
                   "language_info": {"name": "python"}}
    for i, text in enumerate(cells_outputs):
        cell = nbformat.v4.new_code_cell("print('x')", execution_count=(counts or range(1, 99))[i])
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        nb.cells.append(cell)
    return nb


def test_a_clean_small_notebook_passes():
    assert notebook_problems(make_nb(["shape [17, 4096]\n", "bitwise equal\n"])) == []


@pytest.mark.parametrize("text, what", [
    ("loaded /home/alice/llama/consolidated.00.pth\n", "an absolute path"),
    ("weights in /work/main/data/standin\n", "an absolute path"),
    ("<function f at 0x7f3a2c1b9e40>\n", "a memory address"),
    ("run on 2026-11-30\n", "a date"),
    ("CPU times: user 1.2 s\n", "a timing"),
    ("took 153 ms\n", "a timing"),
])
def test_hygiene_catches_a_bad_output(text, what):
    problems = notebook_problems(make_nb(["fine\n", text]))
    assert any(what in p for p in problems), problems


def test_hygiene_catches_out_of_order_cells():
    problems = notebook_problems(make_nb(["a\n", "b\n", "c\n"], counts=[1, 3, 2]))
    assert any("execution counts" in p for p in problems)


def test_hygiene_catches_unexecuted_cells_stderr_errors_and_widgets():
    nb = make_nb(["a\n", "b\n"], counts=[1, None])
    nb.cells[0].outputs.append(nbformat.v4.new_output("stream", name="stderr", text="UserWarning: x\n"))
    nb.cells[1].outputs.append(nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=[]))
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
    nb.metadata["kernelspec"]["name"] = "myenv"
    problems = "\n".join(notebook_problems(nb))
    for what in ("execution counts", "stderr", "error output", "widget", "kernel spec"):
        assert what in problems
