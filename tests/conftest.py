"""Shared fixtures: run a notebook with a given prompt / weights and read back its export."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
import plumbing
from run_notebooks import execute_notebook

#: "05" -> notebooks/05_attention.ipynb, for every notebook of the series (the one list: the NN_*.ipynb glob).
NOTEBOOKS = {p.name[:2]: p for p in plumbing.series_notebooks()}
EXPORT_NAMES = {stem: p.stem for stem, p in NOTEBOOKS.items()}  # each notebook exports <its name>.safetensors


@pytest.fixture(scope="session")
def standin_dir() -> Path:
    """The stand-in checkpoint folder, built if missing."""
    return plumbing.ensure_standin()


@pytest.fixture(scope="session")
def hf_standin_dir(tmp_path_factory, standin_dir) -> Path:
    """A Hugging Face safetensors copy of the stand-in's embedding table and layer 0 (1.5 GB, written once per session).

    Two shards and an index, Hugging Face's names, ``q_proj``/``k_proj`` rows permuted as the
    conversion script does (``references.hf_permute_by_index``, independent of plumbing).
    """
    import json

    from safetensors.torch import save_file

    from references import hf_config, hf_permute_by_index

    folder = tmp_path_factory.mktemp("hf")
    meta = plumbing.open_checkpoint(standin_dir)
    p = meta.params
    to_hf = {v: k for k, v in plumbing.HF_TO_META.items()}
    to_hf.update({f"layers.0.{v}": f"model.layers.0.{k}" for k, v in plumbing.HF_LAYER_TO_META.items()})
    tensors = {}
    # safetensors stores no shared storage: a full copy would be 16 GB. The embedding table and
    # layer 0 (1.5 GB) are what the notebooks read in the Hugging Face layout.
    for name in [k for k in meta.keys() if k == "tok_embeddings.weight" or k.startswith("layers.0.")]:
        t = meta.get(name)
        if name.endswith("wq.weight"):
            t = hf_permute_by_index(t, p.n_heads)
        elif name.endswith("wk.weight"):
            t = hf_permute_by_index(t, p.n_kv_heads)
        tensors[to_hf[name]] = t.clone()  # the stand-in's matrices share one storage; safetensors needs their own
    emb = {"model.embed_tokens.weight": tensors.pop("model.embed_tokens.weight")}
    save_file(emb, str(folder / "model-00001-of-00002.safetensors"))
    save_file(tensors, str(folder / "model-00002-of-00002.safetensors"))
    total = sum(t.numel() * t.element_size() for t in [*emb.values(), *tensors.values()])
    index = {"metadata": {"total_size": total},  # as Hugging Face writes it; transformers' from_pretrained reads it
             "weight_map": {**{k: "model-00001-of-00002.safetensors" for k in emb},
                            **{k: "model-00002-of-00002.safetensors" for k in tensors}}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    (folder / "config.json").write_text(json.dumps(hf_config(p)))
    return folder


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
