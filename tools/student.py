"""Write the student edition (``make student``): the series' notebooks with the graded steps left to write.

    python -m tools.student            # writes notebooks/student/NN_*.ipynb and notebooks/student/zh/NN_*.ipynb
    python -m tools.student --check    # writes nothing; exit status 1 when a committed file is stale
    python -m tools.student --force    # also overwrites a notebook whose graded cells hold someone's code
    python -m tools.student --out DIR  # writes DIR/NN_*.ipynb and DIR/zh/NN_*.ipynb instead

Raises (one line, exit status 2): ``StudentError``: a graded step whose cell is missing or names no solution lines,
a marked cell that is not a graded step, or a file to overwrite whose graded cells hold code.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path

import nbformat

from tools import interface
import plumbing
from grader.grading import NOT_ATTEMPTED, solution_region, stub
from grader.steps import STEPS

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO_ROOT / "notebooks"
OUT = NOTEBOOKS / "student"
#: (language, folder of the series' notebooks, folder of the student edition)
EDITIONS = (("en", NOTEBOOKS, OUT), ("zh", NOTEBOOKS / "zh", OUT / "zh"))

#: The edition's own words (Chinese: interface.po, ``student.<key>``)
WORDS = interface.Words(
    "student",
    {
        "note": "**Student edition.** The {n} code cells that raise `NotImplementedError` are yours to write: in each, "
        "the comments say what to compute; write it in their place, and delete the `raise` line. The checks after them "
        "tell you when a step is right. To grade the notebook (in the repository): "
        "`make grade NOTEBOOK=notebooks/student/{path}`; it runs the notebook and checks each step against Meta's "
        "reference code: {steps}.",
        "deep_dives": "## Deep dives\n\nThis notebook's deep dives are in the series' notebook and on the course site: "
        "they write the graded steps again, so read them once your steps pass.",
        "point": " ({n} point)",
        "points": " ({n} points)",
        "withheld": "*(Left out of the student edition: this code is the answer to the notebook's graded steps. "
        "Section 4 says what to compute; read Meta's code in `llama_models/llama3/model.py` once your steps pass.)*",
        "warm_up": "Warm-up, not graded:",
        "warm_up_note": " One of them is an ungraded warm-up: the text after it gives the values to expect.",
    },
    languages=("en", "zh"),
)
#: The warm-ups' tasks, by cell id (Chinese: interface.po, ``warm_up.<id>``)
WARM_UPS = interface.Words(
    "warm_up",
    {
        "rms-08": "mean_square_small: the mean of the squares of each token's 3 numbers, shape (2, 3, 1);\n"
        "rms_small: its square root; normed_small: x_small divided by sqrt(mean_square_small + inputs.params.norm_eps).",
    },
    languages=("en", "zh"),
)
FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.M | re.S)
#: The heading of a notebook's last section, "## Deep dives" ("## 深入探讨 · Deep dives")
DEEP_DIVES = re.compile(r"^##\s+(?:.*·\s*)?Deep dives\s*$", re.M)
#: The lines that say where the exercises' solutions are (both languages)
SOLUTION_LINE = re.compile(
    r"^.*(\*\*Solution\*\*|\*\*解答\*\*|followed by its solution|hidden below its exercise"
    r"|跟着它的解答|解答都折叠).*\n?",
    re.M,
)


class StudentError(Exception):
    """The student edition cannot be written; the message says which cell and why."""


def withhold(cell, language: str) -> bool:
    """Change ``cell`` in place as its metadata ``llama3.student`` asks; True when it wrote a warm-up.

    ``{"withhold": "code"}`` (markdown): its fenced code becomes one sentence. ``{"warm_up": [first, last]}`` (code):
    those lines (from 1) become the ungraded task of :data:`WARM_UPS` as comments and ``raise NotImplementedError()``.

    Raises:
        StudentError: any other value.
    """
    asked = cell.get("metadata", {}).get("llama3", {}).pop("student", None)
    if not asked:
        return False
    language = "zh" if language.startswith("zh") else "en"
    if cell.cell_type == "markdown" and asked.get("withhold") == "code":
        cell.source = FENCE.sub(WORDS[language]["withheld"], cell.source)
    elif cell.cell_type == "code" and "warm_up" in asked:
        first, last = asked["warm_up"]
        lines = cell.source.split("\n")
        task = [WORDS[language]["warm_up"], *WARM_UPS[language][cell.get("id")].split("\n")]
        cell.source = "\n".join(lines[: first - 1] + [f"# {line}" for line in task] + ["raise NotImplementedError()"] + lines[last:])
    else:
        raise StudentError(
            f"cell {cell.get('id')}: metadata llama3.student {asked} is neither a markdown cell's "
            '{"withhold": "code"} nor a code cell\'s {"warm_up": [first, last]}'
        )
    if not cell.metadata["llama3"]:
        del cell.metadata["llama3"]
    return "warm_up" in asked


def student_notebook(nb, number: str, language: str, path: str):
    """The student edition of ``nb`` (a copy): notebook ``number`` (``"03"``) in ``language`` (``"en"``, ``"zh"``),
    at ``path`` under notebooks/student/ (``zh/03_rmsnorm.ipynb``).

    Raises:
        StudentError: see the module's docstring.
    """
    steps = {s.cell: s for s in STEPS.get(number, [])}
    try:
        words = WORDS[language]
    except plumbing.Llama3Error as e:
        raise StudentError(f"{path}: {e}") from None
    out = copy.deepcopy(nb)
    cells, seen = [], set()
    deep = next((i for i, c in enumerate(out.cells) if c.cell_type == "markdown" and DEEP_DIVES.match(c.source)), len(out.cells))
    if deep < len(out.cells):  # the deep dives write the steps again: they stay in the series
        note = nbformat.v4.new_markdown_cell(words["deep_dives"])
        note.id = "student-deep-dives"
        out.cells = out.cells[:deep] + [note]
    warm_ups = 0
    for cell in out.cells:
        if "solution" in cell.get("metadata", {}).get("tags", []):
            continue  # an exercise's solution
        if withhold(cell, language):
            warm_ups += 1
        if cell.cell_type == "markdown":
            cell.source = SOLUTION_LINE.sub("", cell.source)
            cell.source = cell.source.replace("/blob/main/notebooks/", "/blob/main/notebooks/student/")
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            marked = cell.metadata.get("nbgrader", {}).get("solution", False)
            if marked or cell.get("id") in steps:
                step = steps.get(cell.get("id"))
                if step is None or not marked:
                    raise StudentError(
                        f"{path}: cell {cell.get('id')} is "
                        + (
                            "marked as a solution but is not a graded step (grader.steps)"
                            if step is None
                            else "a graded step without nbgrader's metadata"
                        )
                    )
                try:
                    cell.source = stub(cell, interface.task(step, language))
                except plumbing.Llama3Error as e:
                    raise StudentError(f"{path}: cell {cell.get('id')}: {e}") from None
                cell.metadata.pop("llama3", None)  # the markers say where the learner's lines are
                seen.add(step.cell)
        cells.append(cell)
    missing = sorted(set(steps) - seen)
    if missing:
        raise StudentError(f"{path}: the graded cells {', '.join(missing)} are missing")
    titles = ", ".join(f"`{s.grade_id}`" + words["point" if s.points == 1 else "points"].format(n=s.points) for s in STEPS.get(number, []))
    note = words["note"].format(n=len(steps) + warm_ups, path=path, steps=titles or "none")
    note = nbformat.v4.new_markdown_cell(note + (words["warm_up_note"] if warm_ups else ""))
    note.id = "student-note"
    cells.insert(1, note)
    out.cells = cells
    out.metadata.pop("llama3", None)  # it describes a run; this notebook has not run
    return out


def student_files(out: Path = OUT) -> dict[Path, str]:
    """Every file of the student edition under ``out``, and its text."""
    files = {}
    for language, source, target in EDITIONS:
        for series in plumbing.series_notebooks():
            nb = nbformat.read(source / series.name, as_version=4)
            relative = target.relative_to(OUT) / series.name
            edition = student_notebook(nb, series.stem[:2], language, relative.as_posix())
            files[out / relative] = nbformat.writes(edition) + "\n"
    return files


def written_cells(path: Path) -> list[str]:
    """The ``grade_id``s of the graded cells at ``path`` that no longer hold a stub (``["the whole file"]``: unreadable)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return ["the whole file"]
    stub_line = re.compile(rf"^\s*(#.*|raise {NOT_ATTEMPTED}\(\))?\s*$")
    written = []
    for cell in nb.cells:
        grading = cell.get("metadata", {}).get("nbgrader", {})
        if grading.get("solution"):
            region = solution_region(cell)
            if region is None or not all(stub_line.match(line) for line in region[0].split("\n")):
                written.append(grading.get("grade_id") or cell.get("id") or "a graded cell")
    return written


def refuse_to_overwrite(paths: list[Path]) -> None:
    """Check that none of ``paths`` holds a learner's work.

    Raises:
        StudentError: a file whose graded cells hold code, named with those cells.
    """
    written = {p: cells for p in paths if p.exists() and (cells := written_cells(p))}
    if written:
        files = "; ".join(f"{plumbing.display_path(p)} ({', '.join(cells)})" for p, cells in written.items())
        raise StudentError(
            f"not overwriting work in {files}: these graded cells no longer hold the stub. Copy the "
            "notebook elsewhere to keep it, then run `make student FORCE=1` "
            "(python -m tools.student --force) to overwrite it"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale")
    parser.add_argument("--force", action="store_true", help="overwrite notebooks whose graded cells hold code")
    parser.add_argument("--out", type=Path, default=OUT, help="the folder to write (default: notebooks/student/)")
    args = parser.parse_args(argv)
    try:
        files = student_files(args.out)
        stale = [p for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        if not args.check and not args.force:
            refuse_to_overwrite(stale)
    except StudentError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        for p in stale:
            print(f"stale: {plumbing.display_path(p)} (run `make student`)")
        return 1 if stale else 0
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        plumbing.paths.atomic_write(p, lambda tmp, text=files[p]: tmp.write_text(text, encoding="utf-8"))
    print(f"student edition: {len(files)} notebooks in {plumbing.display_path(args.out)}/ ({len(stale)} written)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
