"""Notebook 04's graded steps: layer 0's queries and keys and their rotation, on Meta's bf16 path
(llama_models/llama3/model.py): ``Attention.forward``'s ``self.wq(x)``, ``self.wk(x)`` (plain ``nn.Linear``
layers: ``F.linear(x, weight)``) and their ``view`` into heads; the formula of ``precompute_freqs_cis``
(frequencies, angles ``torch.outer(t, freqs)``, ``torch.polar``); Meta's ``apply_rotary_emb`` on one head, then
as the learner's function on every head (bitwise, as the notebook's check: the same operations in the same order).
The float32 values pass within :data:`F32_RTOL` (another correct form: ``theta ** (-2i / d)`` without the
reciprocal, ``t[:, None] * freqs``, ``torch.complex(cos, sin)`` for ``torch.polar``, the rotation written with real
pairs); the bf16 values are compared bitwise, computed from the student's own float32 values.
"""

from __future__ import annotations

from ..grading import Step, compare

#: float32 values: the forms above differ by a few float32 spacings (2^-23 relative each), measured up to 2.4e-7;
#: the smallest mistake (positions from 1, the exponent i for 2i) moves them by far more than 1e-2.
F32_RTOL, F32_ATOL = 2e-6, 1e-6


def projections(v, ctx):
    import torch.nn.functional as F

    p = ctx.params
    x = v["token_embeddings"][None]  # Meta's batch of one: [1, seqlen, dim]
    seqlen = x.shape[1]
    # Meta: xq, xk = self.wq(x), self.wk(x); xq.view(bsz, seqlen, n_local_heads, head_dim)
    xq = F.linear(x, ctx.weight("layers.0.attention.wq.weight")).view(seqlen, p.n_heads, p.head_dim)
    xk = F.linear(x, ctx.weight("layers.0.attention.wk.weight")).view(seqlen, p.n_kv_heads, p.head_dim)
    return compare("xq", v["xq"], xq) + compare("xk", v["xk"], xk)


def meta_frequencies(theta, dim):
    """The first line of Meta's ``precompute_freqs_cis(dim, end, theta)``: [dim/2] float32."""
    import torch

    return 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))


def frequencies(v, ctx):
    return compare(
        f"rope_frequencies({v['theta']:g}, {v['head_dim']})", v["model"], meta_frequencies(v["theta"], v["head_dim"]), rtol=F32_RTOL
    ) + compare("rope_frequencies(10000.0, 64)", v["other"], meta_frequencies(10000.0, 64), rtol=F32_RTOL)


def freqs_cis(v, ctx):
    import torch

    # Meta's precompute_freqs_cis after its frequencies, on the student's freqs (rope_theta, and scaled when
    # use_scaled_rope), for the prompt's positions: row m depends only on m, so its first seqlen rows.
    t = torch.arange(v["seqlen"], dtype=torch.float32)
    angles = torch.outer(t, v["freqs"])
    return compare("angles", v["angles"], angles, rtol=F32_RTOL) + compare(
        "freqs_cis", v["freqs_cis"], torch.polar(torch.ones_like(v["angles"]), v["angles"]), atol=F32_ATOL
    )


def rotate_one_head(v, ctx):
    import torch

    q_head, freqs_cis = v["xq"][:, 0], v["freqs_cis"]  # head 0 of the student's queries
    seqlen, head_dim = q_head.shape
    # Meta's apply_rotary_emb, its lines for xq: xq.float().reshape(*xq.shape[:-1], -1, 2) as complex numbers ...
    q_complex = torch.view_as_complex(q_head.float().reshape(seqlen, head_dim // 2, 2))
    # ... and the rest of the function on this head alone: the product with freqs_cis, back to real pairs, type_as
    # (bitwise, from the student's own rotated float32 numbers)
    ours = v["q_complex_rotated"]
    back = torch.view_as_real(ours).flatten(1).type_as(q_head) if isinstance(ours, torch.Tensor) and ours.is_complex() else None
    return (
        compare("q_head", v["q_head"], q_head)
        + compare("q_complex", v["q_complex"], q_complex)
        + compare("q_complex_rotated", ours, q_complex * freqs_cis, rtol=F32_RTOL, atol=F32_ATOL)
        + (compare("q_head_rotated", v["q_head_rotated"], back) if back is not None else [])
    )


#: The learner's apply_rotary_emb run on a probe of other shapes (2 positions, 3 heads of 8 numbers), in the kernel
PROBE = "apply_rotary_emb(torch.linspace(-3, 3, 48).view(2, 3, 8).bfloat16(), torch.polar(torch.ones(2, 4), torch.arange(8.0).view(2, 4)))"


def rotate_all_heads(v, ctx):
    import torch

    M = ctx.meta  # Meta's apply_rotary_emb(xq, xk, freqs_cis), with its batch axis: [1, seqlen, heads, head_dim]
    xq_rotated, xk_rotated = M.apply_rotary_emb(v["xq"][None], v["xk"][None], freqs_cis=v["freqs_cis"])
    x = torch.linspace(-3, 3, 48).view(1, 2, 3, 8).bfloat16()
    probe, _ = M.apply_rotary_emb(x, x, freqs_cis=torch.polar(torch.ones(2, 4), torch.arange(8.0).view(2, 4)))
    return (
        compare("apply_rotary_emb on 2 positions, 3 heads of 8", v["probe"], probe[0])
        + compare("xq_rotated", v["xq_rotated"], xq_rotated[0])
        + compare("xk_rotated", v["xk_rotated"], xk_rotated[0])
    )


STEPS = [
    Step(
        "04-projections",
        "rope-08",
        "queries and keys, split into heads",
        "xq: token_embeddings times wq transposed (Meta's nn.Linear), viewed as [seqlen, n_heads, head_dim] bf16.\n"
        "xk: the same with wk, viewed as [seqlen, n_kv_heads, head_dim] bf16.",
        "{'token_embeddings': token_embeddings, 'xq': xq, 'xk': xk}",
        projections,
        inputs=("token_embeddings",),
        given=lambda ctx: {"token_embeddings": ctx.meta_output("layers.0.attention_norm")},
    ),
    Step(
        "04-frequencies",
        "rope-17",
        "the frequencies theta_i",
        "Return the head_dim/2 frequencies theta_i = theta ** (-2i / head_dim), i = 0 .. head_dim/2 - 1:\n"
        "a float32 tensor of shape [head_dim/2], theta_0 = 1 first. In Meta's order, as the check compares bits:\n"
        "the exponents 2i / head_dim in float32, theta raised to them, then 1 divided by that.",
        "{'theta': float(inputs.params.rope_theta), 'head_dim': int(inputs.params.head_dim), "
        "'model': rope_frequencies(float(inputs.params.rope_theta), int(inputs.params.head_dim)), "
        "'other': rope_frequencies(10000.0, 64)}",
        frequencies,
    ),
    Step(
        "04-freqs-cis",
        "rope-22",
        "angles and freqs_cis",
        "t: the positions 0 .. seqlen-1 in float32.\n"
        "angles: angles[m, i] = t[m] * freqs[i], [seqlen, head_dim/2] float32.\n"
        "freqs_cis: the complex numbers of length 1 and angle angles, [seqlen, head_dim/2] complex64.",
        "{'seqlen': len(inputs.tokens), 'freqs': freqs, 'angles': angles, 'freqs_cis': freqs_cis}",
        freqs_cis,
        inputs=("freqs",),
    ),
    Step(
        "04-rotate-one-head",
        "rope-28",
        "head 0 rotated, step by step",
        "q_head: head 0 of xq, [seqlen, head_dim] bf16. q_complex: q_head in float32, its adjacent pairs as\n"
        "complex numbers, [seqlen, head_dim/2] complex64. q_complex_rotated: row m of q_complex times freqs_cis[m].\n"
        "q_head_rotated: back to real pairs, flattened to [seqlen, head_dim], rounded to q_head's dtype (bf16).",
        "{'xq': xq, 'freqs_cis': freqs_cis, 'q_head': q_head, 'q_complex': q_complex, "
        "'q_complex_rotated': q_complex_rotated, 'q_head_rotated': q_head_rotated}",
        rotate_one_head,
        points=2,
        inputs=("xq", "freqs_cis"),
    ),
    Step(
        "04-rotate-all-heads",
        "546e254e",
        "apply_rotary_emb: every head",
        "The body of apply_rotary_emb: x [seqlen, heads, head_dim] (any dtype) rotated as head 0 was: in float32,\n"
        "adjacent pairs as complex numbers, row m times freqs_cis[m] for every head, back to real pairs flattened\n"
        "to [seqlen, heads, head_dim], then x's dtype.",
        "{'xq': xq, 'xk': xk, 'freqs_cis': freqs_cis, 'xq_rotated': xq_rotated, 'xk_rotated': xk_rotated, 'probe': " + PROBE + "}",
        rotate_all_heads,
        inputs=("xq", "xk", "freqs_cis"),
    ),
]
