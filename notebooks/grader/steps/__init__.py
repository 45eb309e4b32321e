"""The graded steps of each notebook (:class:`grader.grading.Step`), one module per notebook.

``STEPS["03"]`` lists notebook 03's steps in the notebook's order. Each module's checks compute what the
step must give from the student's own inputs of that step, with Meta's reference code (``llama_models``)
or the formula of Meta's code it follows (named in each check), and compare with
:func:`grader.grading.compare`: bitwise where the notebook follows Meta's order of operations.
"""

from __future__ import annotations

from importlib import import_module

#: notebook number -> the module of its steps
MODULES = {
    "01": "n01_tokenization",
    "02": "n02_embedding_lookup",
    "03": "n03_rmsnorm",
    "04": "n04_rope",
    "05": "n05_attention",
    "06": "n06_feed_forward",
    "07": "n07_next_token",
    "08": "n08_generation",
}


def _load() -> dict:
    steps = {}
    for number, name in MODULES.items():
        try:
            module = import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            continue
        steps[number] = list(module.STEPS)
    return steps


STEPS = _load()
