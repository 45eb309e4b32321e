"""Finding the weights: ``LLAMA3_DIR`` or the stand-in, in one of three layouts. Never builds anything."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import Llama3Error
from .paths import REPO_ROOT, STANDIN_DIR, STANDIN_MARKER, display_path


def resolve_dir(value: str | os.PathLike | None = None) -> Path | None:
    """Resolve ``LLAMA3_DIR`` (or ``value``); ``None`` means the stand-in.

    A relative path is tried against the current directory, then the repository root
    (notebooks run with ``notebooks/`` as their current directory). ``LLAMA3_DIR=data/standin``
    behaves exactly like leaving it unset. Builds nothing.

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
        return None
    if not path.exists():
        raise Llama3Error(
            f"LLAMA3_DIR={value!r} does not exist. Point it at the folder that holds params.json and "
            "consolidated.00.pth (or a Hugging Face download), or unset it to use the synthetic stand-in."
        )
    if not path.is_dir():
        raise Llama3Error(f"LLAMA3_DIR={value!r} is a file; it must be the folder that holds it.")
    return path


def is_standin(folder: Path | None) -> bool:
    """True for a synthetic stand-in (``None`` or a folder with the stand-in marker), of any model's shapes."""
    return folder is None or (Path(folder) / STANDIN_MARKER).is_file()


def standin_model(folder: Path | None) -> tuple[str, int | None]:
    """``(model, n_layers)`` of a stand-in folder, from its marker: ``("Meta-Llama-3-8B", None)`` for the default one.

    The committed outputs come from the default one only (``data/standin/``, or a copy of it).
    """
    import json

    marker = (STANDIN_DIR if folder is None else Path(folder)) / STANDIN_MARKER
    try:
        raw = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "Meta-Llama-3-8B", None
    return raw.get("model", "Meta-Llama-3-8B"), raw.get("n_layers")


def is_default_standin(folder: Path | None) -> bool:
    """True for the stand-in the committed outputs come from: Meta-Llama-3-8B's shapes, all 32 layers."""
    return is_standin(folder) and standin_model(folder) == ("Meta-Llama-3-8B", None)


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
        if self.standin and not is_default_standin(self.folder):
            model, n_layers = standin_model(self.folder)
            layers = f"{n_layers} layer{'s' if n_layers != 1 else ''}"
            return (
                f"synthetic stand-in of {model.replace('-', ' ')}'s shapes ({layers}; random bf16 values "
                "under Meta's tensor names; not Meta's weights)"
            )
        if self.standin:
            return "synthetic stand-in (random bf16 values under Meta-Llama-3-8B's names and shapes; not Meta's weights)"
        if (self.folder / "SMOLLM2.json").is_file():
            return (
                "SmolLM2-135M-Instruct (real trained weights, Apache-2.0; the Llama architecture but not Llama 3: "
                "its own sizes and tokenizer; 4-bit weights widened to bf16), Meta format"
            )
        if self.format == "meta":
            return "real checkpoint, Meta format (params.json + consolidated.00.pth)"
        return "real checkpoint, Hugging Face safetensors format (config.json + model*.safetensors, wq/wk un-permuted to Meta's layout)"


def find_weights(folder: str | os.PathLike | None = None) -> WeightsSource:
    """Locate weights in ``folder`` (default: ``LLAMA3_DIR``, else the stand-in).

    Accepts Meta's folder, a Hugging Face root with ``original/``, or a Hugging Face
    safetensors folder. Builds nothing: a missing stand-in is an error that says how to build it.

    Raises:
        Llama3Error: nothing usable in the folder (the message lists what was looked for), or the
            stand-in is not built yet.
    """
    path = resolve_dir(folder)
    if path is None:
        path = STANDIN_DIR
        if not (path / STANDIN_MARKER).is_file():  # the marker is written last: a complete build
            raise Llama3Error(
                f"The synthetic stand-in is not built yet ({display_path(path)}/ is missing or incomplete). "
                "Run `make run`, or `python -m plumbing build-standin`; in Jupyter, plumbing.setup() builds it."
            )
    candidates = [path, path / "original"]
    for cand in candidates:
        pth = sorted(cand.glob("consolidated.*.pth"))
        if (cand / "params.json").is_file() or pth:
            if not (cand / "params.json").is_file():
                raise Llama3Error(f"{display_path(cand)} has {pth[0].name} but no params.json; copy params.json from the same download.")
            if not pth:
                raise Llama3Error(
                    f"{display_path(cand)} has params.json but no consolidated.00.pth checkpoint; "
                    "the download is incomplete (Meta's 8B folder holds params.json, consolidated.00.pth and tokenizer.model)."
                )
            if len(pth) > 1:
                raise Llama3Error(
                    f"{display_path(cand)} holds {len(pth)} consolidated.*.pth shards (a model-parallel checkpoint); "
                    "this series reads the single-file 8B checkpoint."
                )
            tok = cand / "tokenizer.model"
            return WeightsSource(cand, "meta", (pth[0],), cand / "params.json", tok if tok.is_file() else None, is_standin(cand))
    st = sorted(path.glob("*.safetensors"))
    if (path / "config.json").is_file() or st:
        if not (path / "config.json").is_file():
            raise Llama3Error(f"{display_path(path)} has safetensors files but no config.json; the Hugging Face download is incomplete.")
        if not st:
            raise Llama3Error(f"{display_path(path)} has config.json but no model*.safetensors; the Hugging Face download is incomplete.")
        tok = path / "original" / "tokenizer.model"
        return WeightsSource(path, "hf", tuple(st), path / "config.json", tok if tok.is_file() else None, False)
    raise Llama3Error(
        f"{display_path(path)} has no params.json (Meta format), no original/ folder and no config.json (Hugging Face format). "
        "Point LLAMA3_DIR at the folder that holds params.json and consolidated.00.pth."
    )
