"""Notebook 07's ``logit_lens``, graded by what it returns on the grader's probes (grader/steps/n07_next_token.py):
the series' function passes, and so do correct lenses in another form (row by row, all in float32); each mistake
fails, including those the model's own weights alone would not show (a fixed ``norm_eps``, a mean over all rows, a
variance, a lens 1 % too large). Judged in this process on the small checkpoint, on the series' own cells: no
notebook runs."""

from __future__ import annotations

import ast

import nbformat
import pytest
import torch

import plumbing
from grading_cases import n07 as cases07
from grader.context import Context
from grader.steps import STEPS
from test_grading import judged

SERIES = {p.name[:2]: p for p in plumbing.series_notebooks()}
STEP = next(s for s in STEPS["07"] if s.grade_id == "07-logit-lens")
STORY = "574ab018"  # 07's story so far, which defines rms_norm


def problems(checkpoint, edit=None) -> list[str]:
    """07-logit-lens's problems for the series' ``logit_lens`` with ``edit`` (old, new) in its cell, judged as the
    grader does (:func:`test_grading.judged`)."""
    import math

    import torch.nn.functional as F

    nb = nbformat.read(SERIES["07"], as_version=4)
    namespace: dict = {"torch": torch, "F": F, "math": math, "plumbing": plumbing, "model": checkpoint}
    story = ast.parse(next(c.source for c in nb.cells if c.get("id") == STORY))
    rms_norm = next(f for f in story.body if isinstance(f, ast.FunctionDef) and f.name == "rms_norm")
    exec(compile(ast.Module([rms_norm], []), STORY, "exec"), namespace)  # noqa: S102 (the series' own rms_norm)
    source = next(c.source for c in nb.cells if c.get("id") == STEP.cell)
    if edit:
        assert source.count(edit[0]) == 1, edit
        source = source.replace(*edit)
    exec(compile(source, STEP.cell, "exec"), namespace)  # noqa: S102 (the series' own cell)
    return judged(STEP.grade_id, namespace, Context(checkpoint))


@pytest.fixture(scope="module")
def small(small_dir):
    return plumbing.open_checkpoint(small_dir)


def test_the_series_lens_and_correct_lenses_in_another_form_pass(small):
    assert problems(small) == []
    for grade_id, old, new in cases07.VALID + cases07.MORE_VALID:
        if grade_id == STEP.grade_id:
            assert problems(small, (old, new)) == [], new


@pytest.mark.parametrize("edit", [cases07.MISTAKES[STEP.grade_id]] + [(old, new) for _, old, new in cases07.MORE_MISTAKES])
def test_each_mistake_fails(small, edit):
    found = problems(small, edit)
    assert found and all(p.startswith(("logit_lens(", "AttributeError", "RuntimeError")) for p in found), (edit, found)
