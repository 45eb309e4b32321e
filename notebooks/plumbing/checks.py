"""The ``check`` helper: compare a hand-written result with an independent one and print one verdict line."""

from __future__ import annotations


def same_bits(a, b) -> bool:
    """True when tensors ``a`` and ``b`` have the same dtype, shape and bit patterns.

    Stricter than ``torch.equal``, which calls ``-0.0`` and ``+0.0`` equal and a NaN unequal to itself:
    floating-point (and complex) values are compared as the integers that hold their bits.
    """
    import torch

    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if a.is_floating_point():
        ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        a, b = a.contiguous().view(ints), b.contiguous().view(ints)
    return torch.equal(a, b)


def check(name: str, ours, reference, *, atol: float = 0.0, rtol: float = 0.0, why: str = "", show_diff: bool = True) -> None:
    """Compare ``ours`` with an independent ``reference``; print the verdict; raise if it fails.

    With ``atol == rtol == 0`` the check is bitwise: same shape, dtype and bits (:func:`same_bits`;
    ``-0.0`` and ``+0.0`` differ). The verdict says "bitwise equal" only then.
    Otherwise it is ``torch.allclose(ours, reference, rtol, atol)`` computed in float64, and ``why``
    must say why that tolerance is right. ``show_diff=False`` leaves the maximum difference out of the
    printed line (use it when the difference depends on the CPU's kernels, so outputs stay reproducible).

    Returns nothing, so that a check as the last line of a cell prints only its verdict.

    Raises:
        AssertionError: shapes differ, or the values are not equal / not within tolerance.
    """
    import torch

    ours_t, ref_t = torch.as_tensor(ours), torch.as_tensor(reference)
    if ours_t.shape != ref_t.shape:
        raise AssertionError(f"{name}: shapes differ: {list(ours_t.shape)} vs {list(ref_t.shape)}")
    bitwise = atol == 0 and rtol == 0
    if bitwise and same_bits(ours_t, ref_t):
        print(f"{name}: bitwise equal")  # decided without float64 copies of large tensors
        return None
    a, b = ours_t.detach(), ref_t.detach()
    if a.is_complex() or b.is_complex():
        a, b = torch.view_as_real(a.to(torch.complex128)), torch.view_as_real(b.to(torch.complex128))
    else:
        a, b = a.to(torch.float64), b.to(torch.float64)
    diff = (a - b).abs().max().item() if a.numel() else 0.0
    if bitwise:
        if ours_t.dtype != ref_t.dtype:
            raise AssertionError(f"{name}: dtypes differ: {ours_t.dtype} vs {ref_t.dtype}")
        if diff == 0:
            raise AssertionError(f"{name}: equal values but not bitwise equal (a -0.0 against +0.0, or NaN payloads)")
        raise AssertionError(f"{name}: not bitwise equal (max abs diff {diff:.3g})")
    if not why:
        raise ValueError("check(): a tolerance needs a reason (why=...)")
    if not torch.allclose(a, b, rtol=rtol, atol=atol):
        raise AssertionError(f"{name}: max abs diff {diff:.3g} exceeds the tolerance (atol {atol:g}, rtol {rtol:g})")
    tol = f"atol {atol:g}" + (f", rtol {rtol:g}" if rtol else "")
    shown = f"max abs diff {diff:.3g}, " if show_diff else ""
    print(f"{name}: allclose ({shown}tolerance {tol}) because {why}")
    return None
