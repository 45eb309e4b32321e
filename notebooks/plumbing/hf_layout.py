"""Hugging Face's names and ``wq``/``wk`` row order, mapped to Meta's.

Hugging Face's conversion script (transformers ``convert_llama_weights_to_hf.py``) renames every
tensor and permutes the rows of ``wq`` and ``wk`` so that its ``rotate_half`` RoPE gives the same
attention scores as Meta's interleaved pairs. Loading undoes both, so every notebook sees Meta's layout.
"""

from __future__ import annotations

HF_TO_META = {
    "model.embed_tokens.weight": "tok_embeddings.weight",
    "model.norm.weight": "norm.weight",
    "lm_head.weight": "output.weight",
}
HF_LAYER_TO_META = {
    "input_layernorm.weight": "attention_norm.weight",
    "self_attn.q_proj.weight": "attention.wq.weight",
    "self_attn.k_proj.weight": "attention.wk.weight",
    "self_attn.v_proj.weight": "attention.wv.weight",
    "self_attn.o_proj.weight": "attention.wo.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "feed_forward.w1.weight",
    "mlp.down_proj.weight": "feed_forward.w2.weight",
    "mlp.up_proj.weight": "feed_forward.w3.weight",
}


def hf_name_to_meta(name: str) -> str | None:
    """Hugging Face tensor name -> Meta's name (``None`` for names Meta's checkpoint lacks)."""
    if name in HF_TO_META:
        return HF_TO_META[name]
    parts = name.split(".", 3)
    if len(parts) == 4 and parts[0] == "model" and parts[1] == "layers" and parts[3] in HF_LAYER_TO_META:
        return f"layers.{parts[2]}.{HF_LAYER_TO_META[parts[3]]}"
    return None


def hf_permute(w, n_heads: int):
    """The row permutation Hugging Face's conversion applies to ``wq``/``wk`` (interleaved -> halves).

    Follows ``permute`` in transformers' ``convert_llama_weights_to_hf.py``:
    ``w.view(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2)``. Used by tests and notebook 04.
    """
    rows, cols = w.shape
    return w.view(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def hf_unpermute(w, n_heads: int):
    """Inverse of :func:`hf_permute`: Hugging Face's ``q_proj``/``k_proj`` rows back to Meta's ``wq``/``wk``."""
    rows, cols = w.shape
    return w.view(n_heads, 2, rows // n_heads // 2, cols).transpose(1, 2).reshape(rows, cols)


def meta_name_to_hf(name: str) -> str:
    """Meta's tensor name -> Hugging Face's (the inverse of :func:`hf_name_to_meta`), for writing Hugging Face copies.

    Raises:
        KeyError: not a tensor name of Meta's Llama checkpoints.
    """
    to_hf = {meta: hf for hf, meta in HF_TO_META.items()}
    if name in to_hf:
        return to_hf[name]
    parts = name.split(".", 2)
    layer_names = {meta: hf for hf, meta in HF_LAYER_TO_META.items()}
    if len(parts) == 3 and parts[0] == "layers" and parts[2] in layer_names:
        return f"model.layers.{parts[1]}.{layer_names[parts[2]]}"
    raise KeyError(name)


def hf_config(params) -> dict:
    """The ``config.json`` Hugging Face's conversion writes for :class:`~plumbing.params.ModelParams` ``params``
    (``transformers``' ``convert_llama_weights_to_hf.py``: Meta's names mapped to Hugging Face's keys), with
    ``rope_scaling`` when ``use_scaled_rope`` (the constants of ``params.rope_scaling``: factor 32 for Llama 3.2 1B
    and 3B) and ``tie_word_embeddings`` as ``params.tied_embeddings``."""
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": params.dim,
        "num_hidden_layers": params.n_layers,
        "num_attention_heads": params.n_heads,
        "num_key_value_heads": params.n_kv_heads,
        "vocab_size": params.vocab_size,
        "intermediate_size": params.ffn_hidden_dim,
        "rms_norm_eps": params.norm_eps,
        "rope_theta": params.rope_theta,
        "max_position_embeddings": 8192,
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": params.tied_embeddings,
    }
    if params.use_scaled_rope:
        config["rope_scaling"] = {"rope_type": "llama3", **{k: v for k, v in params.rope_scaling.items() if k != "source"}}
        config["max_position_embeddings"] = params.context_length
    return config
