"""The grader's comparison of a student's value with the reference's: bitwise, or within a stated tolerance, with
the first value that differs (:mod:`grader.grading`)."""

from __future__ import annotations


def compare(name: str, ours, expected, *, atol: float = 0.0, rtol: float = 0.0) -> list[str]:
    """Problems of the student's ``ours`` against ``expected``: bitwise unless a tolerance is given.

    Tensors must match in shape and dtype; other values (ids, lists, dicts) must be equal.
    """
    import torch

    from plumbing.checks import same_bits

    if not isinstance(expected, torch.Tensor):
        return [] if ours == expected else [f"{name}: {_short(ours)} instead of {_short(expected)}"]
    if not isinstance(ours, torch.Tensor):
        return [f"{name}: a {type(ours).__name__}, not a tensor"]
    if ours.shape != expected.shape:
        return [f"{name}: shape {list(ours.shape)}, expected {list(expected.shape)}"]
    if ours.dtype != expected.dtype:
        return [f"{name}: dtype {ours.dtype}, expected {expected.dtype}"]
    if atol == 0 and rtol == 0:
        if same_bits(ours, expected):
            return []
    a, b = ours.detach(), expected.detach()
    if a.is_complex():  # real and imaginary parts, each within the tolerance
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    a, b = a.to(torch.float64), b.to(torch.float64)
    if (atol or rtol) and torch.allclose(a, b, rtol=rtol, atol=atol):
        return []
    gap = (a - b).abs().nan_to_num(nan=float("inf"), posinf=float("inf"))
    differ = ((a != b) & ~(gap <= atol + rtol * b.abs())) if a.numel() else a.bool()
    diff = gap.max().item() if a.numel() else 0.0
    first = ""
    if differ.any():
        at = [int(i) for i in differ.nonzero()[0]]
        first = f"; first at {at}: {a[tuple(at)].item():.6g} instead of {b[tuple(at)].item():.6g}"
    within = (
        f", tolerance {f'rtol {rtol:g}' if rtol else ''}{' + ' if rtol and atol else ''}{f'atol {atol:g}' if atol else ''}"
        if atol or rtol
        else ""
    )
    return [f"{name}: {int(differ.sum())} of {a.numel():,} values differ (max abs diff {diff:.3g}{within}){first}"]


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
