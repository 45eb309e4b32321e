"""Notebook 05's graded steps: layer 0's attention on Meta's bf16 path, ``Attention.forward`` of
llama_models/llama3/model.py from the rotated queries and keys on: ``repeat_kv`` (Meta's function, with a batch
axis added), ``xq.transpose(1, 2)`` and ``torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)``,
the causal mask of ``Transformer.forward`` (:func:`plumbing.reference.mask`) added to the scores,
``F.softmax(scores.float(), dim=-1).type_as(xq)``, ``torch.matmul(scores, values)``, then
``output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)`` and ``self.wo(output)`` (a plain ``nn.Linear``).

Bitwise where the notebook's own check is (the heads' layout, the scores, the mask, the softmax, ``wo``); the
weighted sum within a bf16 spacing of a float32 sum.
"""

from __future__ import annotations

import math

from ..grading import CAPTURE_ENV, Step, compare

ATTENTION = ("scaled_dot_product_attention",)  # F.scaled_dot_product_attention does scores, mask, softmax and sum


def captured(grade_id: str, name: str):
    """In the student's kernel: the value ``name`` the grader captured after step ``grade_id`` (an earlier step).

    The mask step is checked on the scores as they were before the mask cell replaced them."""
    import os
    from pathlib import Path

    import torch

    saved = Path(os.environ[CAPTURE_ENV]) / f"{grade_id}.pt"
    if not saved.exists():
        raise LookupError(f"no values of step {grade_id} (its cell failed)")
    return torch.load(saved, weights_only=False)[name]


def rotated(ctx) -> dict:
    """What earlier cells give the first step: layer 0's queries and keys after RoPE and its values, as Meta's
    ``Attention.forward`` computes them on the default prompt (``self.wq(x)`` ... ``apply_rotary_emb``), without the
    batch axis: [seqlen, heads, head_dim] bf16."""
    from plumbing.reference import precompute_freqs_cis

    p = ctx.params
    xq, xk, xv = ctx.meta_output("layers.0.attention.wq", "layers.0.attention.wk", "layers.0.attention.wv")
    seqlen = xq.shape[0]
    xq, xk = ctx.meta.apply_rotary_emb(
        xq.view(1, seqlen, p.n_heads, p.head_dim), xk.view(1, seqlen, p.n_kv_heads, p.head_dim), freqs_cis=precompute_freqs_cis(p, seqlen)
    )
    return {"xq_rotated": xq[0], "xk_rotated": xk[0], "xv": xv.view(seqlen, p.n_kv_heads, p.head_dim)}


def _same_kind(name, ours, expected) -> list[str]:
    """The shape and dtype problems of ``ours`` against ``expected`` (values not compared)."""
    import torch

    if not isinstance(ours, torch.Tensor) or ours.shape != expected.shape or ours.dtype != expected.dtype:
        return compare(name, ours, expected)
    return []


def repeat_kv(v, ctx):
    import torch

    M, n_rep = ctx.meta, ctx.params.n_rep
    probe = torch.arange(24.0).view(2, 3, 4)  # 2 positions, 3 key/value heads of 4 numbers, each repeated 2 times
    return (
        compare("keys", v["keys"], M.repeat_kv(v["xk_rotated"][None], n_rep)[0])
        + compare("values", v["values"], M.repeat_kv(v["xv"][None], n_rep)[0])
        + compare("repeat_kv(torch.arange(24.0).view(2, 3, 4), 2)", v["probe"], M.repeat_kv(probe[None], 2)[0])
    )


def scores(v, ctx):
    import torch

    head_dim = ctx.params.head_dim
    xq, keys, values = v["xq_rotated"][None], v["keys"][None], v["values"][None]  # Meta's batch of one
    problems = (
        compare("xq_heads", v["xq_heads"], xq.transpose(1, 2)[0])  # Meta: xq.transpose(1, 2)
        + compare("keys_heads", v["keys_heads"], keys.transpose(1, 2)[0])
        + compare("values_heads", v["values_heads"], values.transpose(1, 2)[0])
    )
    meta = (torch.matmul(xq.transpose(1, 2), keys.transpose(1, 2).transpose(2, 3)) / math.sqrt(head_dim))[0]
    kind = _same_kind("scores", v["scores"], meta)  # Meta's scores: a bf16 matmul, [n_heads, seqlen, seqlen]
    if kind:
        return problems + kind
    # Bitwise, as the notebook's check of attention_output: any bf16 product of the same numbers (matmul, @, einsum,
    # a loop over heads) rounds each float32 sum once, then divides in bf16.
    exact = compare("scores", v["scores"], meta)
    if exact and not compare("scores", v["scores"].float(), meta.float(), atol=2**-6, rtol=2**-7):
        exact.append(
            "within a rounding of Meta's scores, not its bits: Meta rounds the bf16 product, then divides "
            "it in bf16 (a float32 product divided before rounding gives other last bits, and the notebook's "
            "check of attention_output stops)"
        )
    return problems + exact


def causal_mask(v, ctx):
    from plumbing.reference import mask

    expected = mask(v["seqlen"])  # Meta's Transformer.forward: triu(full(-inf), diagonal=1), bf16; None for one token
    unmasked = v["unmasked"]  # the student's scores of the step before
    problems = compare("mask", v["mask"], expected)
    if problems and expected is not None and "values differ" in problems[0]:  # say where, in the mask's terms
        hidden, meta_hidden = v["mask"].isneginf(), expected.isneginf()
        early, late = int((hidden & ~meta_hidden).sum()), int((~hidden & meta_hidden).sum())
        if early or late:
            problems = [f"mask: -inf at {early} entries with n <= m (Meta: 0), not -inf at {late} entries with n > m (Meta: -inf)"]
    return problems + compare("scores", v["scores"], unmasked if expected is None else unmasked + expected)


def softmax(v, ctx):
    import torch.nn.functional as F

    dtype = ctx.weight("layers.0.attention.wq.weight").dtype  # Meta's xq = self.wq(x): the weights' dtype, bf16
    return compare("attention_weights", v["attention_weights"], F.softmax(v["scores"].float(), dim=-1).to(dtype))


def weighted_sum(v, ctx):
    import torch

    w, values = v["attention_weights"], v["values_heads"]
    kind = _same_kind("output", v["output"], torch.matmul(w[None], values[None])[0])  # Meta: torch.matmul(scores, values)
    if kind:
        return kind
    # The notebook's check of this step: against the sum over n of w v in float32, per sum of |w v|, atol 2^-7
    # (matmul rounds its float32 sum to bf16 once; float32 sums in another order differ far less).
    by_sum = sum(w[:, :, n, None].float() * values[:, None, n].float() for n in range(w.shape[-1]))
    magnitude = (w.float().abs() @ values.float().abs()).clamp_min(torch.finfo(torch.float32).tiny)
    return compare("output per sum of |w v|", v["output"].float() / magnitude, by_sum / magnitude, atol=2**-7)


def output_projection(v, ctx):
    import torch.nn.functional as F

    output = v["output"][None]  # Meta's batch of one: [1, n_heads, seqlen, head_dim]
    seqlen = output.shape[2]
    concatenated = output.transpose(1, 2).contiguous().view(1, seqlen, -1)  # Meta's order of the heads
    return compare("output_concatenated", v["output_concatenated"], concatenated[0]) + compare(
        "attention_output", v["attention_output"], F.linear(concatenated, ctx.weight("layers.0.attention.wo.weight"))[0]
    )  # Meta: self.wo(output)


STEPS = [
    Step(
        "05-repeat-kv",
        "fc9e0473",
        "repeat_kv: key/value heads repeated",
        "The body of repeat_kv: x [slen, n_kv_heads, head_dim] -> [slen, n_kv_heads * n_rep, head_dim], each head\n"
        "repeated n_rep times in place (heads 0, 0, 0, 0, 1, ...), without repeat_interleave; x itself when n_rep == 1.",
        "{'xk_rotated': xk_rotated, 'xv': xv, 'keys': keys, 'values': values, 'probe': repeat_kv(torch.arange(24.0).view(2, 3, 4), 2)}",
        repeat_kv,
        shortcuts=("repeat_interleave",),
        inputs=("xk_rotated", "xv"),
        given=lambda ctx: {k: v for k, v in rotated(ctx).items() if k != "xq_rotated"},
    ),
    Step(
        "05-scores",
        "25f67b48",
        "scores q . k / sqrt(head_dim)",
        "xq_heads, keys_heads, values_heads: xq_rotated, keys, values with the heads first, [n_heads, seqlen, head_dim].\n"
        "scores: xq_heads times keys_heads transposed, divided by sqrt(head_dim), [n_heads, seqlen, seqlen] bf16;\n"
        'then show("scores", scores).',
        "{'xq_rotated': xq_rotated, 'keys': keys, 'values': values, 'xq_heads': xq_heads, 'keys_heads': keys_heads, "
        "'values_heads': values_heads, 'scores': scores}",
        scores,
        points=2,
        shortcuts=ATTENTION,
        inputs=("xq_rotated", "keys", "values"),
        given=lambda ctx: {"xq_rotated": rotated(ctx)["xq_rotated"]},
    ),
    Step(
        "05-causal-mask",
        "a4a27cb9",
        "the causal mask on the scores",
        "mask: None for a single token; otherwise [seqlen, seqlen] bf16, -inf where n > m and 0 elsewhere.\n"
        "scores: the scores plus the mask, when there is one.",
        "{'seqlen': len(inputs.tokens), 'mask': mask, 'scores': scores, 'unmasked': "
        "__import__('grader.steps.n05_attention', fromlist=['captured']).captured('05-scores', 'scores')}",
        causal_mask,
        shortcuts=ATTENTION,
    ),
    Step(
        "05-softmax",
        "63db47dd",
        "softmax in float32: attention_weights",
        "attention_weights: the softmax of scores over the last axis (the keys n), computed in float32,\n"
        "rounded back to the dtype of xq_heads (bf16), [n_heads, seqlen, seqlen].",
        "{'scores': scores, 'attention_weights': attention_weights}",
        softmax,
        shortcuts=ATTENTION,
        inputs=("scores",),
    ),
    Step(
        "05-weighted-sum",
        "8c4db7d2",
        "the weighted sum of the values",
        "output: attention_weights times values_heads, [n_heads, seqlen, head_dim] bf16.",
        "{'attention_weights': attention_weights, 'values_heads': values_heads, 'output': output}",
        weighted_sum,
        shortcuts=ATTENTION,
        inputs=("attention_weights", "values_heads"),
    ),
    Step(
        "05-output-projection",
        "a2f2fb9f",
        "heads side by side, then wo",
        "output_concatenated: the heads of output side by side, [seqlen, n_heads * head_dim] bf16, in Meta's order.\n"
        "wo: layer 0's attention.wo weight. attention_output: output_concatenated times wo transposed, [seqlen, dim] bf16.",
        "{'output': output, 'output_concatenated': output_concatenated, 'attention_output': attention_output}",
        output_projection,
        shortcuts=ATTENTION,
        inputs=("output",),
    ),
]
