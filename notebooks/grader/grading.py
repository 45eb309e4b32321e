"""The autograder: run a student's notebook on the weights in use and grade it step by step.

The steps a learner writes are code cells found by metadata: ``nbgrader`` says ``solution: true`` and gives
the step's ``grade_id``; in the series, which shows no markers, ``llama3.solution_lines`` gives the solution's
first and last line; the student edition puts nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION``
around its stub, where the learner writes. :mod:`grader.steps` says, for each step, which values to read
from the student's kernel and how to check them. The checks run here, in the grader's process, from the
package: Meta's reference code (``llama_models``) or its formula, applied to the student's own inputs of
that step. So a mistake in one step costs that step only (the next step is checked on what the student
actually fed it), and editing or deleting the notebook's visible checks changes nothing.

A step's inputs (``Step.inputs``) are read before its cell as well as after: a cell that changes them fails.
While every earlier step passed, they must also be what those steps gave and what the reference chain gives
(``Step.given``: the checkpoint's tensors, Meta's modules' outputs), so a cell slipped in before a step to change
its input fails that step. float32 intermediates pass within the tolerance each check states (another order of
a sum, ``1 / torch.sqrt`` for ``torch.rsqrt``); the bf16 values after them are compared bitwise, computed from the
student's own float32 values. :mod:`grader.tripwire` watches, while the notebook runs, for calls from a
solution's lines of the functions the step forbids, however they were bound.

A step is

``passed``         its values equal the reference's (bitwise unless the step states a tolerance)
``failed``         they differ, the cell raised an error other than ``NotImplementedError``, or a value is missing
``not attempted``  the cell still raises the student edition's ``NotImplementedError``, or it is missing
``shortcut``       the solution calls the library function it was meant to write (``F.rms_norm`` in the
                   RMSNorm step, ``F.scaled_dot_product_attention`` in attention, ``F.silu`` where SiLU is
                   written), by its name (the source) or another (the tripwires), or Meta's or Hugging Face's
                   code, or ``plumbing.reference``; no points, whatever its values

Only the notebook's core path runs (up to the last graded step, without the cells the series marks
``llama3.grading = "skip"``), in a fresh kernel, with ``LLAMA3_PROMPT`` and ``LLAMA3_EXPORT_DIR`` unset: the default
prompt, nothing written. Used by ``python -m plumbing grade NOTEBOOK [--json]`` and ``make grade NOTEBOOK=...``.
"""

from __future__ import annotations

import ast
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import cast

from plumbing.errors import Llama3Error
from .cells import BEGIN, END, FORBIDDEN_MODULES, frame, learner_region, left_out, shortcuts_in, solution_region, stub, untouched
from .compare import compare
from .context import Context
from .kernel import CAPTURE_ENV, TIMEOUT, _error_of, capture, execute, load_values

__all__ = [
    "BEGIN",
    "END",
    "FORBIDDEN_MODULES",
    "CAPTURE_ENV",
    "TIMEOUT",
    "NOT_ATTEMPTED",
    "Step",
    "Result",
    "Report",
    "Context",
    "capture",
    "compare",
    "execute",
    "grade",
    "learner_region",
    "series_notebook",
    "shortcuts_in",
    "solution_region",
    "steps_of",
    "stub",
]

NOT_ATTEMPTED = "NotImplementedError"  # the stub's exception: a step whose cell raises it was not attempted
BEFORE = ".before"  # the suffix of a step's capture of its inputs before its cell runs


@dataclass(frozen=True)
class Step:
    """One graded step: a code cell of the series whose marked lines the learner writes.

    Attributes:
        grade_id: nbgrader's ``grade_id`` of the cell, e.g. ``"03-mean-square"`` (notebook number first).
        cell: the cell's id in the series' notebook (and in the student edition, which keeps ids).
        title: what the step computes, for the report.
        task: what the learner writes, for the student edition's stub (English; the Chinese student edition's is in
            locale/zh_CN/LC_MESSAGES/interface.po, context ``task <grade_id>``, which tools/interface.py reads: this
            package ships without locale/, in GitHub Classroom's template).
        capture: a Python expression evaluated in the student's kernel after ``after``: a dict of the
            values the check needs (tensors, numbers, lists, dicts of those).
        check: ``check(values, context) -> list[str]``: the problems found (empty: passed). It must use
            only ``values`` and ``context`` (the grader's own checkpoint and Meta's code).
        after: the cell after which to capture (default: the step's own cell).
        points: what the step is worth.
        shortcuts: names whose call in the solution is a shortcut (``"rms_norm"`` catches ``F.rms_norm``
            and ``torch.nn.functional.rms_norm``).
        inputs: keys of ``capture`` that earlier cells give the step: read before the cell too, and the step fails
            when its cell changes them.
        given: ``given(context) -> {key: value}``: what the reference chain (the checkpoint and Meta's code) gives
            for some of ``inputs``; while no earlier step of the notebook failed, a step whose input differs fails.
    """

    grade_id: str
    cell: str
    title: str
    task: str
    capture: str
    check: Callable[[dict, Context], list[str]]
    after: str | None = None
    points: int = 1
    shortcuts: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    given: Callable[[Context], dict] | None = None


@dataclass
class Result:
    """The grade of one step."""

    grade_id: str
    title: str
    status: str  # "passed", "failed", "not attempted" or "shortcut"
    points: int
    max_points: int
    detail: str = ""


@dataclass
class Report:
    """The grade of one notebook: one :class:`Result` per step, in the notebook's order."""

    notebook: str
    series: str
    results: list[Result] = field(default_factory=list)

    @property
    def points(self) -> int:
        return sum(r.points for r in self.results)

    @property
    def max_points(self) -> int:
        return sum(r.max_points for r in self.results)

    def text(self) -> str:
        """The report as printed: one line per step, then the total."""
        width = max((len(r.title) for r in self.results), default=0)
        lines = [f"Grading {self.notebook} (steps of {self.series})"]
        for r in self.results:
            lines.append(f"  {r.grade_id:<24} {r.title:<{width}}  {r.status:<13} {r.points}/{r.max_points}")
            if r.detail:
                lines += [f"      {line}" for line in r.detail.splitlines()]
        lines.append(f"Total: {self.points}/{self.max_points} points")
        return "\n".join(lines)

    def json(self) -> str:
        return json.dumps(
            {
                "notebook": self.notebook,
                "series": self.series,
                "points": self.points,
                "max_points": self.max_points,
                "steps": [asdict(r) for r in self.results],
            },
            indent=1,
        )


def series_notebook(path: Path, nb=None) -> Path:
    """The series' notebook whose steps ``path`` has: by its name (``03_rmsnorm.ipynb`` in any folder), else by the
    ``grade_id`` of its graded cells (a file renamed by a learning platform's download, ``alice_03_rmsnorm.ipynb``)."""
    from plumbing.paths import series_notebooks

    for series in series_notebooks():
        if path.name == series.name:
            return series
    numbers = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")[:3] for c in (nb.cells if nb else [])}
    found = [series for series in series_notebooks() if f"{series.stem[:2]}-" in numbers]
    if len(found) == 1:
        return found[0]
    names = ", ".join(series.name for series in series_notebooks())
    raise Llama3Error(
        f"{path.name} is not a notebook of the series: its name is none of {names}, and its graded cells "
        "(nbgrader metadata) do not name one notebook"
    )


def steps_of(series: Path) -> list[Step]:
    """The graded steps of a notebook of the series, in its order."""
    from .steps import STEPS

    return list(STEPS.get(series.stem[:2], []))


def grade(path: str | os.PathLike, checkpoint=None, timeout: int = TIMEOUT) -> Report:
    """Run the student's notebook ``path`` and grade each of its steps.

    Args:
        path: a notebook of the student edition (or any copy of a series notebook, which gets full marks),
            named as in the series (``03_rmsnorm.ipynb``) or holding its graded cells.
        checkpoint: the checkpoint the checks use (default: the one the notebooks open, ``LLAMA3_DIR`` or the
            stand-in).
        timeout: seconds allowed per cell; a longer cell is interrupted, and its step fails.

    Returns:
        A :class:`Report`.

    Raises:
        Llama3Error: ``path`` is missing, not a notebook, or not a notebook of the series.
    """
    import nbformat
    import torch

    from plumbing.checkpoint import open_checkpoint
    from plumbing.paths import display_path

    path = Path(path)
    if not path.is_file():
        raise Llama3Error(f"no notebook at {display_path(path)}; give the path of the student's .ipynb file")
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as e:
        raise Llama3Error(f"{display_path(path)} is not a readable notebook ({type(e).__name__}: {e})") from None
    series = series_notebook(path, nb)
    steps = steps_of(series)
    report = Report(display_path(path), series.name)
    series_nb = nbformat.read(series, as_version=4)
    solution, anchor = _step_cells(nb, series_nb, steps)
    series_cells = {c.get("id"): c for c in series_nb.cells}
    captures: dict[int, list[Step]] = {}  # id() of a cell -> the steps captured after it
    s: Step | None  # a step; in the loop over the cells, None for a cell that holds no step's solution
    for s in steps:
        if anchor[s.grade_id] is not None:
            captures.setdefault(id(anchor[s.grade_id]), []).append(s)
    last = max((i for i, c in enumerate(nb.cells) if id(c) in captures), default=-1)
    with tempfile.TemporaryDirectory(prefix="llama3-grade-") as tmp:
        capture_dir = Path(tmp)
        run_cells = []
        before = {id(solution[s.grade_id]): s for s in steps if solution[s.grade_id] is not None}
        for cell in nb.cells[: last + 1]:  # the core path, up to the last step's values, without the cells left out
            if (s := before.get(id(cell))) is None and left_out(series_cells.get(cell.get("id"))):
                continue
            if s is not None:  # its inputs as earlier cells left them, and the tripwires on its solution lines
                if s.inputs:
                    code = f"__import__('grader.grading').grading.capture({s.grade_id + BEFORE!r}, globals(), {_inputs_expression(s)!r})"
                    run_cells.append(nbformat.v4.new_code_cell(code))
                first, last_line = frame(cell, learner_region(cell, series_cells.get(s.cell)), series_cells.get(s.cell))
                code = (
                    f"__import__('grader.tripwire').tripwire.arm({s.grade_id!r}, {cell.source!r}, {first}, "
                    f"{last_line}, {tuple(s.shortcuts)!r})"
                )
                run_cells.append(nbformat.v4.new_code_cell(code))
            run_cells.append(cell)
            for s in captures.get(id(cell), []):
                code = f"__import__('grader.grading').grading.capture({s.grade_id!r}, globals(), {s.capture!r})"
                run_cells.append(nbformat.v4.new_code_cell(code))
        run = nbformat.v4.new_notebook(cells=run_cells, metadata=nb.metadata)
        stopped = execute(run, series.parent, capture_dir, timeout)
        ckpt = checkpoint if checkpoint is not None else open_checkpoint(None)
        context = Context(ckpt)
        produced: dict[str, object] = {}  # the values of the steps that passed, by name: what later steps must be given
        for s in steps:
            clean = all(r.status == "passed" for r in report.results)
            result = _grade_step(
                s,
                solution[s.grade_id],
                capture_dir,
                context,
                torch,
                timeout,
                stopped,
                produced if clean else None,
                series_cells.get(s.cell),
            )
            if result.status == "passed":
                values = load_values(capture_dir / f"{s.grade_id}.pt")
                produced.update({k: v for k, v in values.items() if k not in s.inputs})
            unfinished = [r.grade_id for r in report.results if r.status in ("not attempted", "failed")]
            if result.status == "failed" and unfinished and "NameError" in result.detail:
                result.detail += f"\n(it uses values of an earlier step that gave none: {', '.join(unfinished)})"
            report.results.append(result)
    return report


def _step_cells(nb, series_nb, steps: list[Step]) -> tuple[dict, dict]:
    """Each step's cell in the student's notebook and the cell after which its values are read (grade_id -> cell,
    or None). A cell is found by its id; a graded cell whose id changed (or a notebook saved without ids) by its
    nbgrader ``grade_id``; another cell by its source, which the student edition leaves as it is in the series."""
    by_id: dict[str | None, object] = {}
    by_grade: dict[str | None, object] = {}
    by_source: dict[str | None, object] = {}
    for c in nb.cells:
        by_id.setdefault(c.get("id"), c)
        by_grade.setdefault(c.get("metadata", {}).get("nbgrader", {}).get("grade_id"), c)
        by_source.setdefault(c.get("source"), c)
    series_source = {c.get("id"): c.get("source") for c in series_nb.cells}
    solution, anchor = {}, {}
    for s in steps:
        cell = by_grade.get(s.grade_id) or by_id.get(s.cell)
        solution[s.grade_id] = cell
        if s.after is None or cell is None:
            anchor[s.grade_id] = cell
        else:
            anchor[s.grade_id] = by_id.get(s.after) or by_source.get(series_source.get(s.after))
    return solution, anchor


def _inputs_expression(s: Step) -> str:
    """The part of ``s.capture`` (a dict display) that reads the step's inputs."""
    tree = ast.parse(s.capture, mode="eval").body
    if not isinstance(tree, ast.Dict):
        raise Llama3Error(f"step {s.grade_id}: its capture is not a dict display, so its inputs cannot be read")
    items = {ast.literal_eval(cast(ast.expr, k)): ast.get_source_segment(s.capture, v) for k, v in zip(tree.keys, tree.values)}
    missing = [n for n in s.inputs if n not in items]
    if missing:
        raise Llama3Error(f"step {s.grade_id}: inputs {missing} are not keys of its capture")
    return "{" + ", ".join(f"{n!r}: {items[n]}" for n in s.inputs) + "}"


def _input_problems(s: Step, values: dict, capture_dir: Path, context: Context, torch, produced: dict | None) -> list[str]:
    """The step's inputs changed by its own cell, or (while every earlier step passed: ``produced``, their values)
    not what those steps gave, nor what the reference chain gives."""
    saved = capture_dir / f"{s.grade_id}{BEFORE}.pt"
    if not s.inputs or not saved.exists():
        return []
    before = load_values(saved)
    problems = []
    for name in s.inputs:
        if compare(name, values.get(name), before[name]):
            problems.append(f"the cell changes its input {name}: a step reads its inputs and leaves them as they are")
    if problems or produced is None:
        return problems
    expected_inputs = {n: produced[n] for n in s.inputs if n in produced}
    expected_inputs.update(s.given(context) if s.given else {})
    for name, expected in expected_inputs.items():
        found = compare(name, before[name], expected)
        if found:
            problems += [
                f"the input {p}, against what the earlier steps, the checkpoint and Meta's code give (a cell before this step changed it)"
                for p in found
            ]
    return problems


def _grade_step(
    s: Step,
    cell,
    capture_dir: Path,
    context: Context,
    torch,
    timeout: int = 0,
    stopped: str = "",
    produced: dict | None = None,
    series_cell=None,
) -> Result:
    def result(status, detail=""):
        return Result(s.grade_id, s.title, status, s.points if status == "passed" else 0, s.points, detail)

    if cell is None:
        return result("not attempted", f"the cell {s.cell} is missing")
    region = learner_region(cell, series_cell)
    code = region[0] if region else cell.source
    error = _error_of(cell)
    if (error and error[0] == NOT_ATTEMPTED) or untouched(code):  # the stub as handed out, whatever else is missing
        return result("not attempted")
    found = shortcuts_in(code, s.shortcuts)
    tripped = capture_dir / f"{s.grade_id}.shortcut"
    if tripped.exists():
        named = {f.split()[1].split(".")[-1] for f in found if f.startswith("calls ")}  # the source check's names
        found = sorted(
            set(found)
            | {t for t in tripped.read_text(encoding="utf-8").splitlines() if not (t.startswith("calls ") and t.split()[1] in named)}
        )
    if found:
        return result("shortcut", "; ".join(found) + ": this step is to be written by hand")
    if error and error[0] == "KeyboardInterrupt":
        return result("failed", f"the cell ran longer than {timeout} s and was stopped")
    if error:
        return result("failed", f"the cell raised {error[0]}: {error[1]}")
    saved = capture_dir / f"{s.grade_id}.pt"
    if not saved.exists():
        why_file = capture_dir / f"{s.grade_id}.error"
        why = why_file.read_text(encoding="utf-8") if why_file.exists() else stopped or "the cell did not run"
        if why.startswith(f"{NOT_ATTEMPTED}:"):  # a function whose body is still the stub
            return result("not attempted")
        return result("failed", f"could not read the step's values: {why}")
    try:
        values = load_values(saved)
    except Llama3Error as e:
        return result("failed", str(e))
    try:
        problems = _input_problems(s, values, capture_dir, context, torch, produced)
        problems = problems or s.check(values, context)
    except Exception as e:  # a value of the wrong kind (a list for a tensor, a wrong shape fed to Meta's code)
        problems = [f"{type(e).__name__}: {e}"]
    return result("failed", "\n".join(problems)) if problems else result("passed")
