"""Shared fixtures: run a notebook with a given prompt / weights and read back its export."""

from __future__ import annotations

from pathlib import Path

import pytest

import plumbing
from run_notebooks import execute_notebook

ROOT = Path(__file__).resolve().parent.parent

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

    from references import hf_config, to_hugging_face

    folder = tmp_path_factory.mktemp("hf")
    meta = plumbing.open_checkpoint(standin_dir)
    p = meta.params
    # safetensors stores no shared storage: a full copy would be 16 GB. The embedding table and
    # layer 0 (1.5 GB) are what the notebooks read in the Hugging Face layout.
    tensors = dict(to_hugging_face(name, meta.get(name), p) for name in meta.keys()
                   if name == "tok_embeddings.weight" or name.startswith("layers.0."))
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
            env = plumbing.clean_environ()
            env["LLAMA3_EXPORT_DIR"] = str(out)
            if prompt is not None:
                env["LLAMA3_PROMPT"] = prompt
            if llama3_dir is not None:
                env["LLAMA3_DIR"] = str(llama3_dir)
            execute_notebook(NOTEBOOKS[stem], None, env=env, progress=False)
            cache[key] = load_file(str(out / f"{EXPORT_NAMES[stem]}.safetensors"))
        return cache[key]

    return run
