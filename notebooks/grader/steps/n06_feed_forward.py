"""Notebook 06's graded steps: the second half of layer 0's ``TransformerBlock`` (llama_models/llama3/model.py).

``TransformerBlock.forward``: ``out = h + self.feed_forward(self.ffn_norm(h))``, with ``FeedForward.forward``:
``self.w2(F.silu(self.w1(x)) * self.w3(x))``. The checks follow Meta's code: ``ffn_norm`` is Meta's ``RMSNorm``
module (:func:`plumbing.reference.rms_norm`); ``w1``, ``w3``, ``w2`` are fairscale's ``ColumnParallelLinear`` and
``RowParallelLinear``, at model-parallel world size 1 ``nn.Linear`` without bias, that is ``F.linear(x, weight)``
on Meta's batch of one; SiLU is the ``F.silu`` that ``FeedForward.forward`` calls. Each is applied to the
student's own input of the step.
"""

from __future__ import annotations

from ..grading import Step, compare

#: The SiLU probe: constructed bf16 inputs from -8 to 8 in steps of 0.01 (bf16 rounds them), as the gates are bf16.
SILU_PROBE = "torch.linspace(-8, 8, 1601).to(torch.bfloat16)"


def _linear(x, weight):
    """Meta's ``ColumnParallelLinear`` / ``RowParallelLinear`` at world size 1: ``F.linear`` on a batch of one."""
    import torch.nn.functional as F

    return F.linear(x[None], weight)[0]


def layer0_h(ctx):
    """What earlier cells give the first step: Meta's ``h = x + self.attention(self.attention_norm(x), ...)`` of
    layer 0 on the default prompt, [seqlen, dim] bf16."""
    x, attention = ctx.meta_output("tok_embeddings", "layers.0.attention")
    return x + attention


def ffn_norm(v, ctx):
    import torch

    from plumbing.reference import rms_norm

    with torch.inference_mode():  # Meta's RMSNorm with the gain layers.0.ffn_norm.weight: self.ffn_norm(h)
        expected = rms_norm(ctx.checkpoint, "layers.0.ffn_norm")(v["h"])
    return compare("ffn_input", v["ffn_input"], expected)


def silu(v, ctx):
    import torch
    import torch.nn.functional as F

    probe = eval(SILU_PROBE, {"torch": torch})  # noqa: S307 (the constant above)
    # Meta's FeedForward calls F.silu. The notebook's own check (cell 2c16dae6) allows rtol 2**-7: both compute in
    # float32 and round once to bf16, with different operations, so one rounding may go the other way (one bf16
    # spacing, at most 2**-7 of the value).
    return compare("silu(probe)", v["probe"], F.silu(probe), rtol=2**-7)


def gate_up(v, ctx):
    x = v["ffn_input"]
    return (
        compare("gate", v["gate"], _linear(x, ctx.weight("layers.0.feed_forward.w1.weight")))  # self.w1(x)
        + compare("up", v["up"], _linear(x, ctx.weight("layers.0.feed_forward.w3.weight")))
    )  # self.w3(x)


def ffn_output(v, ctx):
    return compare("ffn_output", v["ffn_output"], _linear(v["gated"], ctx.weight("layers.0.feed_forward.w2.weight")))  # self.w2(...)


def layer_output(v, ctx):
    return compare("layer_output", v["layer_output"], v["h"] + v["ffn_output"])  # Meta: out = h + self.feed_forward(...)


STEPS = [
    Step(
        "06-ffn-norm",
        "62a0d3aa",
        "ffn_norm: RMSNorm of h",
        "ffn_norm_weight: layer 0's gain layers.0.ffn_norm.weight [dim] bf16 (read it with layer0).\n"
        "ffn_input: h normalised with rms_norm, that gain and norm_eps, [seqlen, dim] bf16.",
        "{'h': h, 'ffn_input': ffn_input}",
        ffn_norm,
        inputs=("h",),
        given=lambda ctx: {"h": layer0_h(ctx)},
    ),
    Step(
        "06-silu",
        "385b962f",
        "SiLU, written by hand",
        "The body of silu(x): x times sigmoid(x) = 1 / (1 + e^-x), computed in float32 and rounded once back to\n"
        "x's dtype (bf16 in, bf16 out). F.silu is what this step writes by hand.",
        f"{{'probe': silu({SILU_PROBE})}}",
        silu,
        shortcuts=("silu",),
    ),
    Step(
        "06-gate-up",
        "9b9bd26c",
        "gate and up projections",
        "gate and up: ffn_input projected to hidden_dim by w1 and by w3, as Meta's nn.Linear layers do\n"
        "(a weight is stored as [out_features, in_features]). Both [seqlen, hidden_dim] bf16.",
        "{'ffn_input': ffn_input, 'gate': gate, 'up': up}",
        gate_up,
        inputs=("ffn_input",),
    ),
    Step(
        "06-ffn-output",
        "388df375",
        "down projection: ffn_output",
        "ffn_output: gated projected back to dim by w2, as an nn.Linear layer does, [seqlen, dim] bf16.",
        "{'gated': gated, 'ffn_output': ffn_output}",
        ffn_output,
        inputs=("gated",),
    ),
    Step(
        "06-layer-output",
        "0e8dcc6d",
        "the residual connection",
        "layer_output: the feed-forward network's output added to the residual stream h, [seqlen, dim] bf16.",
        "{'h': h, 'ffn_output': ffn_output, 'layer_output': layer_output}",
        layer_output,
        inputs=("h", "ffn_output"),
    ),
]
