"""Independent reference implementations for the tests: Meta's llama-models code and Hugging Face transformers.

Meta's ``llama_models/llama3/model.py`` imports ``fairscale`` for its model-parallel layers at
module level. With one process (model-parallel world size 1) those layers are plain layers:
``ColumnParallelLinear`` and ``RowParallelLinear`` are ``nn.Linear`` without bias, and
``VocabParallelEmbedding`` is ``nn.Embedding``. During the import, a small stand-in module with
exactly those plain layers replaces fairscale; Meta's classes and functions themselves
(``RMSNorm``, ``precompute_freqs_cis``, ``apply_rotary_emb``, ``repeat_kv``, ``Attention``,
``FeedForward``, ``TransformerBlock``, ``Transformer``) are Meta's unmodified code.

The ``meta_*`` builders below construct Meta's modules on PyTorch's ``meta`` device (no memory)
and then assign the checkpoint's tensors with ``load_state_dict(..., assign=True)``: the module's
parameters *are* the memory-mapped tensors, so nothing is copied.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


def _plain_fairscale() -> dict:
    """Modules that stand in for fairscale's model-parallel layers at world size 1 (plain layers)."""
    import torch.nn as nn

    class ColumnParallelLinear(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, gather_output=True, init_method=None, **_):
            super().__init__(in_features, out_features, bias=bias)

    class RowParallelLinear(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, input_is_parallel=False, init_method=None, **_):
            super().__init__(in_features, out_features, bias=bias)

    class VocabParallelEmbedding(nn.Embedding):
        def __init__(self, num_embeddings, embedding_dim, init_method=None, **_):
            super().__init__(num_embeddings, embedding_dim)

    names = ("fairscale", "fairscale.nn", "fairscale.nn.model_parallel",
             "fairscale.nn.model_parallel.initialize", "fairscale.nn.model_parallel.layers")
    mods = {name: types.ModuleType(name) for name in names}
    layers, init = mods["fairscale.nn.model_parallel.layers"], mods["fairscale.nn.model_parallel.initialize"]
    layers.ColumnParallelLinear, layers.RowParallelLinear = ColumnParallelLinear, RowParallelLinear
    layers.VocabParallelEmbedding = VocabParallelEmbedding
    init.get_model_parallel_world_size = lambda: 1
    init.get_model_parallel_rank = lambda: 0
    mods["fairscale.nn.model_parallel"].initialize = init
    mods["fairscale.nn.model_parallel"].layers = layers
    mods["fairscale.nn"].model_parallel = mods["fairscale.nn.model_parallel"]
    mods["fairscale"].nn = mods["fairscale.nn"]
    return mods


def meta_llama3_model():
    """Meta's reference ``llama_models.llama3.model`` module (fairscale replaced by plain layers)."""
    name = "llama_models.llama3.model"
    if name in sys.modules:
        return sys.modules[name]
    stubs = _plain_fairscale() if importlib.util.find_spec("fairscale") is None else {}
    sys.modules.update(stubs)
    try:
        return importlib.import_module(name)
    finally:
        for mod in stubs:
            sys.modules.pop(mod, None)


def meta_model_args(params, max_seq_len: int = 64):
    """Meta's ``ModelArgs`` for :class:`plumbing.ModelParams` ``params``, batch size 1.

    ``max_seq_len`` sizes the KV cache of each ``Attention`` (Meta's default, 2048 x batch 32, would
    allocate gigabytes); it must be at least the number of tokens run.
    """
    from llama_models.llama3.args import ModelArgs

    return ModelArgs(dim=params.dim, n_layers=params.n_layers, n_heads=params.n_heads,
                     n_kv_heads=params.n_kv_heads, vocab_size=params.vocab_size, multiple_of=params.multiple_of,
                     ffn_dim_multiplier=params.ffn_dim_multiplier, norm_eps=params.norm_eps,
                     rope_theta=params.rope_theta, use_scaled_rope=params.use_scaled_rope,
                     max_batch_size=1, max_seq_len=max_seq_len)


def _assign(module, state, prefix: str):
    """Give ``module`` (built on the meta device) the checkpoint's tensors under ``prefix``, without copies."""
    import torch

    sub = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
    module.load_state_dict(sub, strict=True, assign=True)
    M = meta_llama3_model()
    for m in module.modules():  # Meta's KV caches are plain attributes, not parameters: make them real
        if isinstance(m, M.Attention):
            m.cache_k = torch.zeros(m.cache_k.shape)
            m.cache_v = torch.zeros(m.cache_v.shape)
    return module.eval()


def meta_attention(state, params, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``Attention`` of layer ``layer``, its ``wq wk wv wo`` assigned from ``state`` (Meta's names)."""
    import torch

    M = meta_llama3_model()
    with torch.device("meta"):
        module = M.Attention(meta_model_args(params, max_seq_len))
    return _assign(module, state, f"layers.{layer}.attention.")


def meta_feed_forward(state, params, layer: int = 0):
    """Meta's ``FeedForward`` of layer ``layer`` (``w1 w2 w3`` assigned from ``state``)."""
    import torch

    M = meta_llama3_model()
    with torch.device("meta"):
        module = M.FeedForward(dim=params.dim, hidden_dim=4 * params.dim, multiple_of=params.multiple_of,
                               ffn_dim_multiplier=params.ffn_dim_multiplier)
    return _assign(module, state, f"layers.{layer}.feed_forward.")


def meta_block(state, params, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``TransformerBlock`` of layer ``layer``, every tensor assigned from ``state``."""
    import torch

    M = meta_llama3_model()
    with torch.device("meta"):
        module = M.TransformerBlock(layer, meta_model_args(params, max_seq_len))
    return _assign(module, state, f"layers.{layer}.")


def meta_transformer(state, params, max_seq_len: int = 64):
    """Meta's whole ``Transformer``, every tensor assigned from ``state``; ``freqs_cis`` computed by Meta's code."""
    import torch

    M = meta_llama3_model()
    args = meta_model_args(params, max_seq_len)
    with torch.device("meta"):
        module = M.Transformer(args)
    _assign(module, state, "")
    module.freqs_cis = M.precompute_freqs_cis(args.dim // args.n_heads, args.max_seq_len * 2,
                                              args.rope_theta, args.use_scaled_rope)
    return module


def meta_freqs_cis(params, seqlen: int, start_pos: int = 0):
    """``freqs_cis`` [seqlen, head_dim/2] complex64 as Meta's ``Transformer`` slices it."""
    M = meta_llama3_model()
    full = M.precompute_freqs_cis(params.head_dim, 2 * max(seqlen + start_pos, 1), params.rope_theta, params.use_scaled_rope)
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
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": params.dim,
        "num_hidden_layers": params.n_layers, "num_attention_heads": params.n_heads,
        "num_key_value_heads": params.n_kv_heads, "vocab_size": params.vocab_size,
        "intermediate_size": params.ffn_hidden_dim, "rms_norm_eps": params.norm_eps,
        "rope_theta": params.rope_theta, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
    }


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
        shapes.update({p + "attention_norm.weight": (dim,),
                       p + "attention.wq.weight": (n_heads * head_dim, dim), p + "attention.wk.weight": (n_kv_heads * head_dim, dim),
                       p + "attention.wv.weight": (n_kv_heads * head_dim, dim), p + "attention.wo.weight": (dim, n_heads * head_dim),
                       p + "ffn_norm.weight": (dim,), p + "feed_forward.w1.weight": (hidden, dim),
                       p + "feed_forward.w2.weight": (dim, hidden), p + "feed_forward.w3.weight": (hidden, dim)})
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
