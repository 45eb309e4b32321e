"""Each graded step's cases from tests/grading_cases/, graded in notebooks run on the small checkpoint.

One mistake in each step loses exactly that step (the mistakes go into every other step at once, then into the
rest: each mistaken step fails while the step after it, fed the mistaken values, still passes); a shortcut is
flagged as such, however the function is named, and the visible checks cannot be edited into points; a correct
step written another way gets full marks.
"""

from __future__ import annotations

import pytest

from grading_cases import cases, other_cases
from grader import grading
from grader.steps import STEPS
from test_grading import GRADED, SERIES, edited, mistaken, rounds, statuses, write


@pytest.mark.notebook
@pytest.mark.parametrize("number", GRADED)
def test_each_mistake_loses_exactly_its_step(number, tmp_path, small_weights):
    mistakes, _ = cases(number)
    ids = [s.grade_id for s in STEPS[number]]
    for half in (ids[0::2], ids[1::2]):
        if not half:
            continue
        path = write(mistaken(SERIES[number], {g: mistakes[g] for g in half}), tmp_path, SERIES[number].name)
        report = grading.grade(path)
        expected = {g: "failed" if g in half else "passed" for g in ids}
        assert statuses(report) == expected, report.text()


@pytest.mark.notebook
@pytest.mark.parametrize("number", [n for n in GRADED if cases(n)[1]])
def test_shortcut_is_flagged_and_visible_checks_do_not_count(number, tmp_path, small_weights):
    """Each shortcut, however the function is named (an alias, getattr, a layer class), is flagged: the source
    check sees the plain names, the tripwires the rest."""
    _, shortcuts = cases(number)
    for edits in rounds(shortcuts):
        nb = edited(SERIES[number], edits)
        # Deleting every visible check (and Meta's reference in them) changes no step's grade.
        nb.cells = [c for c in nb.cells if "plumbing.check(" not in c.source or c.metadata.get("nbgrader")]
        report = grading.grade(write(nb, tmp_path, SERIES[number].name))
        flagged = {g for g, _, _ in edits}
        assert statuses(report) == {s.grade_id: "shortcut" if s.grade_id in flagged else "passed" for s in STEPS[number]}, (
            edits,
            report.text(),
        )
        assert "by hand" in report.text()


@pytest.mark.notebook
@pytest.mark.parametrize("number", [n for n in GRADED if other_cases(n)[0]])
def test_a_correct_step_written_another_way_gets_full_marks(number, tmp_path, small_weights):
    valid, _ = other_cases(number)
    report = grading.grade(write(edited(SERIES[number], valid), tmp_path, SERIES[number].name))
    assert report.points == report.max_points, report.text()
