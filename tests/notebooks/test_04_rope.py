"""Notebook 04 (RoPE): its exports against Meta's llama-models and Hugging Face transformers.

Every test executes ``notebooks/04_rope.ipynb`` through the ``run_notebook`` fixture (a fresh kernel,
``LLAMA3_EXPORT_DIR`` set) and compares ``04_rope.safetensors`` with independent implementations:

* Meta's reference code (``llama_models/llama3/model.py``: ``RMSNorm``, ``precompute_freqs_cis``,
  ``apply_scaling``, ``apply_rotary_emb``). The notebook performs the same operations on the same
  inputs, so these comparisons are bitwise.
* Hugging Face's ``LlamaRotaryEmbedding`` and ``apply_rotary_pos_emb`` (``transformers.models.llama.
  modeling_llama``) applied to projections made with Hugging Face's permuted ``q_proj``/``k_proj``,
  then put back in Meta's layout. Hugging Face pairs other dimensions, computes cos/sin with
  ``torch.cos``/``torch.sin`` instead of ``torch.polar`` and, in its own dtype path, rounds cos, sin and
  every product to bf16; each tolerance below is derived from those roundings.

Two kinds of weights folder here: the stand-in (Meta format) and a Hugging Face safetensors copy of it.
Scaled RoPE (Llama 3.1's ``params.json``, Llama 3.2's ``config.json``): tests/notebooks/test_04_rope_scaling.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import plumbing
import references
from references import meta_state, prompt_tokens

F32_UNIT = 2.0**-24  # float32 unit roundoff: one rounding changes a value by at most this, relatively
#: Llama 3.1's RoPE scaling, as Meta's apply_scaling hard-codes it and as Llama 3.1's config.json files say.
LLAMA31_ROPE_SCALING = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
#: Llama 3.2 1B and 3B's config.json: the same with factor 32.
LLAMA32_SMALL_ROPE_SCALING = {**LLAMA31_ROPE_SCALING, "factor": 32.0}

PROMPTS = {
    "default": None,  # the series' prompt, 17 tokens
    "empty": "",  # just <|begin_of_text|>: one position, nothing rotates
    "n_heads_tokens": " a" * 31,  # 32 tokens = n_heads: the wrong-axis demonstration does not raise
    "long": "Rotary position embeddings turn each pair of numbers by an angle; 旋转位置编码 rotates pairs. " * 14,
}


# --------------------------------------------------------------------------- helpers


def meta_params() -> plumbing.ModelParams:
    """Meta-Llama-3-8B's params (the stand-in's ``params.json``)."""
    return plumbing.ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS)


def meta_projections(emb, norm_weight, wq, wk, tokens, params):
    """Meta's ``RMSNorm`` then the linear layers ``wq``/``wk`` (``F.linear``, as ``nn.Linear`` does).

    Args:
        emb: [vocab_size, dim] bf16; norm_weight: [dim] bf16; wq: [n_heads*head_dim, dim] bf16 and
            wk: [n_kv_heads*head_dim, dim] bf16, in whichever row layout the caller wants.
        tokens: list of n token ids.

    Returns:
        (token_embeddings [n, dim] bf16, xq [n, n_heads, head_dim] bf16, xk [n, n_kv_heads, head_dim] bf16).
    """
    M = references.meta_llama3_model()
    norm = M.RMSNorm(params.dim, eps=params.norm_eps)
    norm.weight = torch.nn.Parameter(norm_weight, requires_grad=False)
    with torch.no_grad():
        x = norm(emb[torch.tensor(tokens)])
        n = len(tokens)
        xq = F.linear(x, wq).view(n, params.n_heads, params.head_dim)
        xk = F.linear(x, wk).view(n, params.n_kv_heads, params.head_dim)
    return x, xq, xk


def meta_rotation_f32(x, freqs_cis):
    """Meta's ``apply_rotary_emb`` before its final ``type_as``: x [n, heads, head_dim] -> [n, heads, head_dim/2, 2] float32."""
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis[:, None, :])


def pairs_from_halves(x):
    """Hugging Face's half-split head layout -> Meta's adjacent pairs, by index.

    x [..., head_dim] (dimension j pairs with j + head_dim/2) -> [..., head_dim/2, 2], where
    ``out[..., i, 0] = x[..., i]`` and ``out[..., i, 1] = x[..., i + head_dim/2]``.
    """
    half = x.shape[-1] // 2
    return torch.stack((x[..., :half], x[..., half:]), dim=-1)


def pair_lengths(x):
    """Length of every adjacent pair: x [..., head_dim] (Meta layout) -> [..., head_dim/2, 1] float32 (never 0)."""
    pairs = x.float().reshape(*x.shape[:-1], -1, 2)
    return pairs.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(torch.float32).tiny)


def bf16_ulp(x):
    """Spacing of bf16 numbers at |x| (8 significant bits): 2**(floor(log2|x|) - 7), float32."""
    mag = x.float().abs().clamp_min(torch.finfo(torch.bfloat16).tiny)
    return torch.exp2(torch.floor(torch.log2(mag)) - 7)


def hf_rotary(config_kwargs: dict, n: int, dtype):
    """Hugging Face's cos and sin for positions 0..n-1: ([1, n, head_dim], [1, n, head_dim]) in ``dtype``.

    ``config_kwargs`` build a ``LlamaConfig``; ``LlamaRotaryEmbedding.forward`` returns cos/sin cast to the
    dtype of its input, as in the model.
    """
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rotary = LlamaRotaryEmbedding(LlamaConfig(**config_kwargs))
    return rotary(torch.zeros(1, dtype=dtype), torch.arange(n)[None])


def hf_config_kwargs(params: plumbing.ModelParams, rope_scaling: dict | None = None) -> dict:
    """``LlamaConfig`` arguments for ``params``; with ``use_scaled_rope``, llama3 ``rope_parameters``.

    ``rope_scaling`` gives their factor, low_freq_factor, high_freq_factor and original_max_position_embeddings
    (default: Llama 3.1's 8, 1, 4, 8192).
    """
    rope = {"rope_type": "default", "rope_theta": params.rope_theta}
    if params.use_scaled_rope:
        rope = {"rope_type": "llama3", "rope_theta": params.rope_theta, **(rope_scaling or LLAMA31_ROPE_SCALING)}
    return {
        "hidden_size": params.dim,
        "num_attention_heads": params.n_heads,
        "num_key_value_heads": params.n_kv_heads,
        "num_hidden_layers": params.n_layers,
        "vocab_size": params.vocab_size,
        "intermediate_size": params.ffn_hidden_dim,
        "max_position_embeddings": params.context_length,
        "rope_parameters": rope,
    }


def check_against_hugging_face(export, x, q_proj, k_proj, params, rope_scaling: dict | None = None):
    """Hugging Face's RoPE on projections made with its permuted ``q_proj``/``k_proj`` equals the export.

    Args:
        export: the notebook's tensors; x: token_embeddings [n, dim] bf16; q_proj [n_heads*head_dim, dim] and
            k_proj [n_kv_heads*head_dim, dim] bf16 in Hugging Face's row order.
        rope_scaling: the llama3 scaling constants of the config (default: Llama 3.1's), used with ``use_scaled_rope``.

    Checks (AssertionError on failure):
        1. Projections: ``F.linear(x, q_proj)`` re-paired equals the exported ``xq`` bitwise (permuting a weight's
           rows permutes the product's columns; each number is the same dot product).
        2. float32 path (cos/sin float32): within 8 float32 units of each pair's length of Meta's float32 rotation
           (2 roundings per method, cos/sin from another routine), and within one bf16 spacing (plus that) of the
           exported bf16 rotation, since a float32 difference can move a value across a bf16 rounding boundary.
        3. Hugging Face's own bf16 path: within 4 * 2**-8 + 2**-12 of each pair's length of the export. bf16 keeps
           8 significant bits, so one rounding changes a value by at most 2**-8 of it. Measured in the pair's length
           r: rounding cos and sin to bf16 moves a*cos - b*sin by at most 2**-8 r, rounding the two products by at
           most 2**-8 r, rounding their sum by 2**-8 r, and the export's own rounding to bf16 by 2**-8 r; 2**-12
           covers the second-order terms.
        4. Scores q·k per query head (float32 path): within (2 head_dim + 16) float32 units of sum_i |q_i||k_i|.
    """
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    n, hd, H, KV = x.shape[0], params.head_dim, params.n_heads, params.n_kv_heads
    q_hf = F.linear(x, q_proj).view(1, n, H, hd).transpose(1, 2)  # [1, heads, n, head_dim], HF's layout
    k_hf = F.linear(x, k_proj).view(1, n, KV, hd).transpose(1, 2)
    assert torch.equal(pairs_from_halves(q_hf[0].transpose(0, 1)).flatten(-2), export["xq"])
    assert torch.equal(pairs_from_halves(k_hf[0].transpose(0, 1)).flatten(-2), export["xk"])

    freqs_cis = torch.view_as_complex(export["freqs_cis"])
    kwargs = hf_config_kwargs(params, rope_scaling)
    for name, hf, xname in (("q", q_hf, "xq"), ("k", k_hf, "xk")):
        meta32 = meta_rotation_f32(export[xname], freqs_cis)
        length = pair_lengths(export[xname])
        cos, sin = hf_rotary(kwargs, n, torch.float32)
        out32, _ = apply_rotary_pos_emb(hf.float(), hf.float(), cos, sin)
        out32 = pairs_from_halves(out32[0].transpose(0, 1))  # [n, heads, head_dim/2, 2]
        assert ((out32 - meta32).abs() <= 8 * F32_UNIT * length).all(), name
        got, want = out32.flatten(-2).to(torch.bfloat16).float(), export[xname + "_rotated"].float()
        bound = bf16_ulp(torch.maximum(got.abs(), want.abs())) + (8 * F32_UNIT * length).expand_as(out32).flatten(-2)
        assert ((got - want).abs() <= bound).all(), name
        cos, sin = hf_rotary(kwargs, n, torch.bfloat16)
        out16, _ = apply_rotary_pos_emb(hf, hf, cos, sin)
        assert out16.dtype == torch.bfloat16
        out16 = pairs_from_halves(out16[0].transpose(0, 1)).float()
        want = export[xname + "_rotated"].float().reshape(out16.shape)
        assert ((out16 - want).abs() <= (4 * 2.0**-8 + 2.0**-12) * length).all(), name

    cos, sin = hf_rotary(kwargs, n, torch.float32)
    q32, k32 = apply_rotary_pos_emb(q_hf.float(), k_hf.float(), cos, sin)  # [1, heads, n, head_dim]
    rep = torch.arange(H) // params.n_rep  # Meta's repeat_kv: query head h uses key head h // n_rep
    scores_hf = q32[0] @ k32[0][rep].transpose(-1, -2)  # [n_heads, n, n]
    mq = meta_rotation_f32(export["xq"], freqs_cis).flatten(-2).transpose(0, 1)
    mk = meta_rotation_f32(export["xk"], freqs_cis).flatten(-2).transpose(0, 1)[rep]
    scores_meta = mq @ mk.transpose(-1, -2)
    scale = pair_lengths(export["xq"])[..., 0].transpose(0, 1) @ pair_lengths(export["xk"])[..., 0].transpose(0, 1)[rep].transpose(-1, -2)
    assert ((scores_hf - scores_meta).abs() <= (2 * hd + 16) * F32_UNIT * scale).all()


def check_against_meta(export, tokens, state, params):
    """The export equals Meta's reference code on the same checkpoint, bitwise.

    Args:
        export: the notebook's tensors; tokens: the prompt's ids; state: Meta-layout tensors by Meta's names
            (bf16); params: the folder's params.

    Checks: shapes and dtypes; ``xq``/``xk`` against Meta's RMSNorm + linear layers; ``freqs_cis`` against
    ``precompute_freqs_cis(head_dim, n, rope_theta, use_scaled_rope)`` and against the first n rows of the
    table Meta's ``Transformer`` builds (``end = 2 * max_seq_len``, here 2 * context_length); the rotations
    against ``apply_rotary_emb``.
    """
    M = references.meta_llama3_model()
    n, hd = len(tokens), params.head_dim
    assert set(export) == {"xq", "xk", "xq_rotated", "xk_rotated", "freqs_cis"}
    assert export["xq"].shape == export["xq_rotated"].shape == (n, params.n_heads, hd)
    assert export["xk"].shape == export["xk_rotated"].shape == (n, params.n_kv_heads, hd)
    assert export["freqs_cis"].shape == (n, hd // 2, 2) and export["freqs_cis"].dtype == torch.float32
    for key in ("xq", "xk", "xq_rotated", "xk_rotated"):
        assert export[key].dtype == torch.bfloat16, key

    _, xq, xk = meta_projections(
        state["tok_embeddings.weight"],
        state["layers.0.attention_norm.weight"],
        state["layers.0.attention.wq.weight"],
        state["layers.0.attention.wk.weight"],
        tokens,
        params,
    )
    assert torch.equal(export["xq"], xq) and torch.equal(export["xk"], xk)

    freqs_cis = M.precompute_freqs_cis(hd, n, params.rope_theta, params.use_scaled_rope)
    assert torch.equal(export["freqs_cis"], torch.view_as_real(freqs_cis))
    table = M.precompute_freqs_cis(hd, 2 * params.context_length, params.rope_theta, params.use_scaled_rope)
    assert torch.equal(export["freqs_cis"], torch.view_as_real(table[:n]))

    xq_rot, xk_rot = M.apply_rotary_emb(xq[None], xk[None], freqs_cis)
    assert torch.equal(export["xq_rotated"], xq_rot[0]) and torch.equal(export["xk_rotated"], xk_rot[0])


# --------------------------------------------------------------------------- folders


@pytest.fixture(scope="session")
def hf_dir(hf_standin_dir) -> Path:
    """The Hugging Face safetensors copy of the stand-in (``hf_standin_dir`` in conftest.py)."""
    return hf_standin_dir


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("prompt", PROMPTS.values(), ids=PROMPTS.keys())
def test_meta_format_matches_meta_reference(run_notebook, standin_dir, prompt):
    export = run_notebook("04", prompt=prompt)
    check_against_meta(export, prompt_tokens(prompt), meta_state(standin_dir), meta_params())


@pytest.mark.parametrize("prompt", PROMPTS.values(), ids=PROMPTS.keys())
def test_meta_format_matches_hugging_face(run_notebook, standin_dir, prompt):
    export, p, sd = run_notebook("04", prompt=prompt), meta_params(), meta_state(standin_dir)
    x, _, _ = meta_projections(
        sd["tok_embeddings.weight"],
        sd["layers.0.attention_norm.weight"],
        sd["layers.0.attention.wq.weight"],
        sd["layers.0.attention.wk.weight"],
        prompt_tokens(prompt),
        p,
    )
    q_proj = plumbing.hf_permute(sd["layers.0.attention.wq.weight"], p.n_heads)
    k_proj = plumbing.hf_permute(sd["layers.0.attention.wk.weight"], p.n_kv_heads)
    check_against_hugging_face(export, x, q_proj, k_proj, p)


@pytest.mark.parametrize("prompt", [PROMPTS["default"], PROMPTS["long"]], ids=["default", "long"])
def test_hf_format_gives_the_same_exports(run_notebook, hf_dir, prompt):
    """Hugging Face weights (un-permuted by plumbing) give bitwise the exports of Meta's weights."""
    from_hf, from_meta = run_notebook("04", prompt=prompt, llama3_dir=hf_dir), run_notebook("04", prompt=prompt)
    assert set(from_hf) == set(from_meta)
    for key in from_meta:
        assert torch.equal(from_hf[key], from_meta[key]), key


@pytest.mark.parametrize("prompt", [PROMPTS["default"], PROMPTS["long"]], ids=["default", "long"])
def test_hf_format_matches_hugging_face(run_notebook, hf_dir, prompt):
    """Hugging Face's RoPE on the q_proj/k_proj stored in the safetensors file matches the notebook's export."""
    from safetensors import safe_open

    export, p = run_notebook("04", prompt=prompt, llama3_dir=hf_dir), meta_params()
    stored = {}
    for shard in sorted(hf_dir.glob("*.safetensors")):
        with safe_open(str(shard), framework="pt") as f:
            stored.update({name: f.get_tensor(name) for name in f.keys()})
    q_proj, k_proj = stored["model.layers.0.self_attn.q_proj.weight"], stored["model.layers.0.self_attn.k_proj.weight"]
    emb_rows = stored["model.embed_tokens.weight"]
    norm_weight = stored["model.layers.0.input_layernorm.weight"]
    x, _, _ = meta_projections(emb_rows, norm_weight, q_proj, k_proj, prompt_tokens(prompt), p)
    check_against_hugging_face(export, x, q_proj, k_proj, p)


def test_the_context_guard_refuses_a_longer_prompt():
    """The deep dive's ``check_context``: 8192 tokens fit, 8200 stop with a clear ValueError.

    Meta's code has no such guard (its ``generate`` checks only ``max_seq_len``), so the notebook's core path has
    none either; the guard is taught in the deep dive "RoPE beyond the trained context" and tested here on its own.
    """
    import ast

    import nbformat

    notebook = next(path for path in plumbing.series_notebooks() if path.name.startswith("04_"))
    cells = [
        "\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!", "###")))
        for c in nbformat.read(notebook, as_version=4).cells
        if c.cell_type == "code"
    ]  # Python only
    found = [
        node for source in cells for node in ast.parse(source).body if isinstance(node, ast.FunctionDef) and node.name == "check_context"
    ]
    assert len(found) == 1, "notebook 04 defines check_context once"
    namespace: dict = {}
    exec(compile(ast.Module(body=found, type_ignores=[]), "check_context", "exec"), namespace)
    namespace["check_context"](8192, 8192)  # fits: no error
    with pytest.raises(ValueError, match=r"The prompt has 8,200 tokens, but this model was trained on at most 8,192"):
        namespace["check_context"](8200, 8192)
