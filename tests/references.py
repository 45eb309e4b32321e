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
