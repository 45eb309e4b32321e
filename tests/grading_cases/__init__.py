"""A learner's mistakes for each graded step, and shortcuts, per notebook (tests/grading/test_grading_cases.py).

Each module ``nNN.py`` holds

``MISTAKES``  ``{grade_id: (old, new)}``: one mistake a learner makes in that step (a constant, an axis, a
              weight, an order, a missing step), as a replacement of text inside the step's solution lines.
              The mistaken notebook must still run without an error from that cell on.
``SHORTCUTS`` ``[(grade_id, old, new)]``: the step written with the library function it was meant to
              write (``F.rms_norm``, ``F.scaled_dot_product_attention``, ``F.silu``) or Meta's code, under its
              own name or another (an alias, ``getattr``, a layer class, a module bound to another name).
              ``old`` and ``new`` may be tuples: several replacements in the step's lines.
``VALID``     ``[(grade_id, old, new)]`` (optional): a correct step written another way (another order of sums,
              ``1 / torch.sqrt`` for ``torch.rsqrt``): the notebook must still get full marks.
``TAMPERED``  ``[(grade_id, old, new)]`` (optional): the step's input changed inside its cell, with a mistake its
              own check alone would not see: the step must fail.
"""

from importlib import import_module

from grader.steps import MODULES


def cases(number: str):
    """``(MISTAKES, SHORTCUTS)`` of notebook ``number``; empty when it has no module yet."""
    try:
        module = import_module(f"grading_cases.n{number}")
    except ModuleNotFoundError:
        return {}, []
    return dict(module.MISTAKES), list(module.SHORTCUTS)


def other_cases(number: str):
    """``(VALID, TAMPERED)`` of notebook ``number``; empty lists when it has none."""
    try:
        module = import_module(f"grading_cases.n{number}")
    except ModuleNotFoundError:
        return [], []
    return list(getattr(module, "VALID", [])), list(getattr(module, "TAMPERED", []))


__all__ = ["MODULES", "cases", "other_cases"]
