"""Notebook 07 (all layers to the next token): its logits against Meta's llama-models and Hugging Face transformers.

The notebook runs every transformer block, the final ``norm`` and the ``output`` projection by hand, and exports
``07_next_token.safetensors``: ``logits`` [seqlen, vocab_size] float32 and ``next_token`` int64 [1] (the argmax of
the last position). These tests compare the export with independent implementations:

* Meta's ``Transformer.forward`` (``llama_models/llama3/model.py``, built by ``references.meta_transformer`` with
  the memory-mapped checkpoint assigned as its parameters, nothing copied). The notebook performs Meta's
  operations in Meta's order on the same bf16 tensors (each ``nn.Linear`` is ``x @ W.T``, the softmax is taken
  in float32 and rounded back, the residual additions are bf16), so the logits must be **bitwise** equal.
* Hugging Face's ``LlamaForCausalLM`` (eager attention, bf16) on a Hugging Face-format copy of a small model,
  with ``q_proj``/``k_proj`` rows permuted as the conversion script does. Its order of operations differs
  (rotate-half RoPE with cos/sin rounded to bf16, scores multiplied by ``head_dim ** -0.5`` instead of divided
  by ``sqrt(head_dim)``), so the logits agree within a tolerance derived below, and the next token is the same.

Weights: the synthetic stand-in (Meta-Llama-3-8B's shapes, 32 layers; marked ``slow``) and a small random
Meta-format checkpoint of other shapes built here (dim 256, 8 heads, 2 key/value heads, 3 layers, the real
128256-token vocabulary because the tokenizer is real).

The last tests show that the comparisons have teeth: a compact reimplementation of the forward pass is bitwise
equal to Meta's, and the same code with one classic bug (every block reading layer 0's weights, no causal mask,
``tok_embeddings`` in place of ``output``) differs from Meta's by far more than the Hugging Face tolerance.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import plumbing
import references

BF16_UNIT = 2.0**-8  # bf16 keeps 8 significant bits: one rounding changes a value by at most 2**-8 of it (2**-9 to nearest)

#: The small model: other shapes than the 8B in every dimension the notebook derives from params.json.
SMALL_PARAMS = {"dim": 256, "n_layers": 3, "n_heads": 8, "n_kv_heads": 2, "vocab_size": 128256,
                "multiple_of": 64, "norm_eps": 1e-05, "rope_theta": 500000.0}

PROMPTS = {
    "default": None,  # the series' prompt, 17 tokens
    "empty": "",  # just <|begin_of_text|>: one position, no mask
    "long": "Layer after layer, the residual stream carries each token's row to the next block. " * 6,
}


# --------------------------------------------------------------------------- helpers


def prompt_tokens(prompt: str | None) -> list[int]:
    """Token ids of ``prompt`` (``None``: the default prompt) from Meta's own ``Tokenizer`` (bos, no eos)."""
    text = plumbing.DEFAULT_PROMPT if prompt is None else prompt
    return references.meta_tokenizer().encode(text, bos=True, eos=False)


def load_state(folder: Path) -> dict:
    """``consolidated.00.pth`` as Meta loads it (``torch.load``, memory-mapped): name -> bf16 tensor."""
    return torch.load(folder / "consolidated.00.pth", map_location="cpu", mmap=True, weights_only=True)


def meta_logits(folder: Path, tokens: list[int]) -> torch.Tensor:
    """Meta's ``Transformer.forward(tokens, start_pos=0)`` on the checkpoint in ``folder``: [seqlen, vocab_size] float32."""
    params = plumbing.ModelParams.from_json(folder / "params.json")
    model = references.meta_transformer(load_state(folder), params, max_seq_len=len(tokens))
    return model(torch.tensor([tokens]), 0)[0]


def small_tensors(params: plumbing.ModelParams, seed: int = 7) -> dict:
    """Random bf16 tensors for every name and shape of ``params`` (Meta's names).

    Matrices have standard deviation 1/sqrt(in_features), so every projection keeps its input's scale and the
    attention scores (head_dim 32) spread over a few units: the softmax is far from uniform and the causal mask
    matters. Norm gains are 1 + 0.1 * N(0, 1); embeddings N(0, 1).
    """
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in params.expected_shapes().items():
        if len(shape) == 1:
            t = 1 + 0.1 * torch.randn(shape, generator=g)
        elif name == "tok_embeddings.weight":
            t = torch.randn(shape, generator=g)
        else:
            t = torch.randn(shape, generator=g) / math.sqrt(shape[1])
        out[name] = t.to(torch.bfloat16)
    return out


def hf_state(meta_state: dict, params: plumbing.ModelParams) -> dict:
    """Hugging Face names and layout for Meta's tensors: ``q_proj``/``k_proj`` rows permuted as the conversion does."""
    to_hf = {v: k for k, v in plumbing.HF_TO_META.items()}
    out = {}
    for name, t in meta_state.items():
        if name in to_hf:
            hf = to_hf[name]
        else:
            _, layer, rest = name.split(".", 2)
            hf = f"model.layers.{layer}." + next(k for k, v in plumbing.HF_LAYER_TO_META.items() if v == rest)
        if name.endswith("attention.wq.weight"):
            t = references.hf_permute_by_index(t, params.n_heads)
        elif name.endswith("attention.wk.weight"):
            t = references.hf_permute_by_index(t, params.n_kv_heads_resolved)
        out[hf] = t.contiguous().clone()
    return out


def hugging_face_logits(folder: Path, tokens: list[int]) -> torch.Tensor:
    """``LlamaForCausalLM`` (bf16, eager attention) on ``tokens``: [seqlen, vocab_size], its bf16 logits as float32."""
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(folder, dtype=torch.bfloat16, attn_implementation="eager").eval()
    with torch.inference_mode():
        return model(torch.tensor([tokens])).logits[0].float()


# --------------------------------------------------------------------------- a compact forward pass, with optional bugs


def compact_forward(state: dict, params: plumbing.ModelParams, tokens: list[int], bug: str | None = None) -> torch.Tensor:
    """The forward pass in a few lines, Meta's operations in Meta's order: [seqlen, vocab_size] float32.

    ``bug`` injects one classic mistake: ``"layer 0 weights"`` (every block reads layer 0's tensors),
    ``"no mask"`` (no causal mask: earlier positions see later ones), ``"tok_embeddings as output"`` (the
    output projection uses the embedding table, as a tied-embedding model would).
    """
    seqlen, hd = len(tokens), params.head_dim
    H, Hkv, eps = params.n_heads, params.n_kv_heads_resolved, params.norm_eps

    def norm(x, w):
        return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * w

    def rotate(x, cis):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * cis[:, None, :]).flatten(-2).type_as(x)

    freqs = 1.0 / (params.rope_theta ** (torch.arange(0, hd, 2)[: hd // 2].float() / hd))
    cis = torch.polar(torch.ones(seqlen, hd // 2), torch.outer(torch.arange(seqlen, dtype=torch.float32), freqs))
    mask = torch.triu(torch.full((seqlen, seqlen), float("-inf")), diagonal=1).to(torch.bfloat16)
    h = state["tok_embeddings.weight"][torch.tensor(tokens)]
    for layer in range(params.n_layers):
        w = lambda name: state[f"layers.{0 if bug == 'layer 0 weights' else layer}.{name}.weight"]  # noqa: E731
        x = norm(h, w("attention_norm"))
        xq = rotate((x @ w("attention.wq").T).view(seqlen, H, hd), cis).transpose(0, 1)
        xk = rotate((x @ w("attention.wk").T).view(seqlen, Hkv, hd), cis).repeat_interleave(H // Hkv, 1).transpose(0, 1)
        xv = (x @ w("attention.wv").T).view(seqlen, Hkv, hd).repeat_interleave(H // Hkv, 1).transpose(0, 1)
        scores = xq @ xk.transpose(1, 2) / math.sqrt(hd)
        if seqlen > 1 and bug != "no mask":
            scores = scores + mask
        attn = (F.softmax(scores.float(), dim=-1).type_as(xq) @ xv).transpose(0, 1).contiguous().view(seqlen, -1)
        h = h + attn @ w("attention.wo").T
        x = norm(h, w("ffn_norm"))
        h = h + (F.silu(x @ w("feed_forward.w1").T) * (x @ w("feed_forward.w3").T)) @ w("feed_forward.w2").T
    out = state["tok_embeddings.weight" if bug == "tok_embeddings as output" else "output.weight"]
    return (norm(h, state["norm.weight"]) @ out.T).float()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def small_dir(tmp_path_factory, standin_dir) -> Path:
    """A small random Meta-format checkpoint: params.json, consolidated.00.pth, the real tokenizer.model, no STANDIN.json."""
    folder = tmp_path_factory.mktemp("small07")
    params = plumbing.ModelParams.from_dict(SMALL_PARAMS)
    (folder / "params.json").write_text(json.dumps(SMALL_PARAMS))
    torch.save(small_tensors(params), folder / "consolidated.00.pth")
    shutil.copy(standin_dir / "tokenizer.model", folder / "tokenizer.model")
    assert not plumbing.is_standin(folder)
    return folder


@pytest.fixture(scope="module")
def hf_small_dir(tmp_path_factory, small_dir) -> Path:
    """The small model in Hugging Face's format: config.json (``references.hf_config``) and model.safetensors."""
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("hf_small07")
    params = plumbing.ModelParams.from_json(small_dir / "params.json")
    save_file(hf_state(load_state(small_dir), params), str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(references.hf_config(params)))
    return folder
