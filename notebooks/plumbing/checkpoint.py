"""Opening a checkpoint, memory-mapped, in Meta's names and layout (Meta's ``.pth`` or Hugging Face safetensors)."""

from __future__ import annotations

import json
import os
import pickle
import zipfile
from collections.abc import Iterable
from pathlib import Path

from .errors import Llama3Error
from .hf_layout import hf_name_to_meta, hf_unpermute
from .params import ModelParams, params_from_hf_config
from .paths import display_path
from .weights import WeightsSource, find_weights


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
            self._state: dict | None = _torch_load_mmap(source.files[0])
            if "output.weight" not in self._state and "tok_embeddings.weight" in self._state and self.params.tied_embeddings:
                self._state["output.weight"] = self._state["tok_embeddings.weight"]  # a tied model's file without the name
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
            self._shapes, self._dtypes, self._hf_names = {}, {}, {}
            for hf_name, (_handle, shape, dtype) in self._hf.items():
                meta = hf_name_to_meta(hf_name)
                if meta is not None:
                    self._shapes[meta], self._dtypes[meta], self._hf_names[meta] = shape, dtype, hf_name
            # Tied embeddings (Llama 3.2 1B and 3B): no lm_head in the files; the output projection is the embedding table.
            if raw.get("tie_word_embeddings") and "output.weight" not in self._shapes and "tok_embeddings.weight" in self._shapes:
                for table in (self._shapes, self._dtypes, self._hf_names):
                    table["output.weight"] = table["tok_embeddings.weight"]
        self._check_shapes()

    @property
    def tied_embeddings(self) -> bool:
        """True when ``output.weight`` is ``tok_embeddings.weight`` (Llama 3.2 1B and 3B): one table, counted once.

        Hugging Face folders: ``tie_word_embeddings`` and no ``lm_head.weight`` in the files. Meta folders: the two
        names share one storage in ``consolidated.00.pth`` (``torch.save`` writes a shared storage once), or the file
        of a model with Llama 3.2 1B's or 3B's shapes has no ``output.weight`` and it is read as ``tok_embeddings.weight``.
        """
        if self._state is None:
            return self._hf_names.get("output.weight") == self._hf_names.get("tok_embeddings.weight")
        out, emb = self._state.get("output.weight"), self._state.get("tok_embeddings.weight")
        return (
            out is not None
            and emb is not None
            and out.shape == emb.shape
            and out.untyped_storage().data_ptr() == emb.untyped_storage().data_ptr()
            and out.storage_offset() == emb.storage_offset()
        )

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
        safetensors file; ``wq``/``wk`` rows are un-permuted to Meta's interleaved layout; with tied
        embeddings (``tie_word_embeddings`` in ``config.json``), ``output.weight`` is ``tok_embeddings.weight``.

        Raises:
            Llama3Error: no such tensor.
        """
        self._known(name)
        if self._state is not None:
            return self._state[name]
        hf_name = self._hf_names[name]
        assert self._hf is not None  # no torch state: __init__ opened the safetensors files
        handle = self._hf[hf_name][0]
        tensor = handle.get_tensor(hf_name)
        if name.endswith("attention.wq.weight"):
            tensor = hf_unpermute(tensor, self.params.n_heads)
        elif name.endswith("attention.wk.weight"):
            assert self.params.n_kv_heads is not None  # __post_init__ resolves None to n_heads
            tensor = hf_unpermute(tensor, self.params.n_kv_heads)
        return tensor

    def to(self, dtype) -> CheckpointAs:
        """This checkpoint with every tensor converted to ``dtype`` at its first read, and kept (for a small model)."""
        return CheckpointAs(self, dtype)


class CheckpointAs:
    """A :class:`Checkpoint` whose :meth:`get` converts each tensor to one dtype (a copy, made at the first read, kept).

    The notebooks' real-model cells read SmolLM2 in float32: in bf16 the last bits of a product depend on the CPU's
    kernels, and 30 layers make that visible in the printed digits; in float32 every CPU prints the same.
    Everything else (``params``, ``source``, ``keys``, ``shape``, ``tied_embeddings``) is the checkpoint's. The copies
    are kept (SmolLM2 in float32: 0.5 GB), so a generation loop does not convert every weight at every step.
    """

    def __init__(self, checkpoint: Checkpoint, dtype):
        self.checkpoint, self._dtype = checkpoint, dtype
        self._read: dict[str, object] = {}  # name -> the converted tensor
        self.source, self.params, self.tied_embeddings = checkpoint.source, checkpoint.params, checkpoint.tied_embeddings

    @property
    def description(self) -> str:
        return f"{self.checkpoint.description}; read in {str(self._dtype).removeprefix('torch.')}"

    def keys(self) -> list[str]:
        return self.checkpoint.keys()

    def shape(self, name: str) -> tuple[int, ...]:
        return self.checkpoint.shape(name)

    def dtype(self, name: str):
        self.checkpoint.dtype(name)  # raises for a name the checkpoint lacks
        return self._dtype

    def get(self, name: str):
        """Tensor ``name`` in Meta's layout, converted to the dtype (see :meth:`Checkpoint.get`)."""
        if name not in self._read:
            self._read[name] = self.checkpoint.get(name).to(self._dtype)
        return self._read[name]


def _torch_load_mmap(path: Path) -> dict:
    """``torch.load(path, mmap=True, weights_only=True)`` with every failure turned into :class:`Llama3Error`."""
    import torch

    shown = display_path(path)
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
    import torch
    from safetensors import SafetensorError, safe_open

    dtypes = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}
    found = {}
    for path in files:
        try:
            handle = safe_open(str(path), framework="pt", device="cpu")
            for name in handle.keys():
                sl = handle.get_slice(name)
                found[name] = (handle, tuple(sl.get_shape()), dtypes.get(sl.get_dtype(), sl.get_dtype()))
        except (SafetensorError, OSError) as e:
            raise Llama3Error(f"{display_path(path)} is not a readable safetensors file ({e}); download it again.") from None
    return found


def open_checkpoint(folder: str | os.PathLike | None = None) -> Checkpoint:
    """Find and open the weights (``LLAMA3_DIR`` or the stand-in). See :func:`find_weights`.

    Raises:
        Llama3Error: any problem with the folder, params.json or the checkpoint.
    """
    return Checkpoint(find_weights(folder))
