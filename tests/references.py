"""Independent reference implementations for the tests: Meta's llama-models code and Hugging Face transformers.

Meta's code is run through :mod:`plumbing.reference`, which the notebooks' own checks use too: Meta's
``llama_models/llama3/model.py`` with fairscale's model-parallel layers replaced by the plain layers they are at
model-parallel world size 1 (``ColumnParallelLinear`` and ``RowParallelLinear`` are ``nn.Linear`` without bias,
``VocabParallelEmbedding`` is ``nn.Embedding``). Meta's classes and functions themselves (``RMSNorm``,
``precompute_freqs_cis``, ``apply_rotary_emb``, ``repeat_kv``, ``Attention``, ``FeedForward``,
``TransformerBlock``, ``Transformer``) are Meta's unmodified code.

The ``meta_*`` builders below take a state dict (Meta's names) and :class:`plumbing.ModelParams`; the modules
are built on PyTorch's ``meta`` device and given the tensors with ``load_state_dict(..., assign=True)``, so
nothing is copied.
"""

from __future__ import annotations

import types

from plumbing import reference as _reference


#: The small model of tests 07 and 08 (``small_dir`` in conftest.py): other shapes than the 8B in every dimension
#: a notebook derives from params.json.
SMALL_PARAMS = {
    "dim": 256,
    "n_layers": 3,
    "n_heads": 8,
    "n_kv_heads": 2,
    "vocab_size": 128256,
    "multiple_of": 64,
    "norm_eps": 1e-05,
    "rope_theta": 500000.0,
}
#: A second one: one key/value head per query head (n_rep 1, repeat_kv does nothing), an FFN multiplier,
#: and Llama 3.1's scaled RoPE (Meta's apply_scaling).
SMALL_PARAMS_MHA = {
    "dim": 192,
    "n_layers": 2,
    "n_heads": 6,
    "n_kv_heads": 6,
    "vocab_size": 128256,
    "multiple_of": 32,
    "ffn_dim_multiplier": 1.3,
    "norm_eps": 1e-05,
    "rope_theta": 500000.0,
    "use_scaled_rope": True,
}


def _weights(state, params):
    """``state`` (name -> tensor) with ``params``, in the shape :mod:`plumbing.reference` takes (a checkpoint)."""
    return types.SimpleNamespace(get=state.__getitem__, keys=state.keys, params=params)


def meta_llama3_model():
    """Meta's reference ``llama_models.llama3.model`` module (fairscale replaced by plain layers)."""
    return _reference.meta_model_code()


def meta_model_args(params, max_seq_len: int = 64):
    """Meta's ``ModelArgs`` for :class:`plumbing.ModelParams` ``params``, batch size 1 (``max_seq_len`` sizes the KV cache)."""
    return _reference.model_args(params, max_seq_len)


def meta_attention(state, params, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``Attention`` of layer ``layer``, its ``wq wk wv wo`` assigned from ``state`` (Meta's names)."""
    return _reference.attention(_weights(state, params), layer, max_seq_len)


def meta_feed_forward(state, params, layer: int = 0):
    """Meta's ``FeedForward`` of layer ``layer`` (``w1 w2 w3`` assigned from ``state``)."""
    return _reference.feed_forward(_weights(state, params), layer)


def meta_block(state, params, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``TransformerBlock`` of layer ``layer``, every tensor assigned from ``state``."""
    return _reference.transformer_block(_weights(state, params), layer, max_seq_len)


def meta_transformer(state, params, max_seq_len: int = 64):
    """Meta's whole ``Transformer``, every tensor assigned from ``state``; ``freqs_cis`` computed by Meta's code."""
    return _reference.transformer(_weights(state, params), max_seq_len)


def meta_freqs_cis(params, seqlen: int, start_pos: int = 0):
    """``freqs_cis`` [seqlen, head_dim/2] complex64 as Meta's ``Transformer`` slices it."""
    full = _reference.precompute_freqs_cis(params, 2 * max(seqlen + start_pos, 1))
    return full[start_pos : start_pos + seqlen]


def meta_mask(seqlen: int, start_pos: int = 0, dtype=None):
    """The causal mask exactly as Meta's ``Transformer.forward`` builds it (``None`` for one token)."""
    import torch

    if seqlen <= 1:
        return None
    mask = torch.triu(torch.full((seqlen, seqlen), float("-inf")), diagonal=1)
    mask = torch.hstack([torch.zeros((seqlen, start_pos)), mask])
    return mask if dtype is None else mask.type(dtype)


def meta_tokenizer():
    """Meta's reference ``Tokenizer`` from llama-models 0.3.0 (the Llama 3.2 special-token names; the ids are Llama 3's)."""
    from llama_models.llama3.tokenizer import Tokenizer

    return Tokenizer.get_instance()


def hf_permute_by_index(w, n_heads: int):
    """Hugging Face's conversion permutation of ``wq``/``wk`` rows, written independently of plumbing.

    Within each head of ``hd`` rows, Meta's rows ``2j`` and ``2j + 1`` (pair ``j``) become Hugging Face's
    rows ``j`` and ``j + hd/2`` (transformers' ``convert_llama_weights_to_hf.py``, ``permute``).
    """
    import torch

    hd = w.shape[0] // n_heads
    order = [h * hd + 2 * j + odd for h in range(n_heads) for odd in (0, 1) for j in range(hd // 2)]
    return w[torch.tensor(order)]


def hf_config(params) -> dict:
    """A Hugging Face ``config.json`` for :class:`plumbing.ModelParams` ``params``, as the conversion writes it."""
    import plumbing

    return plumbing.hf_layout.hf_config(params)


def prompt_tokens(prompt: str | None) -> list[int]:
    """Token ids of ``prompt`` (``None``: the default prompt) from Meta's own ``Tokenizer`` (bos, no eos)."""
    import plumbing

    text = plumbing.DEFAULT_PROMPT if prompt is None else prompt
    return meta_tokenizer().encode(text, bos=True, eos=False)


def meta_state(folder) -> dict:
    """``consolidated.00.pth`` in ``folder`` as Meta loads it (``torch.load``, memory-mapped): name -> bf16 tensor."""
    import torch
    from pathlib import Path

    return torch.load(Path(folder) / "consolidated.00.pth", map_location="cpu", mmap=True, weights_only=True)


def meta_shapes(raw_params: dict) -> dict:
    """Meta name -> shape of every tensor of a ``params.json``, by Meta's ``ModelArgs`` rules, written independently of plumbing.

    ``head_dim = dim // n_heads``; ``wk``/``wv`` have ``n_kv_heads * head_dim`` rows (``n_heads`` when absent); the
    hidden size is ``FeedForward.__init__``'s formula.
    """
    dim, n_heads = raw_params["dim"], raw_params["n_heads"]
    head_dim, n_kv_heads = dim // n_heads, raw_params.get("n_kv_heads") or n_heads
    hidden = int(2 * (4 * dim) / 3)
    if raw_params.get("ffn_dim_multiplier") is not None:
        hidden = int(raw_params["ffn_dim_multiplier"] * hidden)
    multiple_of = raw_params["multiple_of"]
    hidden = multiple_of * ((hidden + multiple_of - 1) // multiple_of)
    vocab = raw_params["vocab_size"]
    shapes = {"tok_embeddings.weight": (vocab, dim), "norm.weight": (dim,), "output.weight": (vocab, dim)}
    for i in range(raw_params["n_layers"]):
        p = f"layers.{i}."
        shapes.update(
            {
                p + "attention_norm.weight": (dim,),
                p + "attention.wq.weight": (n_heads * head_dim, dim),
                p + "attention.wk.weight": (n_kv_heads * head_dim, dim),
                p + "attention.wv.weight": (n_kv_heads * head_dim, dim),
                p + "attention.wo.weight": (dim, n_heads * head_dim),
                p + "ffn_norm.weight": (dim,),
                p + "feed_forward.w1.weight": (hidden, dim),
                p + "feed_forward.w2.weight": (dim, hidden),
                p + "feed_forward.w3.weight": (hidden, dim),
            }
        )
    return shapes


def write_small_checkpoint(folder, raw_params: dict, seed: int = 7, embedding_std: float = 1.0, gain_std: float = 0.1):
    """A small random Meta-format checkpoint in ``folder``: ``params.json``, ``consolidated.00.pth`` (bf16), Meta's
    ``tokenizer.model`` (from llama-models); no stand-in marker, so the notebooks read it as a real checkpoint.

    Matrices have standard deviation 1/sqrt(in_features), so every projection keeps its input's scale and the
    attention scores spread over a few units (the softmax is far from uniform and the causal mask matters); RMSNorm
    gains are 1 + ``gain_std`` * N(0, 1); ``tok_embeddings`` is ``embedding_std`` * N(0, 1). Returns ``folder``.
    """
    import json
    import math
    import shutil
    from pathlib import Path

    import torch

    import plumbing

    folder = Path(folder)
    generator = torch.Generator().manual_seed(seed)
    tensors = {}
    for name, shape in meta_shapes(raw_params).items():
        values = torch.randn(shape, generator=generator)
        if len(shape) == 1:
            values = 1 + gain_std * values
        elif name == "tok_embeddings.weight":
            values = embedding_std * values
        else:
            values = values / math.sqrt(shape[1])
        tensors[name] = values.to(torch.bfloat16)
    torch.save(tensors, folder / "consolidated.00.pth")
    (folder / "params.json").write_text(json.dumps(raw_params, indent=2))
    shutil.copyfile(plumbing.default_tokenizer_path(), folder / "tokenizer.model")
    return folder


def to_hugging_face(name: str, tensor, params):
    """Meta's tensor ``name`` as Hugging Face's conversion stores it: (its Hugging Face name, the tensor, ``wq``/``wk``
    rows permuted by :func:`hf_permute_by_index`, a contiguous copy of its own, as safetensors needs)."""
    import plumbing

    if name.endswith("attention.wq.weight"):
        tensor = hf_permute_by_index(tensor, params.n_heads)
    elif name.endswith("attention.wk.weight"):
        tensor = hf_permute_by_index(tensor, params.n_kv_heads)
    return plumbing.hf_layout.meta_name_to_hf(name), tensor.contiguous().clone()
