"""Notebook 05 (attention): its exports against Meta's llama-models and Hugging Face transformers.

Every test executes ``notebooks/05_attention.ipynb`` in a fresh kernel (the ``run_notebook`` fixture, with
``LLAMA3_EXPORT_DIR`` set) and compares ``05_attention.safetensors`` (``xv``, ``attention_weights``,
``attention_output``, ``h``) with independent implementations:

* Meta's ``Attention`` (``llama_models/llama3/model.py``, ``references.meta_attention``) on the memory-mapped
  checkpoint, its ``forward`` with ``start_pos`` 0, ``meta_freqs_cis`` and ``meta_mask`` in bf16, fed with
  the ``attention_norm`` of the embedding rows computed by Meta's ``RMSNorm``. The notebook performs Meta's
  operations in Meta's order on the same inputs, so every comparison is bitwise.
* Hugging Face's ``LlamaModel`` (one layer, ``attn_implementation="eager"``, bf16) on the Hugging Face copy of
  the stand-in: its ``LlamaAttention`` and the residual that follows it. Hugging Face rotates in bf16 and
  multiplies the scores by ``head_dim**-0.5``, so the comparison uses an elementwise bound derived from those
  roundings (:func:`hugging_face_bounds`).

Weights: the stand-in (Meta-Llama-3-8B's shapes), the Hugging Face copy, and small random Meta-format
checkpoints of other shapes (``n_rep`` 4, and ``n_rep`` 1 with Llama 3.1's ``use_scaled_rope``) built here,
without the stand-in marker, so the notebook reads them as real checkpoints.
"""

from __future__ import annotations

import math
from pathlib import Path
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

import plumbing
import references
from references import meta_state, prompt_tokens
from tools.run_notebooks import execute_notebook

EXPORTS = {"xv", "attention_weights", "attention_output", "h"}
F32_UNIT, BF16_UNIT = 2.0**-24, 2.0**-8  # largest relative change of one rounding to float32 / to bf16

PROMPTS = {
    "default": None,  # the series' prompt, 17 tokens
    "empty": "",  # just <|begin_of_text|>: one token, Meta passes no mask
    "long": "Attention lets every token look back at the tokens before it; the mask hides the future. " * 11,  # ~200 tokens
    "non_english": "Ответ на главный вопрос жизни, вселенной и всего такого: 42. 答案是四十二。 الجواب هو اثنان وأربعون",
}


# --------------------------------------------------------------------------- helpers


def meta_reference(state: dict, params: plumbing.ModelParams, tokens: list[int]) -> dict:
    """Meta's layer-0 attention on ``tokens``: everything the notebook exports, computed by Meta's modules.

    ``Attention.forward`` returns only its output, so ``wv``'s output is taken with a forward hook and the
    softmax's float32 result by wrapping ``F.softmax`` during the call (Meta then rounds it with ``type_as``).

    Returns:
        ``x`` (the ``attention_norm`` output [T, dim]), ``output`` (the heads side by side, ``wo``'s input
        [T, dim]) and the four exports, all bf16.
    """
    M = references.meta_llama3_model()
    n = len(tokens)
    norm = M.RMSNorm(params.dim, eps=params.norm_eps)
    norm.weight = torch.nn.Parameter(state["layers.0.attention_norm.weight"], requires_grad=False)
    attention = references.meta_attention(state, params, 0, max_seq_len=n)
    emb = state["tok_embeddings.weight"][torch.tensor(tokens)][None]  # [1, T, dim], batch of one
    seen = {}
    attention.wv.register_forward_hook(lambda module, args, out: seen.__setitem__("xv", out))
    attention.wo.register_forward_pre_hook(lambda module, args: seen.__setitem__("output", args[0]))
    softmax = F.softmax

    def recording_softmax(*args, **kwargs):
        out = softmax(*args, **kwargs)
        seen["weights"] = out
        return out

    with torch.no_grad(), mock.patch.object(M.F, "softmax", recording_softmax):
        x = norm(emb)
        out = attention(x, 0, references.meta_freqs_cis(params, n), references.meta_mask(n, 0, torch.bfloat16))
        h = emb + out  # TransformerBlock.forward: h = x + self.attention(self.attention_norm(x), ...)
    return {
        "x": x[0],
        "xv": seen["xv"][0].view(n, params.n_kv_heads, params.head_dim),
        "attention_weights": seen["weights"][0].to(torch.bfloat16),
        "output": seen["output"][0],
        "attention_output": out[0],
        "h": h[0],
    }


def check_against_meta(export: dict, state: dict, params: plumbing.ModelParams, tokens: list[int]) -> None:
    """Shapes, dtypes, and bitwise equality of all four exports with Meta's reference."""
    n, H, KV, hd = len(tokens), params.n_heads, params.n_kv_heads, params.head_dim
    assert set(export) == EXPORTS
    assert export["xv"].shape == (n, KV, hd)
    assert export["attention_weights"].shape == (H, n, n)
    assert export["attention_output"].shape == export["h"].shape == (n, params.dim)
    for key in EXPORTS:
        assert export[key].dtype == torch.bfloat16, key
    ref = meta_reference(state, params, tokens)
    for key in EXPORTS:
        assert plumbing.same_bits(export[key], ref[key]), key


def check_weight_independent_facts(export: dict) -> None:
    """The mask's zeros and the row sums, which hold for any weights.

    Every weight above the diagonal is exactly +0.0. Each row sums to 1 within 2**-8 + (T + 4) * 2**-24:
    the float32 softmax sums to 1 within (T + 4) float32 units (one rounding per term and the division), and
    rounding each weight to bf16 changes it by at most 2**-8 of itself.
    """
    w = export["attention_weights"]
    n = w.shape[-1]
    above = torch.ones(n, n, dtype=torch.bool).triu(1)
    assert plumbing.same_bits(w[:, above], torch.zeros_like(w[:, above]))
    sums = w.double().sum(-1)
    assert ((sums - 1).abs() <= BF16_UNIT + (n + 4) * F32_UNIT).all()


# --------------------------------------------------------------------------- Hugging Face


def pair_lengths(x):
    """Length of every adjacent pair, repeated for both members: x [..., head_dim] -> [..., head_dim] float64."""
    pairs = x.double().reshape(*x.shape[:-1], -1, 2)
    return pairs.norm(dim=-1, keepdim=True).expand_as(pairs).reshape(x.shape)


def hugging_face_bounds(tokens, state, params, ref) -> dict:
    """Elementwise bounds on |Hugging Face - Meta| for the attention weights, ``attention_output`` and ``h``.

    Derivation (bf16 rounding: relative 2**-8; float32: 2**-24 per rounding, n * 2**-24 of the sum of |terms|
    for a sum of n terms; all bounds computed in float64):

    1. Rotation. Hugging Face rotates in bf16 (cos, sin, both products and their sum rounded), Meta in float32
       rounded once; ``tests/notebooks/test_04_rope.py`` bounds the difference by rho = 4 * 2**-8 + 2**-12 of each pair's
       length (the unrotated pair's length r). So |dq_i| <= rho r_q and |dk_i| <= rho r_k per number.
    2. Scores. |q'.k' - q.k| <= sum_i (|dq_i||k_i| + |q_i||dk_i| + |dq_i||dk_i|) =: D. Each side rounds its
       float32 product to bf16 and rounds again after the scaling (Meta divides by sqrt(d_h), Hugging Face
       multiplies by head_dim**-0.5): (2**-7 + 2**-15) of the score, plus d_h float32 units of the scale
       C = sum_i |q_i k_i| / sqrt(d_h). So eps <= D/sqrt(d_h) + (2**-7 + 2**-15)(2A + D/sqrt(d_h))
       + 2 d_h 2**-24 (2C + D/sqrt(d_h)) (1 + 2**-6), with A >= |exact score|.
    3. Weights. Shifting every score of a row by at most eps (its largest value over the visible positions)
       multiplies each softmax weight by a factor within e^(+-2 eps); both sides' float32 softmax errors and
       roundings to bf16 add 2**-7 + 2**-14 + (T + 8) 2**-22 to the exponent: |w' - w| <= eta w,
       eta = e^kappa - 1. Masked weights are 0 on both sides (Hugging Face adds finfo.min; exp underflows).
    4. Output per head: |o' - o| <= eta (w |v|) + both float32 sums (T 2**-24 (2 + eta) w|v|) + both roundings
       to bf16 (2**-8 (|o| + |o'|)); the values are bitwise equal on both sides (checked).
    5. ``o_proj`` = ``wo``: |ao' - ao| <= B_o |wo|^T + dim 2**-24 (2|o| + B_o)|wo|^T + 2**-8 (|ao| + |ao'|).
    6. h = embedding + ao, rounded to bf16: |h' - h| <= B_ao + 2**-8 (|h| + |h'|).
    Each "|x'| <= |x| + B" is folded in by a factor 1 + 2**-7.
    """
    M = references.meta_llama3_model()
    n, H, KV, hd, n_rep = len(tokens), params.n_heads, params.n_kv_heads, params.head_dim, params.n_rep
    x = ref["x"]
    xq = F.linear(x, state["layers.0.attention.wq.weight"]).view(1, n, H, hd)
    xk = F.linear(x, state["layers.0.attention.wk.weight"]).view(1, n, KV, hd)
    q, k = M.apply_rotary_emb(xq, xk, references.meta_freqs_cis(params, n))
    q, k = q[0].transpose(0, 1).double(), M.repeat_kv(k, n_rep)[0].transpose(0, 1).double()  # [H, T, hd]
    rho = 4 * BF16_UNIT + 2.0**-12
    dq = rho * pair_lengths(xq[0]).transpose(0, 1)
    dk = rho * M.repeat_kv(pair_lengths(xk).to(torch.float64), n_rep)[0].transpose(0, 1)
    kt = lambda t: t.transpose(1, 2)  # noqa: E731
    D = (dq @ kt(k.abs()) + q.abs() @ kt(dk) + dq @ kt(dk)) / math.sqrt(hd)
    C = q.abs() @ kt(k.abs()) / math.sqrt(hd)
    A = (q @ kt(k)).abs() / math.sqrt(hd) + hd * F32_UNIT * C
    eps = D + (2.0**-7 + 2.0**-15) * (2 * A + D) + 2 * hd * F32_UNIT * (2 * C + D) * (1 + 2.0**-6)
    visible = torch.ones(n, n, dtype=torch.bool).tril()
    eps_row = eps.where(visible, 0).amax(-1, keepdim=True)
    eta = torch.expm1(2 * eps_row + 2.0**-7 + 2.0**-14 + (n + 8) * 2.0**-22)
    w = ref["attention_weights"].double()  # Meta's weights [H, T, T]
    v = M.repeat_kv(ref["xv"][None], n_rep)[0].transpose(0, 1).double()
    wv_abs = w @ v.abs()
    o_bf16 = torch.matmul(ref["attention_weights"], v.to(torch.bfloat16)).double()  # Meta's bf16 output
    B_o = (eta * wv_abs + n * F32_UNIT * (2 + eta) * wv_abs + 2 * BF16_UNIT * o_bf16.abs()) * (1 + 2.0**-7)
    B_o = B_o.transpose(0, 1).reshape(n, -1)  # heads side by side, as the output rows
    o_abs = o_bf16.abs().transpose(0, 1).reshape(n, -1)
    wo_abs = state["layers.0.attention.wo.weight"].double().abs()
    B_ao = (
        B_o @ wo_abs.T + params.dim * F32_UNIT * (2 * o_abs + B_o) @ wo_abs.T + 2 * BF16_UNIT * ref["attention_output"].double().abs()
    ) * (1 + 2.0**-7)
    B_h = (B_ao + 2 * BF16_UNIT * ref["h"].double().abs()) * (1 + 2.0**-7)
    return {"attention_weights": eta * w, "output": B_o, "attention_output": B_ao, "h": B_h}


def hugging_face_layer0(hf_dir: Path, tokens: list[int]) -> dict:
    """Run Hugging Face's ``LlamaModel`` (layer 0 only, eager attention, bf16) and capture its attention half.

    Returns:
        ``x`` (``input_layernorm`` output), ``xv`` (``v_proj`` output), ``attention_weights`` and
        ``attention_output`` (``LlamaAttention``'s two results) and ``h`` (the residual sum, as received by
        ``post_attention_layernorm``), batch axis removed.
    """
    from transformers import LlamaModel
    from transformers.utils import logging

    logging.set_verbosity_error()  # the copy holds no final norm: its "newly initialized" notice is expected
    model = LlamaModel.from_pretrained(hf_dir, num_hidden_layers=1, attn_implementation="eager", dtype=torch.bfloat16)
    model.eval()
    layer = model.layers[0]
    seen = {}
    layer.input_layernorm.register_forward_hook(lambda m, a, out: seen.__setitem__("x", out[0]))
    layer.self_attn.v_proj.register_forward_hook(lambda m, a, out: seen.__setitem__("v", out[0]))
    layer.self_attn.o_proj.register_forward_pre_hook(lambda m, a: seen.__setitem__("output", a[0][0]))
    layer.self_attn.register_forward_hook(lambda m, a, out: seen.update(attention_output=out[0][0], attention_weights=out[1][0]))
    layer.post_attention_layernorm.register_forward_pre_hook(lambda m, a: seen.__setitem__("h", a[0][0]))
    with torch.no_grad():
        model(torch.tensor([tokens]))
    n, cfg = len(tokens), model.config
    seen["xv"] = seen.pop("v").view(n, cfg.num_key_value_heads, cfg.hidden_size // cfg.num_attention_heads)
    return seen


# --------------------------------------------------------------------------- folders


@pytest.fixture(scope="session")
def hf_dir(hf_standin_dir) -> Path:
    """The Hugging Face copy of the stand-in (``hf_standin_dir`` in conftest.py), as ``from_pretrained`` reads it."""
    return hf_standin_dir


def small_params(n_kv_heads: int, use_scaled_rope: bool) -> dict:
    """A ``params.json`` of other shapes: dim 256, 8 query heads of head_dim 32, 2 layers, the real vocabulary."""
    return {
        "dim": 256,
        "n_layers": 2,
        "n_heads": 8,
        "n_kv_heads": n_kv_heads,
        "vocab_size": 128256,
        "multiple_of": 256,
        "ffn_dim_multiplier": None,
        "norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "use_scaled_rope": use_scaled_rope,
    }


@pytest.fixture(scope="session")
def small_checkpoints(tmp_path_factory, standin_dir) -> dict:
    """Two small random Meta-format checkpoints: ``gqa`` (n_kv_heads 2, n_rep 4) and ``mha`` (n_kv_heads 8,
    n_rep 1, Llama 3.1's ``use_scaled_rope``).

    Each folder is written by ``references.write_small_checkpoint`` (every tensor name of the config, random
    values, Meta's ``tokenizer.model``, no stand-in marker: the notebook reads it as a real checkpoint).
    """
    return {
        name: references.write_small_checkpoint(tmp_path_factory.mktemp(f"small_{name}"), small_params(kv, scaled), seed)
        for name, (kv, scaled, seed) in {"gqa": (2, False, 5), "mha": (8, True, 6)}.items()
    }


# --------------------------------------------------------------------------- tests


@pytest.mark.notebook
@pytest.mark.parametrize("prompt", [p for k, p in PROMPTS.items() if k != "empty"], ids=[k for k in PROMPTS if k != "empty"])
def test_matches_meta_reference(run_notebook, standin_dir, prompt):
    """All four exports equal Meta's ``Attention`` (and the residual sum) bitwise; mask zeros and row sums hold.

    The empty prompt is checked the same way by :func:`test_one_token_prompt_runs_without_warnings`.
    """
    export = run_notebook("05", prompt=prompt)
    params = plumbing.ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS)
    check_against_meta(export, meta_state(standin_dir), params, prompt_tokens(prompt))
    check_weight_independent_facts(export)


@pytest.mark.notebook
@pytest.mark.parametrize("prompt", [PROMPTS["default"], PROMPTS["non_english"]], ids=["default", "non_english"])
def test_matches_hugging_face(run_notebook, hf_dir, standin_dir, prompt):
    """Hugging Face's eager ``LlamaAttention`` + residual on its own safetensors copy, within the derived bounds.

    Bitwise first: ``input_layernorm`` equals Meta's RMSNorm, ``v_proj`` gives the exported ``xv``, ``o_proj``
    is ``F.linear`` with ``wo`` of Hugging Face's own heads output, and ``h`` is the bf16 sum. Then the
    attention weights, the heads output (``o_proj``'s input), ``attention_output`` and ``h`` lie within
    :func:`hugging_face_bounds`. On the stand-in the measured differences reach about 45% of the weights'
    bound and 30% of the heads output's; past ``wo`` the bound adds up all ``dim`` errors with one sign and
    the measured difference is about 1% of it, so the telling checks are the first two with the bitwise ``o_proj``.
    """
    export, tokens = run_notebook("05", prompt=prompt), prompt_tokens(prompt)
    params, state = plumbing.ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS), meta_state(standin_dir)
    ref = meta_reference(state, params, tokens)
    hf = hugging_face_layer0(hf_dir, tokens)
    # Same inputs: RMSNorm and v_proj bitwise; o_proj is wo, and the residual the same bf16 sum.
    assert plumbing.same_bits(hf["x"], ref["x"])
    assert plumbing.same_bits(hf["xv"], export["xv"])
    assert plumbing.same_bits(hf["attention_output"], F.linear(hf["output"], state["layers.0.attention.wo.weight"]))
    emb = state["tok_embeddings.weight"][torch.tensor(tokens)]
    assert plumbing.same_bits(hf["h"], emb + hf["attention_output"])
    # Different roundings in RoPE and the scores: within the derived bounds.
    bounds = hugging_face_bounds(tokens, state, params, ref)
    theirs = {"output": ref["output"], **export}  # the heads side by side are not exported: Meta's, equal to the notebook's
    for key, bound in bounds.items():
        assert hf[key].dtype == torch.bfloat16, key
        diff = (hf[key].double() - theirs[key].double()).abs()
        assert (diff <= bound).all(), f"{key}: worst difference / bound = {(diff / bound.clamp_min(1e-300)).max().item():.3g}"
    masked = torch.ones(len(tokens), len(tokens), dtype=torch.bool).triu(1)
    assert (hf["attention_weights"][:, masked] == 0).all()


@pytest.mark.notebook
@pytest.mark.parametrize("name", ["gqa", "mha"])
def test_other_shapes_match_meta_reference(run_notebook, small_checkpoints, name):
    """Checkpoints of other shapes (n_rep 4 and 1; the latter with use_scaled_rope): bitwise Meta's reference."""
    folder = small_checkpoints[name]
    export = run_notebook("05", prompt=PROMPTS["non_english"], llama3_dir=folder)
    params = plumbing.ModelParams.from_json(folder / "params.json")
    assert (params.n_rep, params.head_dim) == ({"gqa": 4, "mha": 1}[name], 32)
    check_against_meta(export, meta_state(folder), params, prompt_tokens(PROMPTS["non_english"]))
    check_weight_independent_facts(export)


@pytest.mark.notebook
def test_one_token_prompt_runs_without_warnings(tmp_path, standin_dir):
    """LLAMA3_PROMPT="" (only <|begin_of_text|>): every cell runs, nothing goes to stderr, the exports are Meta's.

    Executed directly (not through ``run_notebook``) to see the cells' outputs.
    """

    from safetensors.torch import load_file

    env = plumbing.clean_environ()
    env.update(LLAMA3_PROMPT="", LLAMA3_EXPORT_DIR=str(tmp_path))
    nb = execute_notebook(plumbing.REPO_ROOT / "notebooks" / "05_attention.ipynb", None, env=env, progress=False)
    stderr = [
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == "stderr"
    ]
    assert stderr == []
    export = load_file(str(tmp_path / "05_attention.safetensors"))
    assert export["attention_weights"].shape[1:] == (1, 1) and export["h"].shape[0] == 1
    assert (export["attention_weights"] == 1).all()  # one position: all the weight on itself
    params = plumbing.ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS)
    check_against_meta(export, meta_state(standin_dir), params, prompt_tokens(""))
    check_weight_independent_facts(export)
