"""Notebook 08's sampling steps, graded by the ids drawn (grader/steps/n08_sampling.py): the notebook's
``sample_top_p`` and ``sampled_choice`` pass, so does each written another way, and each mistake fails its step; and
the loop's feedback when it raises. Run in this process on the series' own cells: seconds, no notebook executed."""

from __future__ import annotations

import pytest
import torch

import plumbing
from grading_cases import n08 as cases08
from grader.steps import STEPS
from test_grading import judged

SERIES = {p.name[:2]: p for p in plumbing.series_notebooks()}


def problems(grade_id: str, edits=()) -> list[str]:
    """The step's problems for the series' two cells with ``edits`` (old, new), each in the cell that holds ``old``."""
    import nbformat

    nb = nbformat.read(SERIES["08"], as_version=4)
    namespace: dict = {"torch": torch}
    applied = set()
    for cell_id in ("21ec8413", "c7039b94"):  # sample_top_p, then sampled_choice
        source = next(c.source for c in nb.cells if c.get("id") == cell_id)
        for old, new in edits:
            if old in source:
                assert source.count(old) == 1, old
                source = source.replace(old, new)
                applied.add(old)
        exec(compile(source, cell_id, "exec"), namespace)  # noqa: S102 (the series' own cells)
    assert applied == {old for old, _ in edits}, "an edit found in neither cell"
    return judged(grade_id, namespace)


@pytest.mark.parametrize(
    "grade_id, valid, mistakes",
    [
        ("08-top-p", cases08.TOP_P_VALID, cases08.TOP_P_MISTAKES),
        ("08-temperature", cases08.TEMPERATURE_VALID, cases08.TEMPERATURE_MISTAKES),
    ],
)
def test_sampling_steps_judge_the_ids_drawn(grade_id, valid, mistakes):
    assert problems(grade_id) == []
    for edit in valid:
        assert problems(grade_id, [edit]) == [], edit
    for edit in mistakes:
        assert problems(grade_id, [edit]), edit


def test_a_wrong_top_p_costs_only_its_step_and_the_notebooks_settings_are_restored():
    """08-temperature draws with Meta's top-p in place of the learner's, then gives back the notebook's own."""
    wrong = cases08.TOP_P_MISTAKES[0]
    assert problems("08-top-p", [wrong]) and not problems("08-temperature", [wrong])
    from grader.steps import n08_sampling

    ns = {"temperature": 0.6, "top_p": 0.9, "sample_top_p": len, "torch": torch}
    exec("def sampled_choice(last_logits):\n    return sample_top_p(torch.tensor([1.0]), top_p)", ns)  # noqa: S102
    n08_sampling.temperature_values(ns["sampled_choice"])
    assert (ns["temperature"], ns["top_p"], ns["sample_top_p"]) == (0.6, 0.9, len)


def test_a_loop_that_raises_on_one_probe_names_that_probe():
    """A loop that takes max_gen_len 0 literally returns no ids, and the stub's torch.stack fails on that probe only:
    the feedback names the probe and the error, and the other probes are still judged."""
    from grader.steps import n08_generation as n08

    def generate(step, prompt_tokens, max_gen_len, choose, stop_tokens, max_seq_len):
        tokens, chosen_from = list(prompt_tokens), []
        for cur_pos in range(len(prompt_tokens), min(len(prompt_tokens) + max_gen_len, max_seq_len)):
            last_logits = step(tokens[cur_pos - 1 if chosen_from else 0 : cur_pos], cur_pos - 1 if chosen_from else 0)[-1]
            tokens.append(choose(last_logits))
            chosen_from.append(last_logits)
            if tokens[-1] in stop_tokens:
                break
        return tokens[len(prompt_tokens) :], torch.stack(chosen_from)

    step = next(s for s in STEPS["08"] if s.grade_id == "08-generate")
    found = step.check(n08.generate_values(generate, n08.STOP_TOKENS), None)
    assert len(found) == 1 and "max_gen_len 0" in found[0] and "generate raised RuntimeError" in found[0], found

    def stub(*args):  # the student edition's loop, not written yet: the step stays "not attempted"
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        n08.generate_values(stub)
