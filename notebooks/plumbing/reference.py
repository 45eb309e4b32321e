"""Meta's reference code (``llama_models/llama3/model.py``), ready to run on a checkpoint, for the notebooks' checks.

Meta's ``model.py`` imports ``fairscale`` for its model-parallel layers. With one process (model-parallel world
size 1) those layers are plain layers: ``ColumnParallelLinear`` and ``RowParallelLinear`` are ``nn.Linear``
without bias, and ``VocabParallelEmbedding`` is ``nn.Embedding``. :func:`meta_model_code` imports Meta's module
with a small stand-in for fairscale that holds exactly those plain layers; everything else (``RMSNorm``,
``precompute_freqs_cis``, ``apply_rotary_emb``, ``repeat_kv``, ``Attention``, ``FeedForward``,
``TransformerBlock``, ``Transformer``) is Meta's unmodified code.

Modules are built on PyTorch's ``meta`` device (no memory) and then given the checkpoint's tensors with
``load_state_dict(..., assign=True)``: their parameters *are* the memory-mapped tensors, nothing is copied.

Two places where this module adds to Meta's code, both stated where they happen:

- RoPE scaling. Meta's ``apply_scaling`` hard-codes Llama 3.1's constants (factor 8). A checkpoint whose
  :attr:`~plumbing.params.ModelParams.rope_scaling` differs (Llama 3.2 1B and 3B: factor 32, from their
  ``config.json``) gets Meta's same formula with its own constants (:func:`precompute_freqs_cis`).
- :func:`run` records what Meta's submodules return during ``Transformer.forward`` with forward hooks, so a
  notebook can compare an intermediate tensor (``layers.0.feed_forward.w1``'s output is the gate) with Meta's.

Meta's ``llama_models/llama3/generation.py`` (``Llama3.generate``, ``sample_top_p``) and ``chat_format.py``
(``ChatFormat``) are imported unmodified too (:func:`meta_generation_code`): ``generation.py`` imports the
multimodal model, which needs torchvision, only to recognise a vision model; a text-only placeholder stands in
for it while the module is imported. :func:`generate` runs ``Llama3.generate`` around :func:`transformer`, as
``Llama3.build`` would without its process group and default-device changes.

The code is in four modules, one job each, whose public names this module re-exports (``plumbing.reference.run``
and the others are the notebooks' and the grader's interface): ``reference_code`` imports Meta's modules with the
plain layers; ``reference_modules`` builds one module at a time (``rms_norm``, ``attention``, ``feed_forward``,
``transformer_block``, and ``model_args``, ``precompute_freqs_cis``, ``mask``); ``reference_run`` the whole
``transformer`` and ``run``; ``reference_generate`` ``generate``, ``tokenizer``, ``generation_tokenizer`` and ``encode_dialog_prompt``.
"""

from __future__ import annotations

from .reference_code import meta_generation_code, meta_model_code
from .reference_generate import encode_dialog_prompt, generate, generation_tokenizer, tokenizer
from .reference_modules import (
    META_APPLY_SCALING,
    attention,
    feed_forward,
    mask,
    model_args,
    precompute_freqs_cis,
    rms_norm,
    transformer_block,
)
from .reference_run import run, transformer

__all__ = [
    "META_APPLY_SCALING",
    "meta_model_code",
    "meta_generation_code",
    "generate",
    "tokenizer",
    "generation_tokenizer",
    "encode_dialog_prompt",
    "model_args",
    "precompute_freqs_cis",
    "rms_norm",
    "attention",
    "feed_forward",
    "transformer_block",
    "transformer",
    "run",
    "mask",
]
