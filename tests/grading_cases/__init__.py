"""A learner's mistakes for each graded step, and shortcuts, per notebook (tests/test_grading.py).

Each module ``nNN.py`` holds

``MISTAKES``  ``{grade_id: (old, new)}``: one mistake a learner makes in that step (a constant, an axis, a
              weight, an order, a missing step), as a replacement of text inside the step's solution lines.
              The mistaken notebook must still run without an error from that cell on.
``SHORTCUTS`` ``[(grade_id, old, new)]``: the step written with the library function it was meant to
              write (``F.rms_norm``, ``F.scaled_dot_product_attention``, ``F.silu``) or Meta's code.
"""

from importlib import import_module

from plumbing.grading_steps import MODULES


def cases(number: str):
    """``(MISTAKES, SHORTCUTS)`` of notebook ``number``; empty when it has no module yet."""
    try:
        module = import_module(f"grading_cases.n{number}")
    except ModuleNotFoundError:
        return {}, []
    return dict(module.MISTAKES), list(module.SHORTCUTS)


__all__ = ["MODULES", "cases"]
