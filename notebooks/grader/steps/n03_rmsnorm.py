"""Notebook 03's graded steps: RMSNorm on Meta's bf16 path (``RMSNorm.forward`` of llama_models/llama3/model.py:
``self._norm(x.float()).type_as(x) * self.weight``, with ``_norm(x) = x * torch.rsqrt(x.pow(2).mean(-1,
keepdim=True) + self.eps)``), step by step, then as one function run on probes of other shapes, dtypes and
``norm_eps``."""

from __future__ import annotations

from ..grading import Step, compare

SHORTCUTS = ("rms_norm", "RMSNorm")  # torch.nn.functional.rms_norm, torch.nn.RMSNorm, Meta's RMSNorm


#: float32 intermediates pass within these relative tolerances (measured on the stand-in: the mean square summed in
#: another order, an einsum, differs by up to 7.2e-6; 1 / torch.sqrt against torch.rsqrt, and x / sqrt against
#: x * rsqrt, by one or two float32 spacings, 2.4e-7). The smallest mistake moves them by 0.14 (norm_eps 1e-6).
#: The bf16 values after them are compared bitwise, computed from the student's own float32 values.
MEAN_RTOL, RSQRT_RTOL = 1e-4, 2e-6


def mean_square(v, ctx):
    x_float = v["x"].float()  # Meta: x.float()
    return compare("x_float", v["x_float"], x_float) + compare(
        "mean_square", v["mean_square"], x_float.pow(2).mean(-1, keepdim=True), rtol=MEAN_RTOL
    )


def inv_rms(v, ctx):
    import torch

    expected = torch.rsqrt(v["mean_square"] + ctx.params.norm_eps)  # Meta: torch.rsqrt(... + self.eps)
    return compare("inv_rms", v["inv_rms"], expected, rtol=RSQRT_RTOL) + compare(
        "normed_float", v["normed_float"], v["x_float"] * expected, rtol=RSQRT_RTOL
    )


def gain(v, ctx):
    normed = v["normed_float"].type_as(v["x"])  # Meta: .type_as(x)
    return compare("normed", v["normed"], normed) + compare(
        "token_embeddings", v["token_embeddings"], normed * ctx.weight("layers.0.attention_norm.weight")
    )


#: The probes of ``rms_norm`` (03-rms-norm): shapes, dtypes and ``norm_eps`` other than the notebook's, so that a
#: mean over another axis, a constant or a global read for ``norm_eps``, or a result in another dtype is seen.
#: (shape, dtype, scale of x, norm_eps); x and the gain are drawn from a seeded generator.
PROBES = [((17, 4096), "bfloat16", 0.02, 1e-5), ((2, 5, 64), "bfloat16", 0.003, 1e-2), ((5, 576), "float32", 0.1, 1e-6)]
#: ``rms_norm``'s bf16 results: at most this share of the values may differ from Meta's, each by one bf16 rounding
#: (2**-6 relative: the gain's product can double a spacing). A valid float32 order (an einsum for the mean square)
#: changes 0.04 % of them (measured on the first probe); the gain applied before rounding to bf16, 26 %; everything
#: in bf16, 35 %. float32 results pass within F32_RTOL (another order of the sum: a few float32 spacings).
BF16_SHARE, BF16_RTOL, F32_RTOL = 0.01, 2.0**-6, 1e-5


def function_values(rms_norm) -> dict:
    """03-rms-norm's capture, in the student's kernel: the student's ``rms_norm`` on each of :data:`PROBES`."""
    import torch

    g = torch.Generator().manual_seed(3)
    runs = []
    for shape, dtype, scale, eps in PROBES:
        x = (torch.randn(shape, generator=g) * scale).to(getattr(torch, dtype))
        weight = (1 + 0.3 * torch.randn(shape[-1], generator=g)).to(getattr(torch, dtype))
        runs.append({"x": x, "weight": weight, "norm_eps": eps, "out": rms_norm(x.clone(), weight.clone(), eps)})
    return {"runs": runs}


def function(v, ctx):
    import torch

    from plumbing.reference import meta_model_code

    problems = []
    for run in v["runs"]:
        x, weight, eps = run["x"], run["weight"], run["norm_eps"]
        norm = meta_model_code().RMSNorm(x.shape[-1], eps)  # Meta's RMSNorm(dim, eps), its gain set to the probe's
        norm.weight = torch.nn.Parameter(weight, requires_grad=False)
        with torch.inference_mode():
            expected = norm(x)
        name = f"rms_norm on {list(x.shape)} {str(x.dtype)[6:]} rows, norm_eps {eps:g}"
        ours = run["out"]
        if (
            not isinstance(ours, torch.Tensor)
            or ours.shape != expected.shape
            or ours.dtype != expected.dtype
            or expected.dtype == torch.float32
        ):
            problems += compare(name, ours, expected, rtol=F32_RTOL if expected.dtype == torch.float32 else 0.0)
            continue
        a, b = ours.double(), expected.double()
        differ = a != b
        if differ.float().mean().item() > BF16_SHARE or not torch.allclose(a, b, rtol=BF16_RTOL, atol=0.0):
            problems += compare(name, ours, expected)
    return problems


STEPS = [
    Step(
        "03-mean-square",
        "rms-11",
        "float32 rows and their mean square",
        "x_float: token_embeddings_unnormalized in float32.\n"
        "mean_square: the mean of x_float's squares over each token's dim numbers, shape [seqlen, 1].",
        "{'x': token_embeddings_unnormalized, 'x_float': x_float, 'mean_square': mean_square}",
        mean_square,
        shortcuts=SHORTCUTS,
        inputs=("x",),
        given=lambda ctx: {"x": ctx.meta_output("tok_embeddings")},
    ),
    Step(
        "03-inv-rms",
        "rms-13",
        "1/RMS and the divided rows",
        "inv_rms: one number per token, 1/RMS, with epsilon added where Meta's RMSNorm adds it (norm_eps from\n"
        "params.json: inputs.params). normed_float: each token's row of x_float scaled by its inv_rms.",
        "{'x_float': x_float, 'mean_square': mean_square, 'inv_rms': inv_rms, 'normed_float': normed_float}",
        inv_rms,
        shortcuts=SHORTCUTS,
        inputs=("x_float", "mean_square"),
    ),
    Step(
        "03-gain",
        "rms-15",
        "back to bf16, then the gain",
        "normed: normed_float rounded back to the input's dtype, bf16 (Meta: type_as).\n"
        "token_embeddings: normed times the gain attention_norm_weight.",
        "{'x': token_embeddings_unnormalized, 'normed_float': normed_float, 'normed': normed, 'token_embeddings': token_embeddings}",
        gain,
        shortcuts=SHORTCUTS,
        inputs=("x", "normed_float"),
    ),
    Step(
        "03-rms-norm",
        "69f0f150",
        "RMSNorm as one function",
        "The body of rms_norm(x, weight, norm_eps): section 4's steps for rows x of any shape [..., dim] and dtype:\n"
        "float32, times 1/RMS over the last axis (with the argument norm_eps), back to x's dtype, times weight.",
        "__import__('grader.steps.n03_rmsnorm', fromlist=['function_values']).function_values(rms_norm)",
        function,
        shortcuts=SHORTCUTS,
    ),
]
