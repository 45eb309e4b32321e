"""The synthetic stand-in: a deterministic checkpoint with Meta-Llama-3-8B's names, shapes and dtype.

``data/standin/`` holds the 8B-shaped one, which the committed outputs come from. The same builder writes
stand-ins of Llama 3.2 1B's and 3B's shapes elsewhere (``python -m plumbing build-standin --model Llama-3.2-1B
--out DIR``), for measuring and testing those models' shapes; ``--layers`` keeps the first few layers only.

Built only on request (``make``'s targets, ``python -m plumbing build-standin``, or :func:`plumbing.setup`
when the stand-in is missing, which says so); finding or opening weights never builds anything.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from collections.abc import Callable

from .errors import Llama3Error
from .params import LLAMA3_8B_PARAMS, MODELS, TIED_EMBEDDINGS, ModelParams
from .paths import STANDIN_DIR, STANDIN_MARKER, atomic_write, display_path
from .tokenizer import default_tokenizer_path

STANDIN_SEED = 20240418  # Meta-Llama-3-8B's release date; any fixed number would do
#: How the stand-in's tensors share storage (printed in its description and written to its marker).
STANDIN_SHARING = (
    "tok_embeddings has its own values; every other weight matrix is a view at its own offset "
    "into one shared random pool, so all 291 tensors differ"
)


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


def _check_free_space(target: Path, tensors: dict) -> None:
    """Raise :class:`Llama3Error` unless ``target``'s disk has room for ``tensors`` (each storage once) plus 1 %."""
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors.values()}
    need = sum(storages.values()) * 101 // 100
    target.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(target).free
    if free < need:
        raise Llama3Error(
            f"the stand-in needs {need / 1e9:.2f} GB and the disk holding {display_path(target)} has {free / 1e9:.2f} GB free: "
            "free some space (or build it elsewhere with --out DIR) and run the build again"
        )


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
    if params.model_shape in TIED_EMBEDDINGS:  # output.weight is tok_embeddings.weight: not in the pool
        size = biggest + len(in_layers) * max(1, biggest // 64)
    step = max(1, (size - biggest) // len(in_layers))
    step -= 1 - step % 2  # odd
    offsets = {} if params.model_shape in TIED_EMBEDDINGS else {"output.weight": 0}
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
    if p.model_shape in TIED_EMBEDDINGS:  # Llama 3.2 1B and 3B: one table for the input and the output
        out["output.weight"] = out["tok_embeddings.weight"]
    return {name: out[name] for name in shapes}  # Meta's order


def standin_params(model: str = "Meta-Llama-3-8B", n_layers: int | None = None) -> dict:
    """The ``params.json`` of a stand-in: ``model``'s (a key of :data:`~plumbing.params.MODELS`), ``n_layers`` layers.

    Raises:
        Llama3Error: an unknown model, or ``n_layers`` not between 1 and the model's number of layers.
    """

    if model not in MODELS:
        raise Llama3Error(f"No stand-in for {model!r}; the models are {', '.join(MODELS)}.")
    raw = dict(MODELS[model])
    if n_layers is not None:
        if not isinstance(n_layers, int) or not 1 <= n_layers <= raw["n_layers"]:
            raise Llama3Error(f"--layers must be a whole number from 1 to {raw['n_layers']} for {model}, found {n_layers!r}.")
        raw["n_layers"] = n_layers
    return raw


def build_standin(
    target: Path = STANDIN_DIR, seed: int = STANDIN_SEED, progress: bool = True, model: str = "Meta-Llama-3-8B", n_layers: int | None = None
) -> Path:
    """Write the stand-in checkpoint to ``target``, laid out like Meta's ``original/`` folder.

    Files: ``params.json`` (``model``'s real values, Meta-Llama-3-8B's by default; ``n_layers`` keeps the first
    layers only), ``consolidated.00.pth`` (``torch.save`` of the tensors of :func:`standin_tensors`; Llama 3.2 1B
    and 3B store ``output.weight`` as ``tok_embeddings.weight``, one storage), ``tokenizer.model`` (Meta's,
    copied from ``llama-models``) and the marker ``STANDIN.json``. Every file is written
    atomically; the marker is written last, so an interrupted build is rebuilt next time.

    Raises:
        Llama3Error: an unknown ``model`` or a bad ``n_layers`` (:func:`standin_params`); too little free disk space.
    """
    raw = standin_params(model, n_layers)
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

    params = ModelParams.from_dict(raw)
    tensors = standin_tensors(params, seed)
    done()
    _check_free_space(target, tensors)
    atomic_write(target / "consolidated.00.pth", _torch_saver(tensors))
    del tensors
    done()
    atomic_write(target / "params.json", lambda tmp: tmp.write_text(json.dumps(raw, indent=2) + "\n"))
    done()
    tok = default_tokenizer_path().read_bytes()
    atomic_write(target / "tokenizer.model", lambda tmp: tmp.write_bytes(tok))
    done()
    marker = {
        "what": f"synthetic stand-in for {model}: random bf16 tensors with Meta's key names, shapes and dtype",
        "seed": seed,
        "tensors": len(params.expected_shapes()),
        "sharing": STANDIN_SHARING,
    }
    if model != "Meta-Llama-3-8B" or n_layers is not None:  # the default marker stays as it was
        tied = " (output.weight is the same table)" if params.tied_embeddings else ""
        marker.update(
            model=model,
            n_layers=params.n_layers,
            sharing=f"tok_embeddings has its own values{tied}; every other weight matrix is a view at its own "
            f"offset into one shared random pool, so all {len(params.expected_shapes())} tensors differ",
        )
    atomic_write(target / STANDIN_MARKER, lambda tmp: tmp.write_text(json.dumps(marker, indent=2) + "\n"))
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
