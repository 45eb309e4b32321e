"""Shared fixtures: run a notebook with a given prompt / weights and read back its export."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "notebooks"))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))

import plumbing  # noqa: E402
from run_notebooks import execute_notebook  # noqa: E402

NOTEBOOKS = {
    "01": ROOT / "notebooks" / "01_tokenization.ipynb",
    "02": ROOT / "notebooks" / "02_embedding_lookup.ipynb",
    "03": ROOT / "notebooks" / "03_rmsnorm.ipynb",
    "04": ROOT / "notebooks" / "04_rope.ipynb",
}
EXPORT_NAMES = {"01": "01_tokenization", "02": "02_embedding_lookup", "03": "03_rmsnorm", "04": "04_rope"}


@pytest.fixture(scope="session")
def standin_dir() -> Path:
    """The stand-in checkpoint folder, built if missing."""
    return plumbing.ensure_standin()


@pytest.fixture(scope="session")
def run_notebook(tmp_path_factory):
    """``run_notebook("03", prompt=..., llama3_dir=...)`` -> dict of exported tensors (cached per arguments).

    The notebook is executed in a fresh kernel with ``LLAMA3_EXPORT_DIR`` set to a temporary
    folder; ``prompt=None`` means the default prompt and ``llama3_dir=None`` the stand-in.
    """
    from safetensors.torch import load_file

    cache = {}

    def run(stem: str, prompt: str | None = None, llama3_dir: Path | None = None) -> dict:
        key = (stem, prompt, str(llama3_dir))
        if key not in cache:
            out = tmp_path_factory.mktemp(f"export{stem}")
            env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA3_")}
            env["LLAMA3_EXPORT_DIR"] = str(out)
            if prompt is not None:
                env["LLAMA3_PROMPT"] = prompt
            if llama3_dir is not None:
                env["LLAMA3_DIR"] = str(llama3_dir)
            execute_notebook(NOTEBOOKS[stem], None, env=env, progress=False)
            cache[key] = load_file(str(out / f"{EXPORT_NAMES[stem]}.safetensors"))
        return cache[key]

    return run
