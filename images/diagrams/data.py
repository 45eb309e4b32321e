"""What the diagrams show: one entry per notebook in NOTEBOOKS, the one table to edit for a new notebook.

An entry holds everything its diagrams need: its title and colour, its step in the strip, its row of the
overview, the tensors its you-are-here image starts from, its boxes' and arrows' texts, its layout (columns,
gaps, circles, left to right) and its connections (drawn in order by draw.py). Shapes are those of
Meta-Llama-3-8B for the 17-token prompt "the answer to the ultimate question of life, the universe, and
everything is ".
"""

from .items import SMALL, Arrow, Circle, Col, Feed, Fork, Gap, Join, Merge, Notebook, Op, Residual, _short, _tensor, _wide
from .layout import BLUE, BRANCH, FORK, GREEN, ORANGE, PURPLE, SHADOW, SKY, VERMILLION, YELLOW

HERE = "images/diagrams/data.py"


NOTEBOOKS = {
    1: Notebook(
        "01 tokenization",
        ORANGE,
        ["tokens"],
        row=0,
        inputs=[],
        nodes={
            "text": (
                [
                    ("text", "name"),
                    ("str", "mono"),
                    ('"the answer to the', "note"),
                    ("ultimate question of", "note"),
                    ("life, the universe,", "note"),
                    ('and everything is "', "note"),
                ],
                [("text", "name"), ("str", "mono")],
            ),
            "tokens": (_tensor("tokens", "[17]", "int64", "[seqlen]"), _short("tokens", "[17] int64")),
        },
        labels={"bpe": ("tiktoken\nBPE", "BPE")},
        layout=[Col("c_text", [("text", 0)]), Gap("g_bpe", ["bpe"]), Col("c_tokens", [("tokens", 0)])],
        steps=[Arrow("text", "tokens", "bpe")],
    ),
    2: Notebook(
        "02 embedding lookup",
        SKY,
        ["token_embeddings_", "unnormalized"],
        row=0,
        inputs=[("tokens", 0)],
        nodes={
            "unnorm": (
                [("token_embeddings_", "name"), *_tensor("unnormalized", "[17, 4096]", "bf16", "[seqlen, dim]")],
                [("token_embeddings_", "name"), *_short("unnormalized", "[17, 4096] bf16")],
            )
        },
        labels={"lookup": ("tok_embeddings\n.weight\n[tokens]", "lookup")},
        layout=[Gap("g_lookup", ["lookup"]), Col("c_unnorm", [("unnorm", 0)])],
        steps=[Arrow("g_lookup", "unnorm", "lookup")],
    ),
    3: Notebook(
        "03 RMSNorm",
        GREEN,
        ["token_embeddings"],
        row=0,
        inputs=[("unnorm", 0)],
        nodes={"norm": (_tensor("token_embeddings", "[17, 4096]", "bf16", "[seqlen, dim]"), _short("token_embeddings", "[17, 4096] bf16"))},
        labels={"attention_norm": ("RMSNorm with\nlayers.0.\nattention_norm\n.weight", "RMSNorm")},
        layout=[Gap("g_norm", ["attention_norm"]), Col("c_norm", [("norm", 0)])],
        steps=[Arrow("g_norm", "norm", "attention_norm")],
    ),
    4: Notebook(
        "04 RoPE",
        PURPLE,
        ["xq_rotated,", "xk_rotated"],
        row=0,
        inputs=[("norm", 0)],
        nodes={
            "xq": (_wide("xq", "[17, 32, 128] bf16", "[seqlen, n_heads, head_dim]"), _short("xq", "[17, 32, 128] bf16")),
            "xk": (_wide("xk", "[17, 8, 128] bf16", "[seqlen, n_kv_heads, head_dim]"), _short("xk", "[17, 8, 128] bf16")),
            "freqs": (
                _wide("freqs_cis", "[17, 64] complex64", "[seqlen, head_dim / 2]", r"$\cos m\theta_i + i \sin m\theta_i$"),
                _short("freqs_cis", "[17, 64] complex64"),
            ),
            "xq_rot": (
                _wide("xq_rotated", "[17, 32, 128] bf16", "[seqlen, n_heads, head_dim]"),
                _short("xq_rotated", "[17, 32, 128] bf16"),
            ),
            "xk_rot": (
                _wide("xk_rotated", "[17, 8, 128] bf16", "[seqlen, n_kv_heads, head_dim]"),
                _short("xk_rotated", "[17, 8, 128] bf16"),
            ),
        },
        labels={
            "wq": ("@ wq.T\n+ reshape", "@ wq.T"),
            "wk": ("@ wk.T\n+ reshape", "@ wk.T"),
            "rope": ("RoPE: multiply\nby freqs_cis", "RoPE"),
        },
        layout=[
            Gap("g_proj", ["wq", "wk"], lane=1, offset=FORK),
            Col("c_xqk", [("xq", 1), ("xk", -1)]),
            Gap("g_rope_a", width=SMALL),
            Col("c_freqs", [("freqs", 0)]),
            Gap("g_rope_b", width=SMALL),
            Col("c_rot", [("xq_rot", 1), ("xk_rot", -1)]),
        ],
        steps=[Fork("g_proj", "xq", "xk"), Arrow("xq", "xq_rot"), Arrow("xk", "xk_rot"), Feed("freqs", "rope")],
    ),
    5: Notebook(
        "05 attention",
        BLUE,
        ["h"],
        row=1,
        inputs=[("xq_rot", 1), ("xk_rot", 0), ("norm", -1)],
        nodes={
            "scores": (_wide("scores", "[32, 17, 17] bf16", "[n_heads, seqlen, seqlen]"), _short("scores", "[32, 17, 17] bf16")),
            "xv": (_wide("xv", "[17, 8, 128] bf16", "[seqlen, n_kv_heads, head_dim]"), _short("xv", "[17, 8, 128] bf16")),
            "probs": (
                [("softmax(scores)", "name"), ("[32, 17, 17] bf16", "mono"), ("attention weights", "note")],
                _short("softmax(scores)", "[32, 17, 17] bf16"),
            ),
            "attn_out": (_tensor("attention_output", "[17, 4096]", "bf16", "[seqlen, dim]"), _short("attention_output", "[17, 4096] bf16")),
            "h": (_tensor("h", "[17, 4096]", "bf16", "[seqlen, dim]"), _short("h", "[17, 4096] bf16")),
        },
        labels={
            "scores": ("repeat_kv,\nxq @ keys.T\n/ √head_dim", "xq @ xk.T\n/ √128"),
            "wv": ("token_embeddings\n@ wv.T + reshape", "@ wv.T"),
            "softmax": ("+ causal mask,\nsoftmax\nin float32", "+ mask,\nsoftmax"),
            "weighted_sum": ("weighted sum\nof values,\nheads side\nby side", "weighted\nsum"),
            "wo": ("@ wo.T", "@ wo.T"),
            "residual_x": (
                "x = token_embeddings_unnormalized, kept: the residual stream (added back in 05)",
                "x = token_embeddings_unnormalized (02), kept: the residual stream",
                "x = token_embeddings_unnormalized (02), kept",
            ),
        },
        layout=[
            Gap("g_scores", ["scores", "wv"], lane=1),
            Col("c_scores", [("scores", 1), ("xv", -1)]),
            Gap("g_softmax", ["softmax"], lane=1),
            Col("c_probs", [("probs", 1)]),
            Gap("g_sum", width=SMALL),
            Op("sum", "Σ"),
            Gap("g_wo", ["wo"]),
            Col("c_attn_out", [("attn_out", 0)]),
            Gap("g_add1", width=SMALL),
            Op("add1", "+"),
            Gap("g_h", width=SMALL),
            Col("c_h", [("h", 0)]),
        ],
        steps=[
            Arrow("g_scores", "scores", "scores", yah_dy=0.07),
            Arrow("g_scores", "xv", "wv"),
            Arrow("scores", "probs", "softmax"),
            Merge("sum", "probs", "xv", "weighted_sum"),
            Arrow("sum", "attn_out", "wo"),
            Arrow("attn_out", "add1"),
            Circle("add1"),
            Arrow("add1", "h"),
            Residual("add1", "residual_x", source="unnorm"),
            Join("xk_rot", "scores", "g_scores"),
        ],
    ),  # the keys join the queries on their way to the scores
    6: Notebook(
        "06 feed-forward",
        VERMILLION,
        ["layer_output"],
        row=2,
        inputs=[("h", 0)],
        nodes={
            "ffn_input": (_tensor("ffn_input", "[17, 4096]", "bf16", "[seqlen, dim]"), _short("ffn_input", "[17, 4096] bf16")),
            "gate": (_tensor("gate", "[17, 14336]", "bf16", "[seqlen, hidden_dim]"), _short("gate", "[17, 14336] bf16")),
            "up": (_tensor("up", "[17, 14336]", "bf16", "[seqlen, hidden_dim]"), _short("up", "[17, 14336] bf16")),
            "ffn_output": (_tensor("ffn_output", "[17, 4096]", "bf16", "[seqlen, dim]"), _short("ffn_output", "[17, 4096] bf16")),
            "layer_output": (
                _tensor("layer_output", "[17, 4096]", "bf16", "[seqlen, dim]", "output of layer 0"),
                _short("layer_output", "[17, 4096] bf16"),
            ),
        },
        labels={
            "ffn_norm": ("RMSNorm with\nlayers.0.\nffn_norm\n.weight", "ffn_norm"),
            "w1": ("@ w1.T", "@ w1.T"),
            "w3": ("@ w3.T", "@ w3.T"),
            "silu": ("silu", "silu"),
            "silu_up": ("silu(gate) * up\n[17, 14336]", "silu(gate)\n* up"),
            "w2": ("@ w2.T", "@ w2.T"),
            "residual_h": ("h, kept", "h, kept"),
        },
        layout=[
            Gap("g_ffn_norm", ["ffn_norm"], width=0.75, offset=2 * BRANCH),
            Col("c_ffn_input", [("ffn_input", 0)]),
            Gap("g_w13", ["w1", "w3"], lane=1, offset=FORK),
            Col("c_gate_up", [("gate", 1), ("up", -1)]),
            Gap("g_silu", ["silu"], width=0.45, lane=1),
            Op("mul", "×"),
            Gap("g_w2", ["w2"]),
            Col("c_ffn_output", [("ffn_output", 0)]),
            Gap("g_add2", width=SMALL),
            Op("add2", "+"),
            Gap("g_layer_output", width=SMALL),
            Col("c_layer_output", [("layer_output", 0)]),
        ],
        steps=[
            Arrow("g_ffn_norm", "ffn_input", "ffn_norm"),
            Residual("add2", "residual_h", branch="g_ffn_norm"),
            Fork("g_w13", "gate", "up"),
            Merge("mul", "gate", "up", "silu_up", upper_label="silu"),
            Arrow("mul", "ffn_output", "w2"),
            Arrow("ffn_output", "add2"),
            Circle("add2"),
            Arrow("add2", "layer_output"),
        ],
    ),
    7: Notebook(
        "07 next token",
        YELLOW,
        ["logits,", "next token"],
        row=2,
        inputs=[("tokens", 0)],
        nodes={
            "h_last": (
                _tensor("h", "[17, 4096]", "bf16", "[seqlen, dim]", "after layer 31"),
                _short("h", "[17, 4096] bf16", "after layer 31"),
            ),
            "logits": (_tensor("logits", "[17, 128256]", "float32", "[seqlen, vocab_size]"), _short("logits", "[17, 128256] float32")),
            "next": (
                [("next token", "name"), ("[] int64", "mono"), ("with Meta's weights:", "note"), ('"42"', "name")],
                [("next token", "name"), ("Meta's weights:", "note"), ('"42"', "name")],
            ),
        },
        # 07 starts from layer_output in the overview, from tokens in its you-are-here image
        labels={
            "layers": (
                "layers 1 … 31:\nthe same block,\nown weights",
                "lookup (02), then\nthe block (03 to 06)\nfor each of the\n32 layers",
                "lookup (02),\n32 blocks\n(03 to 06)",
            ),
            "output": ("RMSNorm with\nnorm.weight,\n@ output.T,\n.float()", "norm,\n@ output.T"),
            "argmax": ("argmax of\nthe last row", "argmax of\nthe last row"),
        },
        layout=[
            Gap("g_layers", ["layers"]),
            Col("c_h_last", [("h_last", 0)], stacked=True),
            Gap("g_output", ["output"], offset=2 * SHADOW),
            Col("c_logits", [("logits", 0)]),
            Gap("g_argmax", ["argmax"]),
            Col("c_next", [("next", 0)]),
        ],
        steps=[Arrow("g_layers", "h_last", "layers"), Arrow("h_last", "logits", "output"), Arrow("logits", "next", "argmax")],
    ),
    8: Notebook(
        "08 generation",
        GREEN,
        ["greedy,", "sampled"],
        row=3,
        inputs=[("tokens", 0)],
        nodes={
            "cache": (
                [
                    ("cache_k, cache_v", "name"),
                    ("[32, 21, 8, 128] bf16", "mono"),
                    ("[n_layers, max_seq_len,", "sym"),
                    ("n_kv_heads, head_dim]", "sym"),
                    ("rows 0 … 16: the prompt;", "note"),
                    ("one more row filled per step", "note"),
                ],
                _short("cache_k, cache_v", "[32, 21, 8, 128] bf16", "one more row filled per step"),
            ),
            "step_logits": (
                _tensor("step_logits", "[1, 128256]", "float32", "[1, vocab_size]", "one new row"),
                _short("step_logits", "[1, 128256] float32", "one new row"),
            ),
            "chosen": ([("next token", "name"), ("int", "mono"), ("at start_pos + 1", "note")], _short("next token", "int")),
            "generated": (
                _tensor("greedy, sampled", "[≤ 4]", "int64", "[≤ max_gen_len]", "stop token included"),
                _short("greedy, sampled", "[≤ 4] int64"),
            ),
        },
        # 08 starts from 07's next token in the overview, from tokens in its you-are-here image
        labels={
            "prefill": (
                "prefill: 07's pass\nfrom start_pos 0,\nkeys and values\nkept in a cache",
                "prefill: the\nprompt, from\nstart_pos 0",
                "prefill",
            ),
            "decode": ("one new token\nat start_pos\n17, 18, …", "one new\ntoken at\nstart_pos", "decode"),
            "choose": ("argmax, or top-p\nsample (0.6, 0.9)\nof the last row", "argmax or\ntop-p sample", "choose"),
            "stop": ("until a stop\ntoken or 4\nnew tokens", "until a stop\ntoken or 4", "stop"),
            "append": (
                "the next token, appended and fed again: one decode step more",
                "next token appended, fed again: repeat",
                "append, repeat",
            ),
        },
        layout=[
            Gap("g_prefill", ["prefill"]),
            Col("c_cache", [("cache", 0)]),
            Gap("g_step", width=SMALL),
            Op("step", "↻"),
            Gap("g_decode", ["decode"]),
            Col("c_step_logits", [("step_logits", 0)]),
            Gap("g_choose", ["choose"]),
            Col("c_chosen", [("chosen", 0)]),
            Gap("g_stop", ["stop"], offset=2 * BRANCH),
            Col("c_generated", [("generated", 0)]),
        ],
        steps=[
            Arrow("g_prefill", "cache", "prefill"),
            Arrow("cache", "step"),
            Arrow("step", "step_logits", "decode"),
            Arrow("step_logits", "chosen", "choose"),
            Arrow("chosen", "generated", "stop"),
            Residual("step", "append", branch="g_stop"),
            Circle("step"),
        ],
    ),  # the loop: each token fed back
}

# the overview's last lines: the model's sizes
FOOTER = [
    "dim = 4096, n_heads = 32, n_kv_heads = 8, head_dim = 128, hidden_dim = 14336, n_layers = 32, "
    "vocab_size = 128256;  seqlen = 17 tokens;  max_gen_len = 4, max_seq_len = 21;  m = position,  "
    r"$\theta_i = 500000^{-2i/128},\ i = 0 \ldots 63$",
    "layer 0's weights (layers.0.…): attention.wq, .wo [4096, 4096];  attention.wk, .wv [1024, 4096];  "
    "feed_forward.w1, .w3 [14336, 4096];  feed_forward.w2 [4096, 14336];  the last: output.weight "
    "[128256, 4096]",
]


class MissingEntry(LookupError):
    """A notebook of the series has no entry in NOTEBOOKS."""


def check(numbers):
    """Every notebook number must have an entry: a new notebook is noticed, not skipped."""
    missing = sorted(set(numbers) - set(NOTEBOOKS))
    if missing:
        raise MissingEntry(
            f"no drawing data for notebook {', '.join(f'{n:02d}' for n in missing)}: add an entry "
            f"for it to NOTEBOOKS in {HERE} (everything its diagrams need is in that one entry)"
        )


def merged(field_name):
    """The nodes (or labels) of every notebook in one dict; a key may belong to one notebook only."""
    out = {}
    for nb, entry in NOTEBOOKS.items():
        for key, value in getattr(entry, field_name).items():
            if key in out:
                raise ValueError(f"{HERE}: {field_name} key {key!r} of notebook {nb:02d} is already used")
            out[key] = value
    return out
