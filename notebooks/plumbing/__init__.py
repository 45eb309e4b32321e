"""Plumbing shared by the notebooks of "Llama 3, step by step".

This module finds, validates and loads what the notebooks need (``params.json``,
the weights, ``tokenizer.model``), builds the synthetic stand-in checkpoint,
exports result tensors and provides the ``check`` helper. It teaches nothing:
every step of the model is written by hand inside the notebooks.

Environment variables (the series' stable interface):

``LLAMA3_DIR``
    Folder with real weights: Meta's ``original/`` layout (``params.json`` +
    ``consolidated.00.pth`` [+ ``tokenizer.model``]), a Hugging Face download
    root holding such an ``original/`` folder, or a Hugging Face safetensors
    folder (``config.json`` + ``model*.safetensors``). Unset: the stand-in in
    ``data/standin/``.
``LLAMA3_PROMPT``
    Overrides :data:`DEFAULT_PROMPT`.
``LLAMA3_EXPORT_DIR``
    When set, each notebook writes its result tensors there as safetensors.

Command line (used by the Makefile)::

    python notebooks/plumbing.py build-standin   # builds data/standin/ if missing
    python notebooks/plumbing.py check-weights   # validates LLAMA3_DIR (or the stand-in)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import pickle
import sys
import tempfile
import warnings
import zipfile
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
STANDIN_DIR = REPO_ROOT / "data" / "standin"
STANDIN_MARKER = "STANDIN.json"
STANDIN_SEED = 20240418  # Meta-Llama-3-8B's release date; any fixed number would do
DEFAULT_PROMPT = "the answer to the ultimate question of life, the universe, and everything is "

#: sha256 of Meta's Llama 3 ``tokenizer.model`` (the one shipped in ``llama-models``).
TOKENIZER_SHA256 = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"

#: Meta's pre-tokenizer regex for Llama 3 (``llama/tokenizer.py`` in meta-llama/llama3).
PAT_STR = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Meta's limits on what one tiktoken call receives (``llama/tokenizer.py``).
TIKTOKEN_MAX_ENCODE_CHARS = 400_000
MAX_NO_WHITESPACES_CHARS = 25_000

#: Meta-Llama-3-8B's ``params.json``, as published by Meta.
LLAMA3_8B_PARAMS = {
    "dim": 4096,
    "n_layers": 32,
    "n_heads": 32,
    "n_kv_heads": 8,
    "vocab_size": 128256,
    "multiple_of": 1024,
    "ffn_dim_multiplier": 1.3,
    "norm_eps": 1e-05,
    "rope_theta": 500000.0,
}

#: How the stand-in's tensors share storage (printed in its description and written to its marker).
STANDIN_SHARING = ("tok_embeddings has its own values; every other weight matrix is a view at its own offset "
                   "into one shared random pool, so all 291 tensors differ")


def series_notebooks() -> list[Path]:
    """The notebooks of the series, in order: every ``notebooks/NN_*.ipynb`` (the one list of notebooks)."""
    return sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


class Llama3Error(Exception):
    """The project's one exception type: a problem with the user's input or setup.

    Its message says what is wrong and what to do about it.
    """


# --------------------------------------------------------------------------- params.json


@dataclass(frozen=True)
class ModelParams:
    """``params.json`` of a Llama 3 checkpoint, with the values derived from it.

    Field names and meanings follow Meta's ``ModelArgs`` (``llama/model.py``).
    Unknown keys in the file are kept in :attr:`extra` and otherwise ignored.
    """

    dim: int
    n_layers: int
    n_heads: int
    vocab_size: int
    n_kv_heads: int | None = None
    multiple_of: int = 256
    ffn_dim_multiplier: float | None = None
    norm_eps: float = 1e-5
    rope_theta: float = 500000.0
    use_scaled_rope: bool = False
    intermediate_size: int | None = None  # only from a Hugging Face config.json; Meta derives it
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, raw: Mapping, source: str = "params.json") -> "ModelParams":
        """Build from a parsed ``params.json``; raise :class:`Llama3Error` on missing or bad keys."""
        if not isinstance(raw, Mapping):
            raise Llama3Error(f"{source} must hold a JSON object, found {type(raw).__name__}.")
        known = {f.name for f in fields(cls)} - {"extra"}
        missing = [k for k in ("dim", "n_layers", "n_heads", "vocab_size") if k not in raw]
        if missing:
            raise Llama3Error(f"{source} lacks the key(s) {', '.join(missing)}; is it a Llama params.json?")
        kwargs = {k: raw[k] for k in known if k in raw}
        extra = {k: v for k, v in raw.items() if k not in known}
        try:
            params = cls(**kwargs, extra=extra)
        except TypeError as e:  # pragma: no cover - dataclass arguments are all named
            raise Llama3Error(f"{source}: {e}") from None
        params._validate(source)
        return params

    @classmethod
    def from_json(cls, path: Path) -> "ModelParams":
        """Read and validate ``params.json`` at ``path``."""
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise Llama3Error(f"No params.json in {_display(Path(path).parent)}.") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise Llama3Error(f"params.json is not valid JSON ({e}); download it again.") from None
        return cls.from_dict(raw)

    def _validate(self, source: str) -> None:
        for name in ("dim", "n_layers", "n_heads", "vocab_size", "n_kv_heads_resolved", "multiple_of"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise Llama3Error(f"{source}: {name.replace('_resolved', '')} must be a positive integer, found {value!r}.")
        if self.dim % self.n_heads:
            raise Llama3Error(f"{source}: dim {self.dim} is not divisible by n_heads {self.n_heads}.")
        if self.n_heads % self.n_kv_heads_resolved:
            raise Llama3Error(f"{source}: n_heads {self.n_heads} is not divisible by n_kv_heads {self.n_kv_heads}.")
        if self.head_dim % 2:
            raise Llama3Error(f"{source}: head_dim {self.head_dim} must be even for rotary embeddings.")
        for name in ("norm_eps", "rope_theta"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise Llama3Error(f"{source}: {name} must be a positive number, found {value!r}.")

    # Derived values, by Meta's formulas (llama/model.py: Attention and FeedForward).
    @property
    def n_kv_heads_resolved(self) -> int:
        """``n_kv_heads``, or ``n_heads`` when the file leaves it out (Meta's default)."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def head_dim(self) -> int:
        """``dim // n_heads``: 128 for Llama 3 8B."""
        return self.dim // self.n_heads

    @property
    def n_rep(self) -> int:
        """Query heads per key/value head (grouped-query attention): 4 for Llama 3 8B."""
        return self.n_heads // self.n_kv_heads_resolved

    @property
    def ffn_hidden_dim(self) -> int:
        """SwiGLU hidden size, Meta's ``FeedForward.__init__`` formula: 14336 for Llama 3 8B."""
        if self.intermediate_size is not None:
            return self.intermediate_size
        hidden = int(2 * (4 * self.dim) / 3)
        if self.ffn_dim_multiplier is not None:
            hidden = int(self.ffn_dim_multiplier * hidden)
        return self.multiple_of * ((hidden + self.multiple_of - 1) // self.multiple_of)

    @property
    def rope_scaling(self) -> dict:
        """The constants of Llama 3.1's RoPE frequency scaling, used when :attr:`use_scaled_rope` is true.

        Meta's folders: Meta's ``apply_scaling`` (``llama_models/llama3/model.py``) hard-codes factor 8,
        low_freq_factor 1, high_freq_factor 4 and an original context of 8192 tokens. Hugging Face folders:
        the ``rope_scaling`` of ``config.json``, as transformers reads it (Llama 3.2 1B/3B use factor 32).
        ``source`` says which, for printing.
        """
        hf = self.extra.get("rope_scaling") or {}
        if hf.get("rope_type", hf.get("type")) == "llama3":
            return {"factor": float(hf.get("factor", 8.0)), "low_freq_factor": float(hf.get("low_freq_factor", 1.0)),
                    "high_freq_factor": float(hf.get("high_freq_factor", 4.0)),
                    "original_max_position_embeddings": int(hf.get("original_max_position_embeddings", 8192)),
                    "source": "config.json's rope_scaling"}
        return {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192,
                "source": "Meta's apply_scaling (hard-coded)"}

    @property
    def context_length(self) -> int:
        """Trained context in tokens: 8192 for Llama 3, 131072 for Llama 3.1/3.2 (``use_scaled_rope``).

        From Meta's model cards; ``params.json`` itself does not store it.
        """
        return 131072 if self.use_scaled_rope else 8192

    def expected_shapes(self) -> dict[str, tuple[int, ...]]:
        """Meta key name -> shape, for every tensor of the full model."""
        d, hd, hidden = self.dim, self.head_dim, self.ffn_hidden_dim
        shapes = {"tok_embeddings.weight": (self.vocab_size, d), "norm.weight": (d,), "output.weight": (self.vocab_size, d)}
        for i in range(self.n_layers):
            p = f"layers.{i}."
            shapes.update({
                p + "attention_norm.weight": (d,),
                p + "attention.wq.weight": (self.n_heads * hd, d),
                p + "attention.wk.weight": (self.n_kv_heads_resolved * hd, d),
                p + "attention.wv.weight": (self.n_kv_heads_resolved * hd, d),
                p + "attention.wo.weight": (d, self.n_heads * hd),
                p + "ffn_norm.weight": (d,),
                p + "feed_forward.w1.weight": (hidden, d),
                p + "feed_forward.w2.weight": (d, hidden),
                p + "feed_forward.w3.weight": (hidden, d),
            })
        return shapes

    def parameter_count(self) -> int:
        """Number of parameters of the full model (8,030,261,248 for Llama 3 8B)."""
        return sum(math.prod(s) for s in self.expected_shapes().values())


# --------------------------------------------------------------------------- finding weights


def _display(path: Path) -> str:
    """A path for messages: relative to the repository when inside it, else as given."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def resolve_dir(value: str | os.PathLike | None = None) -> Path | None:
    """Resolve ``LLAMA3_DIR`` (or ``value``); ``None`` means the stand-in.

    A relative path is tried against the current directory, then the repository root
    (notebooks run with ``notebooks/`` as their current directory).

    Raises:
        Llama3Error: the folder does not exist or is not a folder.
    """
    if value is None:
        value = os.environ.get("LLAMA3_DIR", "")
    value = str(value).strip()
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute() and not path.exists() and (REPO_ROOT / path).exists():
        path = REPO_ROOT / path
    if not path.is_absolute() and not path.exists() and (REPO_ROOT / path).resolve() == STANDIN_DIR.resolve():
        path = REPO_ROOT / path
    if path.resolve() == STANDIN_DIR.resolve():
        return ensure_standin(STANDIN_DIR)  # LLAMA3_DIR=data/standin behaves like no LLAMA3_DIR, even before the first build
    if not path.exists():
        raise Llama3Error(
            f"LLAMA3_DIR={value!r} does not exist. Point it at the folder that holds params.json and "
            "consolidated.00.pth (or a Hugging Face download), or unset it to use the synthetic stand-in."
        )
    if not path.is_dir():
        raise Llama3Error(f"LLAMA3_DIR={value!r} is a file; it must be the folder that holds it.")
    return path


def is_standin(folder: Path | None) -> bool:
    """True for the synthetic stand-in (``None`` or a folder with the stand-in marker)."""
    return folder is None or (Path(folder) / STANDIN_MARKER).is_file()


@dataclass(frozen=True)
class WeightsSource:
    """Where the weights are and in which format.

    ``format`` is ``"meta"`` (``consolidated.00.pth``) or ``"hf"`` (safetensors).
    """

    folder: Path
    format: str
    files: tuple[Path, ...]
    config_path: Path
    tokenizer_path: Path | None
    standin: bool

    @property
    def description(self) -> str:
        """Which weights, for printing (never an absolute path)."""
        if self.standin:
            return ("synthetic stand-in (random bf16 values under all 291 of Meta-Llama-3-8B's tensor names and shapes; "
                    "the matrices are views into one shared random pool; not Meta's weights)")
        if self.format == "meta":
            return "real checkpoint, Meta format (params.json + consolidated.00.pth)"
        return "real checkpoint, Hugging Face safetensors format (config.json + model*.safetensors, wq/wk un-permuted to Meta's layout)"


def find_weights(folder: str | os.PathLike | None = None) -> WeightsSource:
    """Locate weights in ``folder`` (default: ``LLAMA3_DIR``, else the stand-in).

    Accepts Meta's folder, a Hugging Face root with ``original/``, or a Hugging Face
    safetensors folder. The stand-in is built if it is missing.

    Raises:
        Llama3Error: nothing usable in the folder (the message lists what was looked for).
    """
    path = resolve_dir(folder)
    if path is None:
        path = ensure_standin(STANDIN_DIR)
    candidates = [path, path / "original"]
    for cand in candidates:
        pth = sorted(cand.glob("consolidated.*.pth"))
        if (cand / "params.json").is_file() or pth:
            if not (cand / "params.json").is_file():
                raise Llama3Error(f"{_display(cand)} has {pth[0].name} but no params.json; copy params.json from the same download.")
            if not pth:
                raise Llama3Error(
                    f"{_display(cand)} has params.json but no consolidated.00.pth checkpoint; "
                    "the download is incomplete (Meta's 8B folder holds params.json, consolidated.00.pth and tokenizer.model)."
                )
            if len(pth) > 1:
                raise Llama3Error(
                    f"{_display(cand)} holds {len(pth)} consolidated.*.pth shards (a model-parallel checkpoint); "
                    "this series reads the single-file 8B checkpoint."
                )
            tok = cand / "tokenizer.model"
            return WeightsSource(cand, "meta", (pth[0],), cand / "params.json", tok if tok.is_file() else None, is_standin(cand))
    st = sorted(path.glob("*.safetensors"))
    if (path / "config.json").is_file() or st:
        if not (path / "config.json").is_file():
            raise Llama3Error(f"{_display(path)} has safetensors files but no config.json; the Hugging Face download is incomplete.")
        if not st:
            raise Llama3Error(f"{_display(path)} has config.json but no model*.safetensors; the Hugging Face download is incomplete.")
        tok = path / "original" / "tokenizer.model"
        return WeightsSource(path, "hf", tuple(st), path / "config.json", tok if tok.is_file() else None, False)
    raise Llama3Error(
        f"{_display(path)} has no params.json (Meta format), no original/ folder and no config.json (Hugging Face format). "
        "Point LLAMA3_DIR at the folder that holds params.json and consolidated.00.pth."
    )


# --------------------------------------------------------------------------- Hugging Face names and layout

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


def params_from_hf_config(raw: Mapping) -> ModelParams:
    """Map a Hugging Face Llama ``config.json`` to :class:`ModelParams` (Meta's names).

    Hugging Face stores the FFN hidden size itself (``intermediate_size``) instead of Meta's
    ``multiple_of`` and ``ffn_dim_multiplier``; it is kept as :attr:`ModelParams.intermediate_size`.
    """
    try:
        rope = raw.get("rope_scaling") or raw.get("rope_parameters") or {}
        theta = raw.get("rope_theta", rope.get("rope_theta", 500000.0))
        meta = {
            "dim": raw["hidden_size"],
            "n_layers": raw["num_hidden_layers"],
            "n_heads": raw["num_attention_heads"],
            "n_kv_heads": raw.get("num_key_value_heads", raw["num_attention_heads"]),
            "vocab_size": raw["vocab_size"],
            "norm_eps": raw.get("rms_norm_eps", 1e-5),
            "rope_theta": float(theta),
            "use_scaled_rope": rope.get("rope_type", rope.get("type")) == "llama3",
        }
        if rope:
            meta["rope_scaling"] = dict(rope)  # kept in ModelParams.extra (e.g. the factor, 8 or 32)
        if raw.get("intermediate_size") is not None:
            meta["intermediate_size"] = int(raw["intermediate_size"])
    except (KeyError, AttributeError, TypeError) as e:
        raise Llama3Error(f"config.json is not a Llama config (missing or bad {e}).") from None
    params = ModelParams.from_dict(meta, source="config.json")
    return params


# --------------------------------------------------------------------------- loading


class Checkpoint:
    """Read-only view of a checkpoint in Meta's names and layout, memory-mapped.

    Tensors are read lazily: only the ones asked for through :meth:`get` are touched,
    so a 16 GB checkpoint never has to fit in RAM. Shapes are checked against
    ``params.json`` when the checkpoint is opened.

    Attributes:
        source: the :class:`WeightsSource` that was opened.
        params: the :class:`ModelParams` read from ``params.json`` (or ``config.json``).
    """

    def __init__(self, source: WeightsSource):
        self.source = source
        if source.format == "meta":
            self.params = ModelParams.from_json(source.config_path)
            self._state = _torch_load_mmap(source.files[0])
            self._hf = None
            self._shapes = {k: tuple(v.shape) for k, v in self._state.items() if hasattr(v, "shape")}
            self._dtypes = {k: v.dtype for k, v in self._state.items() if hasattr(v, "dtype")}
        else:
            try:
                raw = json.loads(source.config_path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise Llama3Error(f"config.json is not valid JSON ({e}); download it again.") from None
            self.params = params_from_hf_config(raw)
            self._state = None
            self._hf = _open_safetensors(source.files)
            self._shapes, self._dtypes = {}, {}
            for hf_name, (handle, shape, dtype) in self._hf.items():
                meta = hf_name_to_meta(hf_name)
                if meta is not None:
                    self._shapes[meta], self._dtypes[meta] = shape, dtype
        self._check_shapes()

    def _check_shapes(self) -> None:
        expected = self.params.expected_shapes()
        for name, shape in self._shapes.items():
            if name in expected and tuple(shape) != expected[name]:
                raise Llama3Error(
                    f"params.json disagrees with the checkpoint: {name} should have shape "
                    f"{list(expected[name])} by params.json, but the checkpoint holds {list(shape)}. "
                    "params.json and the weights come from different models; download them together."
                )
        if "tok_embeddings.weight" not in self._shapes:
            raise Llama3Error("The checkpoint has no tok_embeddings.weight; it is not a Llama checkpoint.")

    @property
    def description(self) -> str:
        """Which weights, for printing."""
        return self.source.description

    def keys(self) -> list[str]:
        """Meta names of the tensors present, in checkpoint order."""
        return list(self._shapes)

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of tensor ``name`` without reading it."""
        return tuple(self._shapes[self._known(name)])

    def dtype(self, name: str):
        """torch dtype of tensor ``name`` without reading it."""
        return self._dtypes[self._known(name)]

    def _known(self, name: str) -> str:
        if name not in self._shapes:
            raise Llama3Error(f"The checkpoint has no tensor {name!r}; present: {', '.join(list(self._shapes)[:8])}, ...")
        return name

    def get(self, name: str):
        """Tensor ``name`` (Meta's name, e.g. ``"layers.0.attention.wq.weight"``) in Meta's layout.

        Meta format: a memory-mapped view (no copy). Hugging Face format: read from the
        safetensors file; ``wq``/``wk`` rows are un-permuted to Meta's interleaved layout.

        Raises:
            Llama3Error: no such tensor.
        """
        self._known(name)
        if self._state is not None:
            return self._state[name]
        hf_name = next(h for h in self._hf if hf_name_to_meta(h) == name)
        handle = self._hf[hf_name][0]
        tensor = handle.get_tensor(hf_name)
        if name.endswith("attention.wq.weight"):
            tensor = hf_unpermute(tensor, self.params.n_heads)
        elif name.endswith("attention.wk.weight"):
            tensor = hf_unpermute(tensor, self.params.n_kv_heads_resolved)
        return tensor


def _torch_load_mmap(path: Path) -> dict:
    """``torch.load(path, mmap=True, weights_only=True)`` with every failure turned into :class:`Llama3Error`."""
    import torch

    shown = _display(path)
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError as e:
        raise Llama3Error(f"Cannot read {shown}: {e.strerror}.") from None
    if head.lstrip()[:1] == b"<" or b"<html" in head.lower() or b"<!doctype" in head.lower():
        raise Llama3Error(
            f"{shown} is an HTML page, not a checkpoint: the download failed (an expired or wrong link). "
            "Download consolidated.00.pth again."
        )
    if not head.startswith(b"PK"):
        raise Llama3Error(f"{shown} is not a PyTorch checkpoint (no zip header); download it again.")
    if not zipfile.is_zipfile(path):
        raise Llama3Error(
            f"{shown} is truncated or corrupted (its zip directory is missing): the download stopped early. "
            "Download it again and compare its size and checksum with Meta's."
        )
    try:
        state = torch.load(path, map_location="cpu", mmap=True, weights_only=True)
    except pickle.UnpicklingError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Llama3Error(
            f"Refused to load {shown}: its pickle asks to run code or build objects that are not tensors "
            f"({first}). A real Llama checkpoint holds only tensors; do not load this file with weights_only=False."
        ) from None
    except (RuntimeError, OSError, ValueError) as e:
        text = str(e)
        if "mmap" in text.lower() or "memory map" in text.lower() or isinstance(e, OSError) and getattr(e, "errno", None) in (12, 19):
            reason = text.splitlines()[0].rsplit(": ", 1)[-1] if text else type(e).__name__
            raise Llama3Error(
                f"The system refused to memory-map {shown} ({reason}). "
                "Copy the checkpoint to a local disk (network and some FUSE file systems cannot be memory-mapped) "
                "and check that virtual memory is not capped (`ulimit -v` should print 'unlimited')."
            ) from None
        raise Llama3Error(
            f"{shown} could not be read as a checkpoint ({text.splitlines()[0] if text else type(e).__name__}); "
            "it is probably truncated or corrupted: download it again."
        ) from None
    if not isinstance(state, dict):
        raise Llama3Error(f"{shown} holds a {type(state).__name__}, not a dictionary of tensors.")
    return state


def _open_safetensors(files: Iterable[Path]) -> dict:
    """Hugging Face name -> (safe_open handle, shape, torch dtype) over every shard (lazy)."""
    from safetensors import SafetensorError, safe_open

    import torch

    dtypes = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}
    found = {}
    for path in files:
        try:
            handle = safe_open(str(path), framework="pt", device="cpu")
            for name in handle.keys():
                sl = handle.get_slice(name)
                found[name] = (handle, tuple(sl.get_shape()), dtypes.get(sl.get_dtype(), sl.get_dtype()))
        except (SafetensorError, OSError) as e:
            raise Llama3Error(f"{_display(path)} is not a readable safetensors file ({e}); download it again.") from None
    return found


def open_checkpoint(folder: str | os.PathLike | None = None) -> Checkpoint:
    """Find and open the weights (``LLAMA3_DIR`` or the stand-in). See :func:`find_weights`.

    Raises:
        Llama3Error: any problem with the folder, params.json or the checkpoint.
    """
    return Checkpoint(find_weights(folder))


# --------------------------------------------------------------------------- tokenizer


def llama3_special_tokens() -> list[str]:
    """Meta-Llama-3-8B's 256 special tokens, ids 128000-128255 in order.

    From ``llama/tokenizer.py`` in meta-llama/llama3 (April 2024). The Llama 3.1 tokenizer in
    ``llama-models`` keeps the ids but names 249 of the 256 differently (128004 is
    ``<|finetune_right_pad_id|>`` there, and the reserved tokens are renumbered).
    """
    names = [
        "<|begin_of_text|>", "<|end_of_text|>",
        "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
        "<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
        "<|start_header_id|>", "<|end_header_id|>",
        "<|reserved_special_token_4|>", "<|eot_id|>",
    ]
    return names + [f"<|reserved_special_token_{i}|>" for i in range(5, 256 - 5)]


def default_tokenizer_path() -> Path:
    """``tokenizer.model`` shipped in the ``llama-models`` package (Meta's Llama 3 file)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("llama_models")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise Llama3Error("Package llama-models is not installed; run `make run` (or pip install -r requirements.txt).")
    return Path(list(spec.submodule_search_locations)[0]) / "llama3" / "tokenizer.model"


def read_bpe_ranks(path: str | os.PathLike) -> dict[bytes, int]:
    """Parse a tiktoken BPE file (one ``base64-token rank`` pair a line) into ``{bytes: rank}``.

    Checks the sha256 against :data:`TOKENIZER_SHA256` (a mismatch warns) and the format
    (a SentencePiece model or a corrupted file raises).

    Raises:
        Llama3Error: missing file, SentencePiece model, or lines that are not ``base64 rank``.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise Llama3Error(f"No tokenizer.model at {_display(path)}.") from None
    if hashlib.sha256(data).hexdigest() != TOKENIZER_SHA256:
        bad_format = _bpe_format_problem(data)
        if bad_format:
            raise Llama3Error(f"{_display(path)} is not Llama 3's tokenizer: {bad_format}")
        warnings.warn(
            f"{_display(path)} is a tiktoken BPE file but not Meta's Llama 3 tokenizer.model "
            "(sha256 differs); token ids may not match Meta-Llama-3-8B.",
            stacklevel=2,
        )
    ranks = {}
    for line in data.decode("ascii").splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _bpe_format_problem(data: bytes) -> str | None:
    """Why ``data`` is not a tiktoken BPE file, or ``None`` if it is one."""
    if data[:1] == b"\x0a" and b"\x00" in data[:4096] or b"\xe2\x96\x81" in data[:65536]:
        return (
            "it is a SentencePiece model (the Llama 1/2 tokenizer format, binary protobuf), not a tiktoken "
            "BPE file. Use the tokenizer.model from Meta's Llama 3 download or from the llama-models package."
        )
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return "it is a binary file, not a tiktoken BPE file (lines of 'base64-token rank'); download it again."
    ranks, tokens = [], set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            tokens.add(base64.b64decode(parts[0], validate=True))
            ranks.append(int(parts[1]))
        except (ValueError, binascii.Error):
            return f"line {n} is not 'base64-token rank' ({line[:40]!r}); the file is corrupted: download it again."
    if not ranks or sorted(ranks) != list(range(len(ranks))) or len(tokens) != len(ranks):
        return ("its ranks are not 0..n-1 with one token each (a repeated or missing line); "
                "the file is corrupted or truncated: download it again.")
    return None


def tokenizer_path(source: WeightsSource | None = None) -> Path:
    """The weights folder's ``tokenizer.model`` when it has one, else the one from ``llama-models``."""
    if source is not None and source.tokenizer_path is not None:
        return source.tokenizer_path
    return default_tokenizer_path()


def load_tokenizer(path: str | os.PathLike | None = None):
    """A ``tiktoken.Encoding`` for Llama 3 with Meta-Llama-3-8B's special tokens.

    Args:
        path: a ``tokenizer.model``; default: :func:`tokenizer_path` of ``LLAMA3_DIR``.

    Raises:
        Llama3Error: see :func:`read_bpe_ranks`.
    """
    import tiktoken

    if path is None:
        path = tokenizer_path(find_weights())
    ranks = read_bpe_ranks(path)
    specials = {name: len(ranks) + i for i, name in enumerate(llama3_special_tokens())}
    try:
        return tiktoken.Encoding(name=Path(path).name, pat_str=PAT_STR, mergeable_ranks=ranks, special_tokens=specials)
    except BaseException as e:  # tiktoken's Rust core reports bad tables as a panic (not an Exception)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise Llama3Error(f"{_display(Path(path))} could not be loaded by tiktoken ({str(e).splitlines()[0][:120]}); "
                          "the file is corrupted: download it again.") from None


def _split_long_runs(s: str, limit: int) -> Iterator[str]:
    """Meta's ``_split_whitespaces_or_nonwhitespaces``: no piece has more than ``limit`` same-kind characters in a row."""
    run, is_space, start = 0, s[:1].isspace(), 0
    for i, ch in enumerate(s):
        if ch.isspace() != is_space:
            run, is_space = 1, ch.isspace()
        else:
            run += 1
            if run > limit:
                yield s[start:i]
                start, run = i, 1
    yield s[start:]


def encode_prompt(enc, text: str, bos: bool = True) -> list[int]:
    """Token ids of ``text`` as Meta's ``Tokenizer.encode(text, bos=True, eos=False)`` gives them.

    Special-token text inside ``text`` is encoded as plain text (``disallowed_special=()``);
    long inputs are cut as Meta cuts them before calling tiktoken. Taught in notebook 01.
    """
    if not isinstance(text, str):
        raise Llama3Error(f"The prompt must be a str, found {type(text).__name__}.")
    ids = [enc.encode_single_token("<|begin_of_text|>")] if bos else []
    for i in range(0, len(text), TIKTOKEN_MAX_ENCODE_CHARS):
        for piece in _split_long_runs(text[i : i + TIKTOKEN_MAX_ENCODE_CHARS], MAX_NO_WHITESPACES_CHARS):
            ids.extend(enc.encode(piece, allowed_special=set(), disallowed_special=()))
    return ids


def prompt() -> str:
    """The prompt: ``LLAMA3_PROMPT`` when set (even to the empty string), else :data:`DEFAULT_PROMPT`."""
    return os.environ.get("LLAMA3_PROMPT", DEFAULT_PROMPT)


def prompt_tokens(enc=None) -> list[int]:
    """Token ids (with ``<|begin_of_text|>``) of :func:`prompt`, as notebook 01 computes them."""
    return encode_prompt(enc if enc is not None else load_tokenizer(), prompt())


# --------------------------------------------------------------------------- setup in one call


def tokenize_out_of_process(path: Path, text: str) -> tuple[list[int], list[str]]:
    """Token ids of ``text`` (with ``<|begin_of_text|>``) and each token's text, computed in a child process.

    Building the tokenizer costs about 50 MB of memory (128,000 ranks held both as a Python dict
    and in tiktoken's own tables); a child process keeps that out of the notebook kernel, which
    needs only the ids. Same result as :func:`encode_prompt` (checked by the tests).

    Raises:
        Llama3Error: the tokenizer file is unusable (the child's message is passed on).
    """
    import subprocess

    request = json.dumps({"path": str(path), "text": text.encode("utf-8", "surrogatepass").decode("latin-1")})
    out = subprocess.run([sys.executable, "-m", "plumbing", "tokenize"], input=request, cwd=Path(__file__).resolve().parent.parent,
                         capture_output=True, text=True, encoding="utf-8")
    if out.returncode != 0:
        message = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "the tokenizer process failed"
        raise Llama3Error(message.removeprefix("error: "))
    for line in out.stderr.splitlines():
        if line.startswith("warning: "):
            warnings.warn(line.removeprefix("warning: "), stacklevel=3)
    result = json.loads(out.stdout)
    return result["ids"], result["pieces"]


def _tokenize_command() -> None:
    """The child side of :func:`tokenize_out_of_process`: JSON request on stdin, JSON answer on stdout."""
    request = json.loads(sys.stdin.read())
    text = request["text"].encode("latin-1").decode("utf-8", "surrogatepass")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc = load_tokenizer(request["path"])
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    ids = encode_prompt(enc, text)
    pieces = [enc.decode_single_token_bytes(t).decode("utf-8", "replace") for t in ids]
    print(json.dumps({"ids": ids, "pieces": pieces}))


@dataclass
class Setup:
    """What a notebook's setup cell needs: weights, params, prompt, token ids and their texts.

    ``pieces[i]`` is the text of token ``tokens[i]`` (bytes decoded as UTF-8; a token that holds
    part of a character shows as U+FFFD). ``tokenizer`` (a ``tiktoken.Encoding``) is built on
    first use only.
    """

    checkpoint: Checkpoint
    params: ModelParams
    prompt: str
    tokens: list[int]
    pieces: list[str]
    _tokenizer: object = field(default=None, repr=False)

    @property
    def tokenizer(self):
        """Llama 3's ``tiktoken.Encoding`` (see :func:`load_tokenizer`), built on first use (~50 MB)."""
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(tokenizer_path(self.checkpoint.source))
        return self._tokenizer

    def report(self, keys: Iterable[str] = ()) -> str:
        """Lines to print at the top of a notebook: weights in use, prompt, config values."""
        n = len(self.tokens)
        shown = repr(self.prompt) if len(self.prompt) <= 200 else f"{self.prompt[:200]!r}... ({len(self.prompt):,} characters)"
        lines = [f"weights: {self.checkpoint.description}",
                 f"prompt: {shown} ({n} token{'s' if n != 1 else ''} with <|begin_of_text|>)"]
        if self.prompt != DEFAULT_PROMPT:
            lines.append("note: LLAMA3_PROMPT is set; the text describes the default prompt (17 tokens), the outputs are for yours")
        for k in keys:
            lines.append(f"{k.removesuffix('_resolved')}: {getattr(self.params, k)!r}")
        return "\n".join(lines)


def setup() -> Setup:
    """Open the weights, read params and tokenize :func:`prompt` (see :func:`tokenize_out_of_process`).

    Raises:
        Llama3Error: any setup problem, with what to do about it.
    """
    ckpt = open_checkpoint()
    text = prompt()
    tokens, pieces = tokenize_out_of_process(tokenizer_path(ckpt.source), text)
    return Setup(ckpt, ckpt.params, text, tokens, pieces)


# --------------------------------------------------------------------------- checks and exports


def check(name: str, ours, reference, *, atol: float = 0.0, rtol: float = 0.0, why: str = "",
          show_diff: bool = True) -> None:
    """Compare ``ours`` with an independent ``reference``; print the verdict; raise if it fails.

    With ``atol == rtol == 0`` the check is bitwise (same shape, dtype and bits).
    Otherwise it is ``torch.allclose(ours, reference, rtol, atol)`` computed in float64, and ``why``
    must say why that tolerance is right. ``show_diff=False`` leaves the maximum difference out of the
    printed line (use it when the difference depends on the CPU's kernels, so outputs stay reproducible).

    Returns nothing, so that a check as the last line of a cell prints only its verdict.

    Raises:
        AssertionError: shapes differ, or the values are not equal / not within tolerance.
    """
    import torch

    ours_t, ref_t = torch.as_tensor(ours), torch.as_tensor(reference)
    if ours_t.shape != ref_t.shape:
        raise AssertionError(f"{name}: shapes differ: {list(ours_t.shape)} vs {list(ref_t.shape)}")
    bitwise = atol == 0 and rtol == 0
    if bitwise and ours_t.dtype == ref_t.dtype and torch.equal(ours_t, ref_t):
        print(f"{name}: bitwise equal")  # decided without float64 copies of large tensors
        return None
    a, b = ours_t.detach(), ref_t.detach()
    if a.is_complex() or b.is_complex():
        a, b = torch.view_as_real(a.to(torch.complex128)), torch.view_as_real(b.to(torch.complex128))
    else:
        a, b = a.to(torch.float64), b.to(torch.float64)
    diff = (a - b).abs().max().item() if a.numel() else 0.0
    if bitwise:
        if ours_t.dtype != ref_t.dtype:
            raise AssertionError(f"{name}: dtypes differ: {ours_t.dtype} vs {ref_t.dtype}")
        raise AssertionError(f"{name}: not bitwise equal (max abs diff {diff:.3g})")
    if not why:
        raise ValueError("check(): a tolerance needs a reason (why=...)")
    if not torch.allclose(a, b, rtol=rtol, atol=atol):
        raise AssertionError(f"{name}: max abs diff {diff:.3g} exceeds the tolerance (atol {atol:g}, rtol {rtol:g})")
    tol = f"atol {atol:g}" + (f", rtol {rtol:g}" if rtol else "")
    shown = f"max abs diff {diff:.3g}, " if show_diff else ""
    print(f"{name}: allclose ({shown}tolerance {tol}) because {why}")
    return None


def export(filename: str, tensors: Mapping, metadata: Mapping[str, str] | None = None) -> Path | None:
    """Write ``tensors`` to ``$LLAMA3_EXPORT_DIR/filename`` (safetensors) when that variable is set.

    The file is written to a temporary name and renamed, so an interrupted export leaves
    no partial file. Tensors are stored contiguous, with their dtypes.

    Returns:
        The path written, or ``None`` when ``LLAMA3_EXPORT_DIR`` is unset.

    Raises:
        Llama3Error: the export folder cannot be created or written.
    """
    folder = os.environ.get("LLAMA3_EXPORT_DIR", "").strip()
    if not folder:
        return None
    from safetensors.torch import save_file

    out = Path(folder).expanduser()
    if out.exists() and not out.is_dir():
        raise Llama3Error(f"LLAMA3_EXPORT_DIR={folder!r} is a file, not a folder; point it at a folder (it is created if missing).")
    try:
        out.mkdir(parents=True, exist_ok=True)
        # safetensors metadata is UTF-8: a prompt with lone surrogates is stored with escapes.
        text = prompt().encode("utf-8", "backslashreplace").decode("utf-8")
        meta = {"prompt": text, "weights": find_weights().description, **(metadata or {})}
        data = {k: v.detach().contiguous() for k, v in tensors.items()}
        with tempfile.NamedTemporaryFile(dir=out, prefix=f".{filename}.", suffix=".tmp", delete=False) as tmp:
            tmp_path = Path(tmp.name)
        try:
            save_file(data, str(tmp_path), metadata={k: str(v) for k, v in meta.items()})
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_path, 0o666 & ~umask)  # like any file the user creates (temporary files start private)
            os.replace(tmp_path, out / filename)
        finally:
            tmp_path.unlink(missing_ok=True)
    except OSError as e:
        raise Llama3Error(f"Cannot write the export to LLAMA3_EXPORT_DIR={folder!r}: {e.strerror}.") from None
    return out / filename


# --------------------------------------------------------------------------- the stand-in checkpoint


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, fsync it, then rename it to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _torch_saver(obj) -> Callable[[Path], None]:
    """A writer for :func:`_atomic_write` that ``torch.save``s ``obj``.

    It saves through a file object, so the zip's inner folder is named "archive" rather than after
    the temporary file: the same tensors give the same bytes.
    """
    import torch

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            torch.save(obj, f)

    return write


def standin_pool_layout(params: ModelParams) -> tuple[int, dict[str, int]]:
    """Where each weight matrix of the stand-in sits in its one random pool.

    Returns ``(pool_elements, {name: element offset})`` for every matrix of the model except
    ``tok_embeddings.weight`` (which has a storage of its own): ``output.weight`` at offset 0 and
    the seven matrices of each layer (``wq wk wv wo w1 w2 w3``, layer by layer) at multiples of an
    odd step. Two matrices therefore never start at the same element, and since the step is odd
    no row of one is a row of another: every tensor holds different numbers, while the pool is
    only as large as ``output.weight`` (1.05 GB in bf16 for Llama 3 8B instead of 15 GB).
    """
    shapes = params.expected_shapes()
    in_layers = [k for k in shapes if k.startswith("layers.") and len(shapes[k]) == 2]
    biggest = max(math.prod(shapes[k]) for k in in_layers)
    size = max(math.prod(shapes["output.weight"]), biggest + len(in_layers))
    step = max(1, (size - biggest) // len(in_layers))
    step -= 1 - step % 2  # odd
    offsets = {"output.weight": 0}
    offsets.update({k: (i + 1) * step for i, k in enumerate(in_layers)})
    return size, offsets


def standin_tensors(params: ModelParams | None = None, seed: int = STANDIN_SEED) -> dict:
    """The stand-in's tensors: every name and shape of the full model, bf16, from a fixed seed.

    Values come from numpy's PCG64 generator (the same on every CPU) and are rounded to bf16 by
    torch; they are random, not Meta's weights. ``tok_embeddings.weight`` has its own storage, with
    a per-token scale so that token norms vary; the RMSNorm gains (``attention_norm``, ``ffn_norm``,
    ``norm``) are small vectors of their own; every other matrix is a view into one random pool
    (see :func:`standin_pool_layout`), so the file stays near 2.1 GB while all 291 tensors differ.
    ``torch.save`` stores a shared storage once.
    """
    import numpy as np
    import torch

    p = params or ModelParams.from_dict(LLAMA3_8B_PARAMS)
    rng = np.random.Generator(np.random.PCG64(seed))
    shapes = p.expected_shapes()

    def normal(shape, std, row_scale=None, chunk_rows=8192):
        """bf16 tensor of N(0, std^2) values (times a per-row scale), generated in row chunks."""
        out = torch.empty(shape, dtype=torch.bfloat16)
        rows = shape[0]
        cols = math.prod(shape[1:])
        for start in range(0, rows, chunk_rows):
            n = min(chunk_rows, rows - start)
            x = rng.standard_normal((n, cols), dtype=np.float32)
            x *= np.float32(std) if row_scale is None else np.float32(std) * row_scale[start : start + n]
            out[start : start + n] = torch.from_numpy(x).reshape((n, *shape[1:])).to(torch.bfloat16)
        return out

    def gain():
        """An RMSNorm gain: positive values around 0.1, as trained gains of early layers are."""
        g = np.abs(rng.normal(0.0, 0.1, size=p.dim)).astype(np.float32) + np.float32(0.02)
        return torch.from_numpy(g).to(torch.bfloat16)

    row_scale = np.exp(rng.normal(0.0, 0.35, size=(p.vocab_size, 1))).astype(np.float32)
    out = {"tok_embeddings.weight": normal(shapes["tok_embeddings.weight"], 0.01, row_scale)}
    size, offsets = standin_pool_layout(p)
    for i in range(p.n_layers):
        out[f"layers.{i}.attention_norm.weight"] = gain()
        out[f"layers.{i}.ffn_norm.weight"] = gain()
    out["norm.weight"] = gain()
    pool = normal((size // 4096 + 1, 4096) if size > 4096 else (size,), 1.0 / math.sqrt(p.dim)).reshape(-1)
    for name, offset in offsets.items():
        out[name] = pool[offset : offset + math.prod(shapes[name])].view(shapes[name])
    return {name: out[name] for name in shapes}  # Meta's order


def build_standin(target: Path = STANDIN_DIR, seed: int = STANDIN_SEED, progress: bool = True) -> Path:
    """Write the stand-in checkpoint to ``target``, laid out like Meta's ``original/`` folder.

    Files: ``params.json`` (Meta-Llama-3-8B's real values), ``consolidated.00.pth``
    (``torch.save`` of the tensors of :func:`standin_tensors`), ``tokenizer.model`` (Meta's,
    copied from ``llama-models``) and the marker ``STANDIN.json``. Every file is written
    atomically; the marker is written last, so an interrupted build is rebuilt next time.
    """
    target = Path(target)
    for stale in target.glob(".*.tmp"):  # left by a build that was killed (SIGTERM, closed terminal)
        stale.unlink(missing_ok=True)
    steps = ["tensors", "consolidated.00.pth", "params.json", "tokenizer.model", STANDIN_MARKER]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(steps), desc="building the stand-in checkpoint", unit="step")

    def done():
        if bar is not None:
            bar.update(1)

    params = ModelParams.from_dict(LLAMA3_8B_PARAMS)
    tensors = standin_tensors(params, seed)
    done()
    _atomic_write(target / "consolidated.00.pth", _torch_saver(tensors))
    del tensors
    done()
    _atomic_write(target / "params.json", lambda tmp: tmp.write_text(json.dumps(LLAMA3_8B_PARAMS, indent=2) + "\n"))
    done()
    tok = default_tokenizer_path().read_bytes()
    _atomic_write(target / "tokenizer.model", lambda tmp: tmp.write_bytes(tok))
    done()
    marker = {
        "what": "synthetic stand-in for Meta-Llama-3-8B: random bf16 tensors with Meta's key names, shapes and dtype",
        "seed": seed,
        "tensors": len(params.expected_shapes()),
        "sharing": STANDIN_SHARING,
    }
    _atomic_write(target / STANDIN_MARKER, lambda tmp: tmp.write_text(json.dumps(marker, indent=2) + "\n"))
    done()
    if bar is not None:
        bar.close()
    return target


def standin_complete(target: Path = STANDIN_DIR) -> bool:
    """True when every stand-in file is present (the marker is written last)."""
    return all((Path(target) / n).is_file() for n in ("params.json", "consolidated.00.pth", "tokenizer.model", STANDIN_MARKER))


def ensure_standin(target: Path = STANDIN_DIR, progress: bool = False) -> Path:
    """Build the stand-in in ``target`` unless it is already complete; return ``target``."""
    if not standin_complete(target):
        build_standin(target, progress=progress)
    return Path(target)


# --------------------------------------------------------------------------- command line


def check_weights_report(folder: str | os.PathLike | None = None) -> str:
    """A short report on the weights in ``folder`` (default ``LLAMA3_DIR``): format, params, tensors, tokenizer."""
    ckpt = open_checkpoint(folder)
    p = ckpt.params
    tok = tokenizer_path(ckpt.source)
    enc = load_tokenizer(tok)
    ids = encode_prompt(enc, DEFAULT_PROMPT)
    lines = [
        f"weights: {ckpt.description}",
        f"params: dim {p.dim}, n_layers {p.n_layers}, n_heads {p.n_heads}, n_kv_heads {p.n_kv_heads_resolved}, "
        f"vocab_size {p.vocab_size}, norm_eps {p.norm_eps}, rope_theta {p.rope_theta}, use_scaled_rope {p.use_scaled_rope}",
        f"derived: head_dim {p.head_dim}, n_rep {p.n_rep}, ffn hidden {p.ffn_hidden_dim}, "
        f"{p.parameter_count():,} parameters in the full model",
        f"tensors present: {len(ckpt.keys())} of the full model's {len(p.expected_shapes())}, all shapes agree with params.json"
        + ("" if len(ckpt.keys()) == len(p.expected_shapes()) else
           " (a partial checkpoint: enough for this series, which reads the embedding table and layer 0's attention)"),
        f"tokenizer: {'from the weights folder' if ckpt.source.tokenizer_path else 'from llama-models'}, "
        f"{enc.n_vocab - len(enc.special_tokens_set):,} BPE ranks; "
        f"the default prompt is {len(ids)} tokens",
    ]
    for name in ("tok_embeddings.weight", "layers.0.attention_norm.weight", "layers.0.attention.wq.weight", "layers.0.attention.wk.weight"):
        lines.append(f"  {name}: {list(ckpt.shape(name))} {str(ckpt.dtype(name)).replace('torch.', '')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``build-standin`` or ``check-weights``; errors print one line and exit 2."""
    argv = sys.argv[1:] if argv is None else argv
    cmd = argv[0] if argv else ""
    try:
        if cmd == "build-standin":
            if not is_standin(resolve_dir()):
                print("LLAMA3_DIR is set to real weights: the stand-in is not needed")
            elif standin_complete():
                print(f"stand-in already built in {_display(STANDIN_DIR)}")
            else:
                build_standin()
                print(f"stand-in built in {_display(STANDIN_DIR)}")
            return 0
        if cmd == "tokenize":
            _tokenize_command()
            return 0
        if cmd == "nbval-flag":
            # Strict comparison of every output on the stand-in; with real weights only the
            # cells tagged nbval-check-output (weights-independent outputs) are compared.
            print("--nbval" if is_standin(resolve_dir()) else "--nbval-lax")
            return 0
        if cmd == "check-weights":
            print(check_weights_report())
            return 0
    except Llama3Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("usage: python notebooks/plumbing.py build-standin | check-weights | nbval-flag", file=sys.stderr)
    return 2


