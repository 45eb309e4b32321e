"""The autograder: run a student's notebook on the weights in use and grade it step by step.

The steps a learner writes are code cells found by metadata: ``nbgrader`` says ``solution: true`` and gives
the step's ``grade_id``; in the series, which shows no markers, ``llama3.solution_lines`` gives the solution's
first and last line; the student edition puts nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION``
around its stub, where the learner writes. :mod:`plumbing.grading_steps` says, for each step, which values to read
from the student's kernel and how to check them. The checks run here, in the grader's process, from the
package: Meta's reference code (``llama_models``) or its formula, applied to the student's own inputs of
that step. So a mistake in one step costs that step only (the next step is checked on what the student
actually fed it), and editing or deleting the notebook's visible checks changes nothing.

A step's inputs (``Step.inputs``) are read before its cell as well as after: a cell that changes them fails.
While every earlier step passed, they must also be what those steps gave and what the reference chain gives
(``Step.given``: the checkpoint's tensors, Meta's modules' outputs), so a cell slipped in before a step to change
its input fails that step. float32 intermediates pass within the tolerance each check states (another order of
a sum, ``1 / torch.sqrt`` for ``torch.rsqrt``); the bf16 values after them are compared bitwise, computed from the
student's own float32 values. :mod:`plumbing.tripwire` watches, while the notebook runs, for calls from a
solution's lines of the functions the step forbids, however they were bound.

A step is

``passed``         its values equal the reference's (bitwise unless the step states a tolerance)
``failed``         they differ, the cell raised an error other than ``NotImplementedError``, or a value is missing
``not attempted``  the cell still raises the student edition's ``NotImplementedError``, or it is missing
``shortcut``       the solution calls the library function it was meant to write (``F.rms_norm`` in the
                   RMSNorm step, ``F.scaled_dot_product_attention`` in attention, ``F.silu`` where SiLU is
                   written), by its name (the source) or another (the tripwires), or Meta's or Hugging Face's
                   code, or ``plumbing.reference``; no points, whatever its values

Only the notebook's core path runs (up to the last graded step), in a fresh kernel, with ``LLAMA3_PROMPT``
and ``LLAMA3_EXPORT_DIR`` unset: the default prompt, nothing written.

Used by ``python -m plumbing grade NOTEBOOK [--json]`` and ``make grade NOTEBOOK=...``.
"""

from __future__ import annotations

import ast
import json
import os
import tempfile
import textwrap
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import Llama3Error

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
#: Modules whose use in a solution is always a shortcut: Meta's reference code and Hugging Face's.
FORBIDDEN_MODULES = ("llama_models", "transformers", "plumbing.reference")
#: The stub's exception: a step whose cell raises it was not attempted.
NOT_ATTEMPTED = "NotImplementedError"
#: Seconds a cell may run before it is interrupted (its step then fails): the series' slowest cell takes a few seconds.
TIMEOUT = 120
#: Where the capture cells write; set by :func:`grade` for the kernel.
CAPTURE_ENV = "LLAMA3_GRADE_CAPTURE"
#: The suffix of a step's capture of its inputs before its cell runs.
BEFORE = ".before"


@dataclass(frozen=True)
class Step:
    """One graded step: a code cell of the series whose marked lines the learner writes.

    Attributes:
        grade_id: nbgrader's ``grade_id`` of the cell, e.g. ``"03-mean-square"`` (notebook number first).
        cell: the cell's id in the series' notebook (and in the student edition, which keeps ids).
        title: what the step computes, for the report.
        task: what the learner writes, for the student edition's stub (English).
        task_zh: the same in Chinese, for the Chinese student edition.
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
    task_zh: str
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
        return json.dumps({"notebook": self.notebook, "series": self.series, "points": self.points,
                           "max_points": self.max_points, "steps": [asdict(r) for r in self.results]}, indent=1)


class Context:
    """What a step's check may use besides the student's values: the grader's checkpoint and Meta's code."""

    def __init__(self, checkpoint):
        self.checkpoint = checkpoint
        self.params = checkpoint.params
        self._tokens, self._outputs = None, {}

    def weight(self, name: str):
        """A tensor of the checkpoint by Meta's name (``"layers.0.attention.wq.weight"``)."""
        return self.checkpoint.get(name)

    @property
    def tokens(self) -> list[int]:
        """The default prompt's token ids, as the notebooks' setup gives them (:func:`plumbing.inputs.setup`)."""
        if self._tokens is None:
            from .inputs import DEFAULT_PROMPT
            from .tokenizer import tokenize_out_of_process, tokenizer_path

            self._tokens = tokenize_out_of_process(tokenizer_path(self.checkpoint.source), DEFAULT_PROMPT)[0]
        return self._tokens

    @property
    def token_ids(self):
        """:attr:`tokens` as the notebooks hold them: [seqlen] int64."""
        import torch

        return torch.tensor(self.tokens, dtype=torch.int64)

    def meta_output(self, name: str, *more: str):
        """What Meta's submodule ``name`` (``"layers.0.attention_norm"``) returns on :attr:`tokens`, without the batch
        axis (:func:`plumbing.reference.run`; the embedding rows for ``"tok_embeddings"``); with ``more`` names, a
        tuple of each's, from one forward pass."""
        import torch

        from .reference import run

        names = (name, *more)
        missing = [n for n in names if n not in self._outputs and n != "tok_embeddings"]
        if missing:
            with torch.inference_mode():
                self._outputs.update(run(self.checkpoint, self.tokens, missing))
        rows = self.weight("tok_embeddings.weight")[torch.as_tensor(self.tokens)]  # Meta's nn.Embedding: the rows
        found = tuple(rows if n == "tok_embeddings" else self._outputs[n] for n in names)
        return found if more else found[0]

    @property
    def meta(self):
        """Meta's ``llama_models/llama3/model.py`` (:func:`plumbing.reference.meta_model_code`)."""
        from .reference import meta_model_code

        return meta_model_code()


# --------------------------------------------------------------------------- comparing values


def compare(name: str, ours, expected, *, atol: float = 0.0, rtol: float = 0.0) -> list[str]:
    """Problems of the student's ``ours`` against ``expected``: bitwise unless a tolerance is given.

    Tensors must match in shape and dtype; other values (ids, lists, dicts) must be equal.
    """
    import torch

    from .checks import same_bits

    if not isinstance(expected, torch.Tensor):
        return [] if ours == expected else [f"{name}: {_short(ours)} instead of {_short(expected)}"]
    if not isinstance(ours, torch.Tensor):
        return [f"{name}: a {type(ours).__name__}, not a tensor"]
    if ours.shape != expected.shape:
        return [f"{name}: shape {list(ours.shape)}, expected {list(expected.shape)}"]
    if ours.dtype != expected.dtype:
        return [f"{name}: dtype {ours.dtype}, expected {expected.dtype}"]
    if atol == 0 and rtol == 0:
        if same_bits(ours, expected):
            return []
    a, b = ours.detach(), expected.detach()
    if a.is_complex():  # real and imaginary parts, each within the tolerance
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    a, b = a.to(torch.float64), b.to(torch.float64)
    if (atol or rtol) and torch.allclose(a, b, rtol=rtol, atol=atol):
        return []
    gap = (a - b).abs().nan_to_num(nan=float("inf"), posinf=float("inf"))
    differ = ((a != b) & ~(gap <= atol + rtol * b.abs())) if a.numel() else a.bool()
    diff = gap.max().item() if a.numel() else 0.0
    first = ""
    if differ.any():
        at = [int(i) for i in differ.nonzero()[0]]
        first = f"; first at {at}: {a[tuple(at)].item():.6g} instead of {b[tuple(at)].item():.6g}"
    within = f", tolerance {f'rtol {rtol:g}' if rtol else ''}{' + ' if rtol and atol else ''}{f'atol {atol:g}' if atol else ''}" \
        if atol or rtol else ""
    return [f"{name}: {int(differ.sum())} of {a.numel():,} values differ (max abs diff {diff:.3g}{within}){first}"]


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# --------------------------------------------------------------------------- the notebook's marked cells


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
        return "\n".join(lines[begin[0] + 1:end[0]]), begin[0] + 1, end[0]
    first, last = cell.get("metadata", {}).get("llama3", {}).get("solution_lines", (0, -1))
    if not 1 <= first <= last <= len(lines):
        return None
    return "\n".join(lines[first - 1:last]), first - 1, last


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
    if end < len(before) or stripped[:len(before)] != before or stripped[end:] != after:
        return None
    return "\n".join(lines[len(before):end]), len(before), end


def stub(cell, task: str) -> str:
    """The source of a graded cell of the series with its solution lines replaced by the student edition's stub:
    nbgrader's markers around the task, as comments, and ``raise NotImplementedError()``.

    Raises:
        Llama3Error: the cell's metadata names no solution lines within it.
    """
    region = solution_region(cell)
    if region is None:
        raise Llama3Error("a graded cell needs metadata llama3.solution_lines = [first, last] within its "
                          f"{len(cell['source'].split(chr(10)))} lines:\n{cell['source']}")
    lines = cell["source"].split("\n")
    _, b, e = region
    indent = lines[b][: len(lines[b]) - len(lines[b].lstrip())]
    body = [f"{indent}# {line}" for line in task.split("\n")] + [f"{indent}raise NotImplementedError()"]
    return "\n".join(lines[:b] + [indent + BEGIN] + body + [indent + END] + lines[e:])


def shortcuts_in(code: str, names: tuple[str, ...]) -> list[str]:
    """The shortcuts ``code`` takes: a call of one of ``names`` (as a name or an attribute), or any use of
    Meta's or Hugging Face's code (:data:`FORBIDDEN_MODULES`). Empty when ``code`` does not parse (the run
    reports the error)."""
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
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"imports {m}" for m in modules if m.startswith(FORBIDDEN_MODULES)]
        elif isinstance(node, ast.Attribute) and node.attr == "reference" and isinstance(node.value, ast.Name) \
                and node.value.id == "plumbing":
            found.append("uses plumbing.reference (Meta's code)")
    return sorted(set(found))


# --------------------------------------------------------------------------- running the student's kernel


def capture(grade_id: str, namespace: Mapping, expression: str) -> None:
    """Called in the student's kernel by the grader's capture cells: evaluate ``expression`` there and save
    its values (or the error) for the grader, in the folder ``$LLAMA3_GRADE_CAPTURE``."""
    import torch

    folder = Path(os.environ[CAPTURE_ENV])
    try:
        values = eval(expression, dict(namespace))  # noqa: S307 (the grader's own expression)
        torch.save(_detached(values), folder / f"{grade_id}.pt")
    except Exception as e:  # the student's state is what it is: report, never stop the run
        (folder / f"{grade_id}.error").write_text(f"{type(e).__name__}: {e}", encoding="utf-8")


def _detached(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value)
    return value


def series_notebook(path: Path, nb=None) -> Path:
    """The series' notebook whose steps ``path`` has: by its name (``03_rmsnorm.ipynb`` in any folder), else by the
    ``grade_id`` of its graded cells (a file renamed by a learning platform's download, ``alice_03_rmsnorm.ipynb``)."""
    from .paths import series_notebooks

    for series in series_notebooks():
        if path.name == series.name:
            return series
    numbers = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")[:3] for c in (nb.cells if nb else [])}
    found = [series for series in series_notebooks() if f"{series.stem[:2]}-" in numbers]
    if len(found) == 1:
        return found[0]
    names = ", ".join(series.name for series in series_notebooks())
    raise Llama3Error(f"{path.name} is not a notebook of the series: its name is none of {names}, and its graded cells "
                      "(nbgrader metadata) do not name one notebook")


def steps_of(series: Path) -> list[Step]:
    """The graded steps of a notebook of the series, in its order."""
    from .grading_steps import STEPS

    return list(STEPS.get(series.stem[:2], []))


def _error_of(cell) -> tuple[str, str] | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename", ""), out.get("evalue", "")
    return None


@contextmanager
def _kernel_config():
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="llama3-grade-kernel-") as sockets:
        yield Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})


def execute(nb, folder: Path, capture_dir: Path, timeout: int = TIMEOUT) -> str:
    """Run ``nb`` in a fresh kernel started in ``folder``, every cell even after an error; a cell that runs longer
    than ``timeout`` seconds is interrupted (its output is the interruption) and the run goes on. Returns ``""``,
    or why the run stopped early (the kernel died)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    drop = ("LLAMA3_PROMPT", "LLAMA3_EXPORT_DIR")  # the default prompt, nothing written; LLAMA3_DIR stays
    env = {**{k: v for k, v in os.environ.items() if k not in drop}, CAPTURE_ENV: str(capture_dir), "MPLBACKEND": "agg"}
    with _kernel_config() as config:
        client = NotebookClient(nb, config=config, timeout=timeout, kernel_name="python3", allow_errors=True,
                                interrupt_on_timeout=True, record_timing=False,
                                resources={"metadata": {"path": str(folder)}})
        try:
            client.execute(env=env)
        except DeadKernelError as e:  # out of memory, os._exit(), ...
            return f"the kernel died ({str(e).splitlines()[0] if str(e) else 'no message'})"
    return ""


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

    from .checkpoint import open_checkpoint
    from .paths import display_path

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
    captures = {}  # id() of a cell -> the steps captured after it
    for s in steps:
        if anchor[s.grade_id] is not None:
            captures.setdefault(id(anchor[s.grade_id]), []).append(s)
    last = max((i for i, c in enumerate(nb.cells) if id(c) in captures), default=-1)
    with tempfile.TemporaryDirectory(prefix="llama3-grade-") as tmp:
        capture_dir = Path(tmp)
        run_cells = []
        before = {id(solution[s.grade_id]): s for s in steps if solution[s.grade_id] is not None}
        for cell in nb.cells[: last + 1]:  # the core path, up to the last step's values
            s = before.get(id(cell))
            if s is not None:  # its inputs as earlier cells left them, and the tripwires on its solution lines
                if s.inputs:
                    code = (f"__import__('plumbing.grading').grading.capture({s.grade_id + BEFORE!r}, globals(), "
                            f"{_inputs_expression(s)!r})")
                    run_cells.append(nbformat.v4.new_code_cell(code))
                region = learner_region(cell, series_cells.get(s.cell))
                first, last_line = (region[1] + 1, region[2]) if region else (1, len(cell.source.split("\n")))
                code = (f"__import__('plumbing.tripwire').tripwire.arm({s.grade_id!r}, {cell.source!r}, {first}, "
                        f"{last_line}, {tuple(s.shortcuts)!r})")
                run_cells.append(nbformat.v4.new_code_cell(code))
            run_cells.append(cell)
            for s in captures.get(id(cell), []):
                code = (f"__import__('plumbing.grading').grading.capture({s.grade_id!r}, globals(), "
                        f"{s.capture!r})")
                run_cells.append(nbformat.v4.new_code_cell(code))
        run = nbformat.v4.new_notebook(cells=run_cells, metadata=nb.metadata)
        stopped = execute(run, series.parent, capture_dir, timeout)
        ckpt = checkpoint if checkpoint is not None else open_checkpoint(None)
        context = Context(ckpt)
        produced = {}  # the values of the steps that passed, by name: what later steps must be given
        for s in steps:
            clean = all(r.status == "passed" for r in report.results)
            result = _grade_step(s, solution[s.grade_id], capture_dir, context, torch, timeout, stopped,
                                 produced if clean else None, series_cells.get(s.cell))
            if result.status == "passed":
                values = torch.load(capture_dir / f"{s.grade_id}.pt", weights_only=False)
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
    by_id, by_grade, by_source = {}, {}, {}
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
    items = {ast.literal_eval(k): ast.get_source_segment(s.capture, v) for k, v in zip(tree.keys, tree.values)}
    missing = [n for n in s.inputs if n not in items]
    if missing:
        raise Llama3Error(f"step {s.grade_id}: inputs {missing} are not keys of its capture")
    return "{" + ", ".join(f"{n!r}: {items[n]}" for n in s.inputs) + "}"


def _input_problems(s: Step, values: dict, capture_dir: Path, context: Context, torch, produced: dict | None
                    ) -> list[str]:
    """The step's inputs changed by its own cell, or (while every earlier step passed: ``produced``, their values)
    not what those steps gave, nor what the reference chain gives."""
    saved = capture_dir / f"{s.grade_id}{BEFORE}.pt"
    if not s.inputs or not saved.exists():
        return []
    before = torch.load(saved, weights_only=False)
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
            problems += [f"the input {p}, against what the earlier steps, the checkpoint and Meta's code give "
                         "(a cell before this step changed it)" for p in found]
    return problems


def _grade_step(s: Step, cell, capture_dir: Path, context: Context, torch, timeout: int = 0, stopped: str = "",
                produced: dict | None = None, series_cell=None) -> Result:
    def result(status, detail=""):
        return Result(s.grade_id, s.title, status, s.points if status == "passed" else 0, s.points, detail)

    if cell is None:
        return result("not attempted", f"the cell {s.cell} is missing")
    region = learner_region(cell, series_cell)
    code = region[0] if region else cell.source
    error = _error_of(cell)
    if error and error[0] == NOT_ATTEMPTED:
        return result("not attempted")
    found = shortcuts_in(code, s.shortcuts)
    tripped = capture_dir / f"{s.grade_id}.shortcut"
    if tripped.exists():
        named = {f.split()[1].split(".")[-1] for f in found if f.startswith("calls ")}  # the source check's names
        found = sorted(set(found) | {t for t in tripped.read_text(encoding="utf-8").splitlines()
                                     if not (t.startswith("calls ") and t.split()[1] in named)})
    if found:
        return result("shortcut", "; ".join(found) + ": this step is to be written by hand")
    if error and error[0] == "KeyboardInterrupt":
        return result("failed", f"the cell ran longer than {timeout} s and was stopped")
    if error:
        return result("failed", f"the cell raised {error[0]}: {error[1]}")
    saved = capture_dir / f"{s.grade_id}.pt"
    if not saved.exists():
        why = capture_dir / f"{s.grade_id}.error"
        why = why.read_text(encoding="utf-8") if why.exists() else stopped or "the cell did not run"
        if why.startswith(f"{NOT_ATTEMPTED}:"):  # a function whose body is still the stub
            return result("not attempted")
        return result("failed", f"could not read the step's values: {why}")
    values = torch.load(saved, weights_only=False)
    try:
        problems = _input_problems(s, values, capture_dir, context, torch, produced)
        problems = problems or s.check(values, context)
    except Exception as e:  # a value of the wrong kind (a list for a tensor, a wrong shape fed to Meta's code)
        problems = [f"{type(e).__name__}: {e}"]
    return result("failed", "\n".join(problems)) if problems else result("passed")
