"""Independent reference implementations for the tests: Meta's llama-models code and Hugging Face transformers.

Meta's ``llama_models/llama3/model.py`` imports ``fairscale`` for its model-parallel layers at
module level. The functions used here (``RMSNorm``, ``precompute_freqs_cis``, ``apply_scaling``,
``apply_rotary_emb``) do not use fairscale, so a stub module stands in for it during the import;
the functions themselves are Meta's unmodified code.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


def meta_llama3_model():
    """Meta's reference ``llama_models.llama3.model`` module (imported with a fairscale stub)."""
    name = "llama_models.llama3.model"
    if name in sys.modules:
        return sys.modules[name]
    stubs = {}
    if importlib.util.find_spec("fairscale") is None:
        for mod in ("fairscale", "fairscale.nn", "fairscale.nn.model_parallel",
                    "fairscale.nn.model_parallel.initialize", "fairscale.nn.model_parallel.layers"):
            stubs[mod] = types.ModuleType(mod)
        layers = stubs["fairscale.nn.model_parallel.layers"]
        for cls in ("ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding"):
            setattr(layers, cls, type(cls, (), {}))
        stubs["fairscale.nn.model_parallel"].initialize = stubs["fairscale.nn.model_parallel.initialize"]
        stubs["fairscale.nn.model_parallel"].layers = layers
        sys.modules.update(stubs)
    try:
        return importlib.import_module(name)
    finally:
        for mod in stubs:
            sys.modules.pop(mod, None)


def meta_tokenizer():
    """Meta's reference ``Tokenizer`` from llama-models (Llama 3.1 special-token names)."""
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
        "num_key_value_heads": params.n_kv_heads_resolved, "vocab_size": params.vocab_size,
        "intermediate_size": params.ffn_hidden_dim, "rms_norm_eps": params.norm_eps,
        "rope_theta": params.rope_theta, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
    }
