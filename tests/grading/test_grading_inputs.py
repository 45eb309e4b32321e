"""The grader judges each step on its own inputs: a cell that changes its input, an input slipped in before the step,
or an answer the notebook already held under a name (Meta's recorded outputs) does not earn the step.

Helpers and the series' steps come from tests/grading/test_grading.py.
"""

from __future__ import annotations

import nbformat
import pytest

import plumbing
from grading_cases import other_cases
from grader import grading
from grader.steps import STEPS
from test_grading import GRADED, SERIES, edited, statuses, write


@pytest.mark.notebook
@pytest.mark.parametrize("number", [n for n in GRADED if other_cases(n)[1]])
def test_a_step_that_changes_its_input_fails(number, tmp_path, small_weights):
    _, tampered = other_cases(number)
    report = grading.grade(write(edited(SERIES[number], tampered), tmp_path, SERIES[number].name))
    steps = {g for g, _, _ in tampered}
    assert statuses(report) == {s.grade_id: "failed" if s.grade_id in steps else "passed" for s in STEPS[number]}, report.text()
    assert "changes its input" in report.text()


GIVEN = [(n, s) for n in GRADED for s in STEPS[n] if s.given]


@pytest.mark.notebook
@pytest.mark.parametrize("number,step", GIVEN, ids=[s.grade_id for _, s in GIVEN])
def test_an_input_the_reference_chain_gives_is_checked(number, step, tmp_path, small_weights):
    """A cell added before the step that reverses the order of the positions of an input that the checkpoint and
    Meta's code give (the step's own check, on those inputs, would pass) fails that step, and only that step."""
    import ast

    tree = ast.parse(step.capture, mode="eval").body
    names = {ast.literal_eval(k): ast.get_source_segment(step.capture, v) for k, v in zip(tree.keys, tree.values)}
    given = [names[k] for k in step.given(grading.Context(plumbing.open_checkpoint(None)))]
    assert given[0].isidentifier(), given
    nb = nbformat.read(SERIES[number], as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if c.get("id") == step.cell)
    nb.cells.insert(at, nbformat.v4.new_code_cell(f"{given[0]} = {given[0]}.flip(0)"))
    report = grading.grade(write(nb, tmp_path, SERIES[number].name))
    assert statuses(report)[step.grade_id] == "failed", report.text()
    assert "against what the earlier steps, the checkpoint and Meta's code give" in report.text()
    before = [s.grade_id for s in STEPS[number]][: [s.grade_id for s in STEPS[number]].index(step.grade_id)]
    assert all(statuses(report)[g] == "passed" for g in before), report.text()


@pytest.mark.notebook
def test_an_input_changed_before_its_step_fails_that_step(tmp_path, small_weights):
    """A cell added before a step that changes the step's input (zeros, with the sum for the mean), or changes an
    earlier step's result, fails the step that reads it; the steps before it pass."""
    nb = edited(SERIES["03"], [("03-mean-square", "mean(-1, keepdim=True)", "sum(-1, keepdim=True)")])
    at = next(i for i, c in enumerate(nb.cells) if c.get("id") == "rms-11")
    nb.cells.insert(at, nbformat.v4.new_code_cell("token_embeddings_unnormalized = torch.zeros_like(token_embeddings_unnormalized)"))
    report = grading.grade(write(nb, tmp_path, SERIES["03"].name))
    assert statuses(report)["03-mean-square"] == "failed", report.text()
    assert "against what the earlier steps, the checkpoint and Meta's code give" in report.text()

    nb = nbformat.read(SERIES["03"], as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if c.get("id") == "rms-13")
    nb.cells.insert(at, nbformat.v4.new_code_cell("mean_square = mean_square * 4"))
    report = grading.grade(write(nb, tmp_path, SERIES["03"].name))
    assert statuses(report) == {"03-mean-square": "passed", "03-inv-rms": "failed", "03-gain": "passed", "03-rms-norm": "passed"}, (
        report.text()
    )


#: Run in the kernel before a graded cell: every tensor the notebook holds by then (top-level names, and the
#: values of its dicts, lists and tuples), with where it is.
SNAPSHOT = """\
import torch as _torch_
_held_ = [(name + ("" if key is None else f"[{key!r}]"), value)
          for name, top in list(globals().items()) if not name.startswith("_")
          for key, value in (top.items() if isinstance(top, dict) else enumerate(top) if isinstance(top, (list, tuple))
                             else [(None, top)])
          if isinstance(value, _torch_.Tensor)]
"""


#: Values a step's capture holds that earlier cells computed and the step only reads: not answers.
READ_NOT_COMPUTED = {"05-causal-mask": ("unmasked",), "08-decode": ("logits",)}


@pytest.mark.notebook
@pytest.mark.parametrize("number", [n for n in GRADED if n >= "03"])
def test_no_answer_is_in_the_notebook_before_its_step(number, tmp_path, small_weights):
    """Before each graded cell runs, no tensor the notebook holds (Meta's recorded outputs for a visible check, a
    story-so-far's result) equals what the step computes: a learner cannot copy an answer from a name.
    Run on the notebook with the old checks of 05-07, where ``meta`` held Meta's whole layer before the
    steps, it names ``meta["layers.0.ffn_norm"]`` for 06-ffn-norm and ``meta_forward["norm"]`` for 07-final-norm."""
    import inprocess

    nb = nbformat.read(SERIES[number], as_version=4)
    for step in STEPS[number]:
        read = tuple(step.inputs) + READ_NOT_COMPUTED.get(step.grade_id, ())
        at = next(i for i, c in enumerate(nb.cells) if c.get("id") == step.cell)
        nb.cells.insert(at, nbformat.v4.new_code_cell(SNAPSHOT))
        after = next(i for i, c in enumerate(nb.cells) if c.get("id") == (step.after or step.cell))
        nb.cells.insert(
            after + 1,
            nbformat.v4.new_code_cell(  # the grader's own capture, then its values
                f"__import__('grader.grading', fromlist=['capture']).capture({step.grade_id!r}, globals(), {step.capture!r})\n"
                f"_values_ = _torch_.load(__import__('os').environ['{grading.CAPTURE_ENV}'] + '/{step.grade_id}.pt')\n"
                f"_outputs_ = {{k: v for k, v in _values_.items() if k not in {read!r}}}\n"
                "_copies_ = [(k, where) for k, v in _outputs_.items() if isinstance(v, _torch_.Tensor) and v.numel() > 1\n"
                "            for where, held in _held_ if held.shape == v.shape and held.dtype == v.dtype\n"
                "            and _torch_.equal(held, v)]\n"
                f"assert not _copies_, f'{step.grade_id}: the notebook held the answer before the step: {{_copies_}}'"
            ),
        )
    last = max(i for i, c in enumerate(nb.cells) if c.source.startswith("__import__('grader.grading'"))
    nb.cells = nb.cells[: last + 1]  # the cells after the last step's capture hold nothing to check
    path = tmp_path / SERIES[number].name
    nbformat.write(nb, path)
    env = {**plumbing.clean_environ(), "LLAMA3_DIR": str(small_weights), grading.CAPTURE_ENV: str(tmp_path)}
    inprocess.run(path, env)
