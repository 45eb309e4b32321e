"""The grader asks what the step and the notebook ask, not only for the right numbers.

05's scores, computed in float32 and divided before rounding to bf16, are within a rounding of Meta's, yet the
notebook's bitwise check of ``attention_output`` stops: the grader fails that step, and says why. 02's one-hot
product read from the table by index has the product's values: the grader runs the cell again with other weights
in ``toy_one_hot``, which a product follows and a lookup does not."""

from __future__ import annotations

import pytest

import inprocess
import plumbing
from grader import grading
from grading_cases.n02 import LOOKUP_FOR_THE_PRODUCT
from test_grading import SERIES, STEPS, edited, statuses, write

pytestmark = pytest.mark.notebook

SCORES_IN_FLOAT32 = (
    "05-scores",
    "scores = torch.matmul(xq_heads, keys_heads.transpose(1, 2)) / math.sqrt(head_dim)",
    "scores = (torch.matmul(xq_heads.float(), keys_heads.float().transpose(1, 2))\n          / math.sqrt(head_dim)).to(torch.bfloat16)",
)


def test_scores_rounded_once_fail_the_step_as_they_stop_the_notebook(tmp_path, small_weights):
    path = write(edited(SERIES["05"], [SCORES_IN_FLOAT32]), tmp_path, SERIES["05"].name)
    report = grading.grade(path)
    assert statuses(report) == {s.grade_id: "failed" if s.grade_id == "05-scores" else "passed" for s in STEPS["05"]}, report.text()
    assert "within a rounding of Meta's scores, not its bits" in report.text()
    with pytest.raises(inprocess.CellError, match="attention_output vs Meta's Attention.forward"):
        inprocess.run(path, plumbing.clean_environ(LLAMA3_DIR=str(small_weights)))


def test_a_lookup_in_place_of_the_one_hot_product_fails_its_step(tmp_path, small_weights):
    report = grading.grade(write(edited(SERIES["02"], [LOOKUP_FOR_THE_PRODUCT]), tmp_path, SERIES["02"].name))
    assert statuses(report) == {"02-lookup": "passed", "02-one-hot": "failed"}, report.text()
    assert "toy_x does not follow toy_one_hot" in report.text()
