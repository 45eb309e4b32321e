"""The grader's view of a notebook's cells: a graded cell's solution lines (marked or not), its stub, and the
shortcuts its source takes (:mod:`grader.grading`)."""

from __future__ import annotations

import ast
import textwrap

from plumbing.errors import Llama3Error

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
#: Modules whose use in a solution is always a shortcut: Meta's reference code and Hugging Face's.
FORBIDDEN_MODULES = ("llama_models", "transformers", "plumbing.reference")


def solution_region(cell) -> tuple[str, int, int] | None:
    """The solution lines of a graded cell: (their text, index of the first, index after the last), or None.

    In the student edition (and a learner's copy) they are the lines between nbgrader's markers; in the series,
    the lines that the cell's metadata ``llama3.solution_lines`` names ([first, last], counted from 1, as
    Jupyter numbers them).
    """
    lines = cell["source"].split("\n")
    begin = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    end = [i for i, line in enumerate(lines) if line.strip() == END]
    if begin or end:
        if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
            return None
        return "\n".join(lines[begin[0] + 1 : end[0]]), begin[0] + 1, end[0]
    first, last = cell.get("metadata", {}).get("llama3", {}).get("solution_lines", (0, -1))
    if not 1 <= first <= last <= len(lines):
        return None
    return "\n".join(lines[first - 1 : last]), first - 1, last


def left_out(series_cell) -> bool:
    """Whether the grader leaves this cell of the series out: the series marks it ``llama3.grading = "skip"`` (a long
    run that no step needs, such as 08's greedy and sampled runs and Meta's check of them)."""
    return series_cell is not None and series_cell.metadata.get("llama3", {}).get("grading") == "skip"


def learner_region(cell, series_cell=None) -> tuple[str, int, int] | None:
    """The learner's lines of a graded cell, as :func:`solution_region` gives them; in a cell without markers or
    metadata (nbgrader's own stubbing removes the markers), the lines between the series cell's lines before its
    solution and after it, when the cell still starts and ends with them."""
    region = solution_region(cell)
    if region is not None or series_cell is None or (theirs := solution_region(series_cell)) is None:
        return region
    series_lines, (_, b, e) = series_cell["source"].split("\n"), theirs
    if b and series_lines[b - 1].strip() == BEGIN:  # a student edition's cell: its markers are not kept either
        b, e = b - 1, e + 1
    before, after = [line.rstrip() for line in series_lines[:b]], [line.rstrip() for line in series_lines[e:]]
    lines = cell["source"].split("\n")
    stripped = [line.rstrip() for line in lines]
    end = len(lines) - len(after)
    if end < len(before) or stripped[: len(before)] != before or stripped[end:] != after:
        return None
    return "\n".join(lines[len(before) : end]), len(before), end


def frame(cell, region, series_cell) -> tuple[int, int]:
    """Give a graded cell (the grader's copy) the series cell's own lines before and after the learner's lines, so
    that an edit outside them (a line after ``### END SOLUTION``) is not run; the learner's lines stay between
    nbgrader's markers. Returns their first and last line (from 1); without a region, the whole cell's."""
    theirs = solution_region(series_cell) if series_cell is not None else None
    if region is None or theirs is None:
        return (region[1] + 1, region[2]) if region else (1, len(cell.source.split("\n")))
    lines, (_, b, e) = series_cell.source.split("\n"), theirs
    learner = region[0].split("\n")
    indent = lines[b][: len(lines[b]) - len(lines[b].lstrip())]
    cell.source = "\n".join(lines[:b] + [indent + BEGIN] + learner + [indent + END] + lines[e:])
    return b + 2, b + 1 + len(learner)


def stub(cell, task: str) -> str:
    """The source of a graded cell of the series with its solution lines replaced by the student edition's stub:
    nbgrader's markers around the task, as comments, and ``raise NotImplementedError()``.

    Raises:
        Llama3Error: the cell's metadata names no solution lines within it.
    """
    region = solution_region(cell)
    if region is None:
        raise Llama3Error(
            "a graded cell needs metadata llama3.solution_lines = [first, last] within its "
            f"{len(cell['source'].split(chr(10)))} lines:\n{cell['source']}"
        )
    lines = cell["source"].split("\n")
    _, b, e = region
    indent = lines[b][: len(lines[b]) - len(lines[b].lstrip())]
    body = [f"{indent}# {line}" for line in task.split("\n")] + [f"{indent}raise NotImplementedError()"]
    return "\n".join(lines[:b] + [indent + BEGIN] + body + [indent + END] + lines[e:])


def untouched(code: str) -> bool:
    """Whether a learner's region ``code`` is still the stub of :func:`stub`: comments and ``raise NotImplementedError()``."""
    return [line.strip() for line in code.split("\n") if line.strip()[:1] not in ("", "#")] == ["raise NotImplementedError()"]


#: Calls no step needs, which would switch off or get round the tripwires (grader/tripwire.py), which watch only the
#: kernel's own thread stacks: flagged in every step; and modules that run code in another process.
EVASIONS = ("setprofile", "settrace", "_getframe", "exec", "eval", "Thread", "system", "Popen", "spawn")
ELSEWHERE = ("subprocess", "multiprocessing", "concurrent")


def shortcuts_in(code: str, names: tuple[str, ...]) -> list[str]:
    """The shortcuts ``code`` takes: a call of one of ``names`` or :data:`EVASIONS` (as a name or an attribute), an
    import of :data:`ELSEWHERE`, or any use of Meta's or Hugging Face's code (:data:`FORBIDDEN_MODULES`). Empty when
    ``code`` does not parse (the run reports the error)."""
    try:
        tree = ast.parse(textwrap.dedent(code))  # the body of a function is indented
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in names:
                found.append(f"calls {ast.unparse(func)}")
            elif name in EVASIONS:
                found.append(f"calls {ast.unparse(func)}, which would get round the grader's watch")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"imports {m}" for m in modules if m.startswith(FORBIDDEN_MODULES)]
            found += [f"imports {m}, which would get round the grader's watch" for m in modules if m.startswith(ELSEWHERE)]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "reference"
            and isinstance(node.value, ast.Name)
            and node.value.id == "plumbing"
        ):
            found.append("uses plumbing.reference (Meta's code)")
    return sorted(set(found))
