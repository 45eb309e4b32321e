"""Writing a notebook's result tensors to ``$LLAMA3_EXPORT_DIR`` as safetensors (atomically)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .errors import Llama3Error
from .inputs import prompt
from .paths import atomic_write
from .weights import find_weights


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
    from safetensors import SafetensorError
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
        umask = os.umask(0)
        os.umask(umask)
        atomic_write(
            out / filename, lambda tmp: save_file(data, str(tmp), metadata={k: str(v) for k, v in meta.items()}), mode=0o666 & ~umask
        )  # like any file the user creates (temporary files start private)
    except OSError as e:
        raise Llama3Error(f"Cannot write the export to LLAMA3_EXPORT_DIR={folder!r}: {e.strerror}.") from None
    except SafetensorError as e:  # safetensors reports its own I/O failures (a full disk) this way
        reason = str(e).rsplit("I/O error: ", 1)[-1].strip().rstrip(".")
        raise Llama3Error(f"Cannot write the export to LLAMA3_EXPORT_DIR={folder!r}: {reason}.") from None
    return out / filename
