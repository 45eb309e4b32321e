"""Meta's ``llama_models`` modules imported as they are, without fairscale or torchvision, for :mod:`plumbing.reference`.

Meta's ``model.py`` imports ``fairscale`` for its model-parallel layers. With one process (model-parallel world
size 1) those layers are plain layers: ``ColumnParallelLinear`` and ``RowParallelLinear`` are ``nn.Linear``
without bias, and ``VocabParallelEmbedding`` is ``nn.Embedding``. :func:`meta_model_code` imports Meta's module
with a small stand-in for fairscale that holds exactly those plain layers; :func:`meta_generation_code` imports
``generation.py`` with a text-only placeholder for the multimodal model (which needs torchvision). Everything
else is Meta's unmodified code.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

from .errors import Llama3Error

__all__ = ["meta_model_code", "meta_generation_code"]


def _plain_fairscale() -> dict:
    """Modules that stand in for fairscale's model-parallel layers at world size 1 (plain layers)."""
    import torch.nn as nn

    class FairscaleInit:
        """fairscale's layers initialise their weight with the init_method they are given (Meta's model.py gives the
        identity, lambda x: x), not with torch.nn's random reset_parameters, whose normal_ on the meta device would
        import torch._dynamo."""

        def reset_parameters(self):
            pass

    class ColumnParallelLinear(FairscaleInit, nn.Linear):
        def __init__(self, in_features, out_features, bias=True, gather_output=True, init_method=nn.init.xavier_normal_, **_):
            super().__init__(in_features, out_features, bias=bias)
            init_method(self.weight)

    class RowParallelLinear(FairscaleInit, nn.Linear):
        def __init__(self, in_features, out_features, bias=True, input_is_parallel=False, init_method=nn.init.xavier_normal_, **_):
            super().__init__(in_features, out_features, bias=bias)
            init_method(self.weight)

    class VocabParallelEmbedding(FairscaleInit, nn.Embedding):
        def __init__(self, num_embeddings, embedding_dim, init_method=nn.init.xavier_normal_, **_):
            super().__init__(num_embeddings, embedding_dim)
            init_method(self.weight)

    names = (
        "fairscale",
        "fairscale.nn",
        "fairscale.nn.model_parallel",
        "fairscale.nn.model_parallel.initialize",
        "fairscale.nn.model_parallel.layers",
    )
    mods: dict[str, Any] = {name: types.ModuleType(name) for name in names}  # stand-in modules, given attributes below
    layers, init = mods["fairscale.nn.model_parallel.layers"], mods["fairscale.nn.model_parallel.initialize"]
    layers.ColumnParallelLinear, layers.RowParallelLinear = ColumnParallelLinear, RowParallelLinear
    layers.VocabParallelEmbedding = VocabParallelEmbedding
    init.get_model_parallel_world_size = lambda: 1
    init.get_model_parallel_rank = lambda: 0
    init.model_parallel_is_initialized = lambda: True  # generation.py imports these two; Llama3.build would call them
    init.initialize_model_parallel = lambda *args, **kwargs: None
    mods["fairscale.nn.model_parallel"].initialize = init
    mods["fairscale.nn.model_parallel"].layers = layers
    mods["fairscale.nn"].model_parallel = mods["fairscale.nn.model_parallel"]
    mods["fairscale"].nn = mods["fairscale.nn"]
    return mods


def meta_model_code():
    """Meta's ``llama_models.llama3.model`` module, fairscale's layers replaced by the plain layers they are.

    Raises:
        Llama3Error: the ``llama-models`` package is not installed.
    """
    name = "llama_models.llama3.model"
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec("llama_models") is None:
        raise Llama3Error(
            "Meta's reference code is missing: install the pinned requirements (`make setup`, or `pip install llama-models==0.3.0`)."
        )
    stubs = _plain_fairscale() if importlib.util.find_spec("fairscale") is None else {}
    sys.modules.update(stubs)
    try:
        return importlib.import_module(name)
    finally:
        for mod in stubs:
            sys.modules.pop(mod, None)


def meta_generation_code():
    """Meta's ``llama_models.llama3.generation`` module (``Llama3``, ``sample_top_p``), text only.

    ``generation.py`` imports ``CrossAttentionTransformer`` from the multimodal model (which needs torchvision) to
    build and recognise vision models; while it is imported, a placeholder class takes its place. Everything used
    for text, ``Llama3.generate``, ``sample_top_p``, ``ChatFormat`` and ``Tokenizer``, is Meta's unmodified code.

    Raises:
        Llama3Error: the ``llama-models`` package is not installed.
    """
    name = "llama_models.llama3.generation"
    if name in sys.modules:
        return sys.modules[name]
    meta_model_code()
    vision = types.ModuleType("llama_models.llama3.multimodal.model")

    class CrossAttentionTransformer:  # never built: the series runs text models only
        def __init__(self, *args, **kwargs):
            raise Llama3Error("Meta's vision models are not part of this series (text only).")

    vision.CrossAttentionTransformer = CrossAttentionTransformer
    stubs = _plain_fairscale() if importlib.util.find_spec("fairscale") is None else {}
    stubs[vision.__name__] = vision
    saved = {mod: sys.modules.get(mod) for mod in stubs}
    sys.modules.update(stubs)
    try:
        return importlib.import_module(name)
    finally:
        for mod, old in saved.items():
            if old is None:
                sys.modules.pop(mod, None)
            else:
                sys.modules[mod] = old
