"""Notebook 08's sampling steps, judged by the ids drawn (:mod:`grader.steps.n08_generation`): top-p, and
the temperature before it, as Meta's ``Llama3.generate`` and ``sample_top_p`` do them (llama_models/llama3/generation.py).
"""

from __future__ import annotations

import functools

#: 08-top-p's cases (probabilities, p, seed). Sorted, the first row is 0.40, 0.30, 0.15, 0.10, 0.05: with p 0.9 the
#: four largest stay; with p 0.5 two (0.30 stays: the 0.40 before it is not above p). The second row, 0.4, 0.3,
#: 0.2, 0.1, keeps three with p 0.75. Dropping the id that crosses p, keeping one more, sorting ascending or
#: returning the position in the sorted row instead of the id draws other ids.
TOP_P_CASES = [([0.05, 0.40, 0.10, 0.30, 0.15], 0.9, 1), ([0.05, 0.40, 0.10, 0.30, 0.15], 0.5, 2), ([0.1, 0.2, 0.3, 0.4], 0.75, 3)]
#: 08-temperature's cases (logits, temperature, top_p, seed). Divided by 0.5, the first row keeps id 0 alone with
#: top_p 0.8 (multiplied, or top_p 0.9, or no temperature: more ids); divided by 2.0, four of five with top_p 0.8
#: (multiplied: two); the third is Meta's defaults, 0.6 and 0.9: four of six.
TEMPERATURE_CASES = [
    ([2.0, 1.0, 0.5, 0.0, -1.0], 0.5, 0.8, 4),
    ([2.0, 1.0, 0.5, 0.0, -1.0], 2.0, 0.8, 5),
    ([1.0, 0.6, 0.3, 0.0, -0.5, -1.0], 0.6, 0.9, 6),
]
#: Draws per case: an id's share of them is within 0.012 (one standard deviation) of its probability.
DRAWS = 2000
#: How far an id's share of the draws may be from Meta's probability: over four standard deviations.
SHARE_TOLERANCE = 0.05


@functools.cache
def meta_sample_top_p():
    """Meta's ``sample_top_p`` (llama_models/llama3/generation.py), compiled from Meta's source under a name of the
    grader's: the tripwires blame a call into Meta's files made from a student's solution, and the grader's choice
    runs inside the student's loop. Called first outside it (the captures below), so that Meta's module is read
    there."""
    import inspect

    import torch

    from plumbing.reference import meta_generation_code

    namespace = {"torch": torch}
    exec(compile(inspect.getsource(meta_generation_code().sample_top_p), "<Meta's sample_top_p>", "exec"), namespace)  # noqa: S102
    return namespace["sample_top_p"]


def top_p_choice(probs, p: float) -> int:
    """Meta's ``sample_top_p`` for one row of probabilities [n] float32: an id."""
    return int(meta_sample_top_p()(probs[None], p))


def sampled_choice(last_logits, temperature: float, top_p: float) -> int:
    """Meta's choice for ``temperature > 0``, for one row of logits (``Llama3.generate``)."""
    import torch

    probs = torch.softmax(last_logits[None] / temperature, dim=-1)  # Meta: torch.softmax(logits[:, -1] / temperature, dim=-1)
    return int(meta_sample_top_p()(probs, top_p))


def _draws(choice, cases, seed_of, call) -> list[list[int]]:
    """``DRAWS`` ids from ``call(choice, case)`` for each case, after ``torch.manual_seed`` (and Python's ``random``)
    with the case's seed; the kernel's random state is restored after."""
    import random

    import torch

    runs, state = [], random.getstate()
    with torch.random.fork_rng(devices=[]):
        try:
            for case in cases:
                torch.manual_seed(seed_of(case))
                random.seed(seed_of(case))
                runs.append([int(call(choice, case)) for _ in range(DRAWS)])
        finally:
            random.setstate(state)
    return runs


def top_p_values(sample_top_p) -> dict:
    """08-top-p's capture, in the student's kernel: the ids the student's ``sample_top_p`` draws for each case."""
    import torch

    return {"runs": _draws(sample_top_p, TOP_P_CASES, lambda c: c[2], lambda f, c: f(torch.tensor(c[0]), c[1]))}


def temperature_values(sampled_choice) -> dict:
    """08-temperature's capture, in the student's kernel: the ids the student's ``sampled_choice`` draws for each case,
    with the ``temperature`` and ``top_p`` it reads set to the case's and Meta's top-p as its ``sample_top_p``; the
    notebook's own restored after."""
    import torch

    ns = sampled_choice.__globals__  # the kernel's namespace, where the function reads them
    names = ("temperature", "top_p", "sample_top_p")
    saved = {name: ns[name] for name in names if name in ns}

    def call(choice, case):
        ns["temperature"], ns["top_p"] = case[1], case[2]
        return choice(torch.tensor(case[0]))

    meta_sample_top_p()  # read Meta's module here, not inside the student's function
    ns["sample_top_p"] = top_p_choice
    try:
        return {"runs": _draws(sampled_choice, TEMPERATURE_CASES, lambda c: c[3], call)}
    finally:
        for name in names:
            ns.pop(name, None)
        ns.update(saved)


def meta_top_p_shares(probs, p: float) -> dict[int, float]:
    """The ids Meta's ``sample_top_p`` keeps in ``probs`` [n] float32 (those whose more probable ids hold at most
    ``p``), with the probability of drawing each."""
    order = probs.argsort(descending=True)
    before = probs[order].cumsum(0) - probs[order]  # what the more probable ids hold
    kept = order[before <= p]
    return {int(i): float(probs[i] / probs[kept].sum()) for i in kept}


def _shares(name: str, ids: list[int], expected: dict[int, float]) -> list[str]:
    counts = {i: ids.count(i) for i in set(ids)}
    extra = sorted(set(counts) - set(expected))
    if extra:
        return [
            f"{name}: drew id {extra[0]} {counts[extra[0]]} times in {len(ids)}; Meta's sample_top_p never draws "
            f"it (it keeps ids {sorted(expected)})"
        ]
    return [
        f"{name}: drew id {i} in {counts.get(i, 0) / len(ids):.3f} of {len(ids)} draws; Meta's sample_top_p "
        f"draws it with probability {q:.3f}"
        for i, q in sorted(expected.items())
        if abs(counts.get(i, 0) / len(ids) - q) > SHARE_TOLERANCE
    ][:1]


def top_p(v, ctx):
    import torch

    return [
        problem
        for (probs, p, _), ids in zip(TOP_P_CASES, v["runs"])
        for problem in _shares(f"probs {probs}, p {p}", ids, meta_top_p_shares(torch.tensor(probs), p))
    ]


def temperature(v, ctx):
    import torch

    problems = []
    for (logits, t, p, _), ids in zip(TEMPERATURE_CASES, v["runs"]):
        probs = torch.softmax(torch.tensor(logits) / t, dim=-1)  # Meta: torch.softmax(logits[:, -1] / temperature, dim=-1)
        problems += _shares(f"logits {logits}, temperature {t}, top_p {p}", ids, meta_top_p_shares(probs, p))
    return problems
