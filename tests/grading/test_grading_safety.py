"""The grader runs what the learner wrote where the learner writes, reads a learner's values as data, and flags what
would switch off its watch.

A line added to a graded cell outside its solution lines is not run. A capture holding an object that would run
code when read (``__reduce__``) is refused with one line, and its code never runs in the grader's process; tensors,
numbers, strings, bytes, lists, tuples, dicts and 01's tiktoken tokenizer are read. A solution that calls
``sys.setprofile``, ``sys.settrace``, ``sys._getframe``, ``exec``, ``eval``, ``os.system`` or starts a ``Thread``,
or imports ``subprocess`` or ``multiprocessing``, is flagged by the source check, in every step; the same done by
names no source check reads is caught while the notebook runs (tests/grading_cases/n07.py's shortcuts, graded in
tests/grading/test_grading_cases.py)."""

from __future__ import annotations

import pytest
import torch

import plumbing
from grader import grading, kernel
from grader.cells import shortcuts_in
from test_grading import SERIES, edited, statuses, write


class RunsCode:
    def __reduce__(self):
        return (exec, ("open('ran', 'w').write('the grader ran a learner object')",))


def test_a_value_that_would_run_code_is_refused_and_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    torch.save({"logits": RunsCode()}, tmp_path / "step.pt")
    with pytest.raises(plumbing.Llama3Error, match="an object the grader does not read"):
        kernel.load_values(tmp_path / "step.pt")
    assert not (tmp_path / "ran").exists()


def test_data_and_the_tokenizer_are_read(tmp_path):
    values = {"t": torch.arange(3), "n": [1, 2.5, None, True], "s": ("a", b"b"), "d": {"k": torch.ones(2)}}
    values["tokenizer"] = plumbing.load_tokenizer(plumbing.default_tokenizer_path())
    torch.save(values, tmp_path / "step.pt")
    read = kernel.load_values(tmp_path / "step.pt")
    assert read["n"] == values["n"] and read["s"] == values["s"] and torch.equal(read["d"]["k"], values["d"]["k"])
    assert read["tokenizer"].encode("hello world") == values["tokenizer"].encode("hello world")


@pytest.mark.parametrize(
    "code",
    [
        "sys.setprofile(None)",
        "__import__('sys').settrace(None)",
        "caller = sys._getframe(1).f_locals",
        "exec(source, box)",
        "eval('1 + 1')",
        "threading.Thread(target=work).start()",
        "os.system('python other.py')",
        "import subprocess",
        "from multiprocessing import Pool",
    ],
)
def test_calls_that_would_get_round_the_watch_are_flagged(code):
    found = shortcuts_in(code, ())
    assert found and all(f.endswith("which would get round the grader's watch") for f in found), found


@pytest.mark.notebook
def test_a_line_outside_the_solution_lines_is_not_run(tmp_path, small_weights):
    """07's lens: the solution lines return nothing, and a line added after them (after ``### END SOLUTION`` in a
    learner's copy) binds ``logit_lens`` to a correct lens: the grader runs the cell's own lines, and the step fails."""
    lens = "return (rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()"
    nb = edited(SERIES["07"], [("07-logit-lens", lens, "return None")])
    cell = next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "07-logit-lens")
    cell.source += "\nlogit_lens = lambda rows, w, out, eps: (rms_norm(rows, w, eps) @ out.T).float()"
    report = grading.grade(write(nb, tmp_path, SERIES["07"].name))
    assert statuses(report)["07-logit-lens"] == "failed", report.text()
