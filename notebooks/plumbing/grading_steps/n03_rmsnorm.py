"""Notebook 03's graded steps: RMSNorm on Meta's bf16 path (``RMSNorm.forward`` of llama_models/llama3/model.py:
``self._norm(x.float()).type_as(x) * self.weight``, with ``_norm(x) = x * torch.rsqrt(x.pow(2).mean(-1,
keepdim=True) + self.eps)``)."""

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
    return (compare("x_float", v["x_float"], x_float)
            + compare("mean_square", v["mean_square"], x_float.pow(2).mean(-1, keepdim=True), rtol=MEAN_RTOL))


def inv_rms(v, ctx):
    import torch

    expected = torch.rsqrt(v["mean_square"] + ctx.params.norm_eps)  # Meta: torch.rsqrt(... + self.eps)
    return (compare("inv_rms", v["inv_rms"], expected, rtol=RSQRT_RTOL)
            + compare("normed_float", v["normed_float"], v["x_float"] * expected, rtol=RSQRT_RTOL))


def gain(v, ctx):
    normed = v["normed_float"].type_as(v["x"])  # Meta: .type_as(x)
    return (compare("normed", v["normed"], normed)
            + compare("token_embeddings", v["token_embeddings"], normed * ctx.weight("layers.0.attention_norm.weight")))


STEPS = [
    Step("03-mean-square", "rms-11", "float32 rows and their mean square",
         "x_float: token_embeddings_unnormalized in float32.\n"
         "mean_square: the mean of x_float's squares over each token's dim numbers, shape [seqlen, 1].",
         "x_float：token_embeddings_unnormalized 转为 float32。\n"
         "mean_square：每个词元 dim 个数的平方的均值，形状 [seqlen, 1]。",
         "{'x': token_embeddings_unnormalized, 'x_float': x_float, 'mean_square': mean_square}",
         mean_square, shortcuts=SHORTCUTS, inputs=("x",), given=lambda ctx: {"x": ctx.meta_output("tok_embeddings")}),
    Step("03-inv-rms", "rms-13", "1/RMS and the divided rows",
         "inv_rms: 1 / sqrt(mean_square + norm_eps), with norm_eps from params.json (inputs.params).\n"
         "normed_float: x_float times inv_rms.",
         "inv_rms：1 / sqrt(mean_square + norm_eps)，norm_eps 取自 params.json（inputs.params）。\n"
         "normed_float：x_float 乘以 inv_rms。",
         "{'x_float': x_float, 'mean_square': mean_square, 'inv_rms': inv_rms, 'normed_float': normed_float}",
         inv_rms, shortcuts=SHORTCUTS, inputs=("x_float", "mean_square")),
    Step("03-gain", "rms-15", "back to bf16, then the gain",
         "normed: normed_float rounded back to the input's dtype, bf16 (Meta: type_as).\n"
         "token_embeddings: normed times the gain attention_norm_weight.",
         "normed：把 normed_float 舍入回输入的数据类型 bf16（Meta：type_as）。\n"
         "token_embeddings：normed 乘以增益 attention_norm_weight。",
         "{'x': token_embeddings_unnormalized, 'normed_float': normed_float, 'normed': normed, "
         "'token_embeddings': token_embeddings}",
         gain, shortcuts=SHORTCUTS, inputs=("x", "normed_float")),
]
