"""Notebook 07's graded steps: Meta's ``Transformer.forward`` (llama_models/llama3/model.py) and the greedy step of
``Llama3.generate`` (llama_models/llama3/generation.py).

- the layers: Meta's ``Transformer.forward`` from the student's token ids, ``tok_embeddings``, ``freqs_cis`` and
  the causal mask (``start_pos`` 0: the whole prompt), then
  ``for layer in self.layers: h = layer(h, start_pos, freqs_cis, mask)``, run by :func:`plumbing.reference.run`,
  which records every ``TransformerBlock``'s output;
- the final norm: Meta's ``RMSNorm`` module ``norm`` (:func:`plumbing.reference.rms_norm`) on the student's ``h``;
- the logits: ``self.output(h).float()``, ``output`` a ``ColumnParallelLinear`` (at model-parallel world size 1
  ``nn.Linear`` without bias: ``F.linear`` on Meta's batch of one) with ``output.weight``, or
  ``tok_embeddings.weight`` when the checkpoint ties them, on the student's ``h_norm``;
- the next token: ``Llama3.generate``'s ``torch.softmax(logits[:, -1] / temperature, dim=-1)`` at temperature 1 and
  its greedy ``torch.argmax(logits[:, -1], dim=-1)``, on the student's own ``logits`` (on random weights the
  argmax may be a near-tie that a CPU's rounding decides: computed from the same logits it is exact).
- the logit lens: a function of the student's design, judged by what it returns on the grader's probes (rows of
  the grader's choosing, through the model's ``norm.weight`` and output weight, then through a constructed gain,
  output matrix and ``norm_eps``), against Meta's ``self.output(self.norm(h)).float()``: its ``RMSNorm`` module,
  then ``F.linear``.
"""

from __future__ import annotations

from ..grading import Step, compare


def layers(v, ctx):
    import torch

    from plumbing.reference import run

    n_layers = ctx.params.n_layers
    names = [f"layers.{i}" for i in range(n_layers)]
    with torch.inference_mode():  # Meta's forward pass from the student's tokens, every block's output recorded
        meta = run(ctx.checkpoint, v["tokens"], names)
    problems = compare("h", v["h"], meta[names[-1]])
    stream = v["residual_stream"]
    if not isinstance(stream, (list, tuple)) or len(stream) != n_layers + 1:
        return problems + [
            f"residual_stream: {len(stream) if isinstance(stream, (list, tuple)) else type(stream).__name__}"
            f" entries, expected {n_layers + 1} (h before layer 0, then after each layer)"
        ]
    expected = [ctx.weight("tok_embeddings.weight")[v["tokens"]]] + [meta[n] for n in names]  # Meta: tok_embeddings(tokens)
    for i, (ours, theirs) in enumerate(zip(stream, expected)):
        found = compare(f"residual_stream[{i}] ({'the embedding rows' if i == 0 else f'after layer {i - 1}'})", ours, theirs)
        if found:
            return problems + found + ["(the first entry of residual_stream that differs from Meta's)"]
    return problems


def final_norm(v, ctx):
    import torch

    from plumbing.reference import rms_norm

    with torch.inference_mode():  # Meta: h = self.norm(h)
        expected = rms_norm(ctx.checkpoint, "norm")(v["h"])
    return compare("h_norm", v["h_norm"], expected)


def logits(v, ctx):
    import torch.nn.functional as F

    name = "tok_embeddings.weight" if ctx.checkpoint.tied_embeddings else "output.weight"
    expected = F.linear(v["h_norm"][None], ctx.weight(name))[0].float()  # Meta: self.output(h).float()
    return compare("logits", v["logits"], expected)


def next_token(v, ctx):
    import torch

    last = v["logits"][None, -1]  # Meta: logits[:, -1], a batch of one
    problems = compare("probs", v["probs"], torch.softmax(last / 1.0, dim=-1)[0])  # temperature 1
    ours, expected = v["next_token"], int(torch.argmax(last, dim=-1)[0])  # Meta's greedy step
    if isinstance(ours, torch.Tensor):
        if ours.numel() != 1 or ours.is_floating_point() or ours.is_complex():
            return problems + [
                f"next_token: a {ours.dtype} tensor of shape {list(ours.shape)}, expected one id (an integer tensor of shape [])"
            ]
        ours = int(ours)
    return problems + compare("next_token", ours, expected)


#: 07-logit-lens's tolerance: each logit within 2^-7 of itself plus 2^-7 of its row's largest, where a correct lens
#: in another order (row by row, or in float32 before one rounding) moves it by about one bf16 spacing (2^-8 to 2^-7 of
#: it); and each row's logits, fitted as a multiple of Meta's, a multiple within 2^-8 of 1 (those correct forms:
#: at most 0.0012 from 1 on the stand-in), which a lens 1 % too large is not. A missing norm, gain or norm_eps, a mean
#: over all the rows, a variance, or another weight fails the first.
LENS_TOLERANCE, LENS_SCALE = 2**-7, 2**-8
#: The constructed probe's norm_eps: its smaller rows' mean square is below it, the others far above.
LENS_EPS = 1e-3


def lens_probes(dim: int) -> dict:
    """07-logit-lens's constructed inputs, the same in the student's kernel and in the grader's check (a seeded
    generator): 4 rows [4, dim] bf16 of very different sizes and means (so the norm must be per row, of the mean
    square; the last so small that ``norm_eps`` = 1e-5 outweighs its mean square), a gain [dim] between 1 and 2,
    and an output matrix [300, dim]."""
    import torch

    g = torch.Generator().manual_seed(0)
    size = torch.tensor([[4.0], [0.05], [30.0], [1e-3]])  # each row's spread
    mean = torch.tensor([[0.0], [0.02], [-5.0], [0.0]])  # and its mean: a mean square is not a variance
    rows = (torch.randn(4, dim, generator=g) * size + mean).to(torch.bfloat16)
    gain = (1 + torch.rand(dim, generator=g)).to(torch.bfloat16)
    output = (torch.randn(300, dim, generator=g) / 10).to(torch.bfloat16)
    return {"rows": rows, "gain": gain, "output": output}


def lens_values(logit_lens, model) -> dict:
    """07-logit-lens's capture, in the student's kernel: the student's ``logit_lens`` on :func:`lens_probes`'s rows,
    with ``model``'s own final gain, output weight and ``norm_eps``, then with the constructed gain, output matrix
    and :data:`LENS_EPS`. Each call gets copies; the check makes the probes again itself."""
    probe = lens_probes(model.params.dim)
    name = "tok_embeddings.weight" if model.tied_embeddings else "output.weight"
    gain, weight = model.get("norm.weight"), model.get(name)  # as the check reads them: the checkpoint's dtype
    rows = probe["rows"]
    return {
        "model": logit_lens(rows.clone(), gain.clone(), weight, model.params.norm_eps),
        "constructed": logit_lens(rows.clone(), probe["gain"].clone(), probe["output"].clone(), LENS_EPS),
    }


def logit_lens(v, ctx):
    import types

    import torch
    import torch.nn.functional as F

    from plumbing.reference import rms_norm

    def meta(rows, norm, weight):  # Meta: self.output(self.norm(h)).float(), F.linear on a batch of one
        with torch.inference_mode():
            return F.linear(norm(rows)[None], weight)[0].float()

    def within(name, ours, expected):
        problems = compare(name, ours, expected, atol=float("inf"))  # the shape and the dtype
        for i, row in enumerate(expected):  # each row within its own tolerance: the rows' logits differ in size
            atol = LENS_TOLERANCE * float(row.abs().max())
            problems = problems or compare(f"{name}, row {i}", ours[i], row, rtol=LENS_TOLERANCE, atol=atol)
        if problems:
            return problems
        a, b = ours.double(), expected.double()
        scale = (a * b).sum(-1) / (b * b).sum(-1).clamp_min(1e-300)  # each row's least-squares multiple of Meta's
        worst = int((scale - 1).abs().argmax())
        if abs(float(scale[worst]) - 1) > LENS_SCALE:
            return [f"{name}: row {worst} is {float(scale[worst]):.4f} times Meta's: each value within the tolerance, the row scaled"]
        return []

    probe = lens_probes(ctx.params.dim)
    name = "tok_embeddings.weight" if ctx.checkpoint.tied_embeddings else "output.weight"
    own = meta(probe["rows"], rms_norm(ctx.checkpoint, "norm"), ctx.weight(name))
    params = types.SimpleNamespace(dim=ctx.params.dim, norm_eps=LENS_EPS)  # Meta's RMSNorm with the constructed gain
    norm = rms_norm(types.SimpleNamespace(params=params, get={"norm.weight": probe["gain"]}.get), "norm")
    constructed = meta(probe["rows"], norm, probe["output"])
    return within("logit_lens(rows, norm.weight, the output weight, norm_eps)", v["model"], own) + within(
        f"logit_lens(rows, another gain, 300 output rows, norm_eps {LENS_EPS:g})", v["constructed"], constructed
    )


STEPS = [
    Step(
        "07-layers",
        "4e00455a",
        "every layer, in order",
        "h: the embedding rows of tokens, [seqlen, dim] bf16, then passed through transformer_block(h, model, layer,\n"
        "freqs_cis, mask) for every layer, 0 ... n_layers - 1, in order (freqs_cis and mask: section 1's).\n"
        "residual_stream: a list of h before layer 0 and after each layer.",
        "{'tokens': tokens, 'h': h, 'residual_stream': residual_stream}",
        layers,
        points=2,
        inputs=("tokens",),
        given=lambda ctx: {"tokens": ctx.token_ids},
    ),
    Step(
        "07-final-norm",
        "a5dfbe6a",
        "the final norm",
        "norm_weight: the model's last gain norm.weight [dim] bf16 (read it with model.get).\n"
        "h_norm: h normalised with rms_norm, that gain and norm_eps, [seqlen, dim] bf16.",
        "{'h': h, 'h_norm': h_norm}",
        final_norm,
        inputs=("h",),
    ),
    Step(
        "07-logits",
        "5fdf0ae1",
        "the output projection: logits",
        "output_weight: output.weight, or tok_embeddings.weight when tied, [vocab_size, dim] bf16.\n"
        "logits: h_norm times output_weight transposed, then converted to float32: [seqlen, vocab_size].",
        "{'h_norm': h_norm, 'logits': logits}",
        logits,
        inputs=("h_norm",),
    ),
    Step(
        "07-next-token",
        "d63d7761",
        "probabilities and the greedy token",
        "probs: the softmax of the last position's logits, [vocab_size] float32.\n"
        "next_token: the id of the largest logit of the last position, a tensor of shape [] (greedy decoding).",
        "{'logits': logits, 'probs': probs, 'next_token': next_token}",
        next_token,
        inputs=("logits",),
    ),
    Step(
        "07-logit-lens",
        "6f1d2c84",
        "the logit lens, a function",
        "The body of logit_lens: rows of the residual stream [n, dim] normalised with rms_norm, norm_weight and\n"
        "norm_eps, then multiplied by output_weight transposed, converted to float32: [n, vocab_size], where\n"
        "vocab_size is output_weight's number of rows. It must work for any rows and weights it is given.",
        "__import__('grader.steps.n07_next_token', fromlist=['lens_values']).lens_values(logit_lens, model)",
        logit_lens,
    ),
]
