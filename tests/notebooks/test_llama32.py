"""Llama 3.2 1B and 3B, first-class: every notebook on random checkpoints of their exact shapes, in both formats.

Llama 3.2 1B (dim 2048, 32 query and 8 key/value heads of 64, FFN 8192) and 3B (dim 3072, 24 and 8 heads of 128,
FFN 8192) differ from Meta-Llama-3-8B in every size a notebook derives from ``params.json``, tie the output
projection to the embedding table, and scale RoPE with factor 32 (their ``config.json``; Meta's reference
``apply_scaling`` hard-codes 8, Llama 3.1's). Here each gets:

* a Meta-format folder: ``python -m plumbing build-standin --model Llama-3.2-1B --layers 2``'s output, Meta's
  ``params.json`` for the model with 2 of its layers, ``output.weight`` stored as ``tok_embeddings.weight``;
* a Hugging Face folder converted from it: ``config.json`` with ``tie_word_embeddings`` and ``rope_scaling``
  factor 32, ``model.safetensors`` without ``lm_head.weight``, ``q_proj``/``k_proj`` rows permuted.

Every notebook runs on the Meta-format folder (its in-notebook checks against Meta's code included), and its
exports equal Meta's reference code run with factor 32, bitwise (each notebook's test module's reference); 08
generates Meta's ``Llama3.generate`` ids, greedy and sampled. The Hugging Face folder reads as the same checkpoint,
every tensor bitwise, and 07 and 08 give the same exports from it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import plumbing
import references
import test_03_rmsnorm
import test_04_rope
import test_05_attention
import test_06_feed_forward
import test_07_next_token
import test_08_generation
from conftest import NOTEBOOKS
from references import meta_state, prompt_tokens

MODELS = ["Llama-3.2-1B", "Llama-3.2-3B"]
LAYERS = 2  # fewer layers than the real models; every other size is theirs


@pytest.fixture(scope="session")
def llama32_dirs(tmp_path_factory, standin_dir) -> dict:
    """{(model, "meta" | "hf"): folder} for both models (about 1.3 and 2.0 GB in Meta's format)."""
    from safetensors.torch import save_file

    dirs = {}
    for model in MODELS:
        meta = plumbing.build_standin(tmp_path_factory.mktemp(model), model=model, n_layers=LAYERS, progress=False)
        params = plumbing.ModelParams.from_json(meta / "params.json")
        tensors = test_07_next_token.hf_state(meta_state(meta), params)
        del tensors["lm_head.weight"]  # tied: Hugging Face's files have no lm_head
        hf = tmp_path_factory.mktemp(f"{model}-hf")
        save_file(tensors, str(hf / "model.safetensors"), metadata={"format": "pt"})
        (hf / "config.json").write_text(json.dumps(plumbing.hf_layout.hf_config(params)))
        dirs[model, "meta"], dirs[model, "hf"] = meta, hf
    return dirs


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_both_formats_read_as_the_model_with_factor_32_and_tied_embeddings(llama32_dirs, model):
    meta, hf = (plumbing.open_checkpoint(llama32_dirs[model, f]) for f in ("meta", "hf"))
    config = json.loads((llama32_dirs[model, "hf"] / "config.json").read_text())
    assert config["tie_word_embeddings"] and config["rope_scaling"]["factor"] == 32.0
    for ckpt in (meta, hf):
        p = ckpt.params
        assert p.model_shape == model and p.n_layers == LAYERS and p.use_scaled_rope
        assert p.rope_scaling["factor"] == 32.0 and ckpt.tied_embeddings
        assert torch.equal(ckpt.get("output.weight"), ckpt.get("tok_embeddings.weight"))
        assert "factor 32" in p.rope_scaling_line()
    assert meta.params.rope_scaling["source"].startswith(model.replace("-", " "))  # Meta's folder: from the shape
    assert hf.params.rope_scaling["source"] == "config.json's rope_scaling"
    assert not hf.source.standin and meta.source.standin
    # a stand-in of another shape is synthetic, but not the one the committed outputs come from: make test goes lax
    assert not plumbing.is_default_standin(llama32_dirs[model, "meta"]) and plumbing.is_default_standin(None)
    from plumbing.cli import check_weights_report

    report = check_weights_report(llama32_dirs[model, "meta"])
    assert "counted once" in report and "RoPE scaling: factor 32, from " in report
    assert meta.description.startswith(f"synthetic stand-in of {model.replace('-', ' ')}'s shapes ({LAYERS} layers")
    from plumbing.cli import main

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LLAMA3_DIR", str(llama32_dirs[model, "meta"]))
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["nbval-flag"]) == 0
        assert out.getvalue().strip() == "--nbval-lax"
    full = plumbing.ModelParams.from_dict(plumbing.MODELS[model]).parameter_count()
    assert full == {"Llama-3.2-1B": 1_235_814_400, "Llama-3.2-3B": 3_212_749_824}[model]  # Meta's model cards: 1.23B, 3.21B


def meta_check(stem: str, export: dict, folder: Path) -> None:
    """The Meta-format export of notebook ``stem`` against Meta's reference code with factor 32, bitwise."""
    params = plumbing.ModelParams.from_json(folder / "params.json")
    state, tokens = meta_state(folder), prompt_tokens(None)
    n = len(tokens)
    emb = state["tok_embeddings.weight"][torch.tensor(tokens)]
    if stem == "01":
        assert export["tokens"].tolist() == tokens
    elif stem == "02":
        assert torch.equal(export["token_embeddings_unnormalized"], emb)
    elif stem == "03":
        norm = test_03_rmsnorm.meta_rmsnorm(state["layers.0.attention_norm.weight"], params.norm_eps)
        with torch.no_grad():
            assert torch.equal(export["token_embeddings"], norm(emb))
    elif stem == "04":
        freqs_cis = references.meta_freqs_cis(params, n)  # Meta's precompute_freqs_cis, apply_scaling with factor 32
        assert torch.equal(export["freqs_cis"], torch.view_as_real(freqs_cis))
        M = references.meta_llama3_model()
        factor_8 = M.precompute_freqs_cis(params.head_dim, n, params.rope_theta, True)  # Meta's hard-coded 8
        assert not torch.equal(export["freqs_cis"], torch.view_as_real(factor_8))
        _, xq, xk = test_04_rope.meta_projections(
            state["tok_embeddings.weight"],
            state["layers.0.attention_norm.weight"],
            state["layers.0.attention.wq.weight"],
            state["layers.0.attention.wk.weight"],
            tokens,
            params,
        )
        xq_rot, xk_rot = M.apply_rotary_emb(xq[None], xk[None], freqs_cis)
        assert torch.equal(export["xq_rotated"], xq_rot[0]) and torch.equal(export["xk_rotated"], xk_rot[0])
    elif stem == "05":
        test_05_attention.check_against_meta(export, state, params, tokens)
    elif stem == "06":
        test_06_feed_forward.check_against_meta(export, test_06_feed_forward.meta_reference(state, params, tokens), n, params.dim)
    elif stem == "07":
        test_07_next_token.check_against_meta(export, test_07_next_token.meta_logits(folder, tokens))
    elif stem == "08":
        test_08_generation.check_against_meta(export, folder, tokens)
    else:  # a new notebook: its test module says how to check it; here it must at least run
        assert export


@pytest.mark.notebook
@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
@pytest.mark.parametrize("model", MODELS)
def test_meta_format_matches_meta_reference(run_notebook, llama32_dirs, model, stem):
    meta_check(stem, run_notebook(stem, llama3_dir=llama32_dirs[model, "meta"]), llama32_dirs[model, "meta"])


#: What a notebook reads of the sizes: each the same from either format.
SIZES = (
    "dim",
    "n_layers",
    "n_heads",
    "n_kv_heads",
    "head_dim",
    "n_rep",
    "ffn_hidden_dim",
    "vocab_size",
    "norm_eps",
    "rope_theta",
    "use_scaled_rope",
    "context_length",
    "tied_embeddings",
    "model_shape",
)


@pytest.mark.slow  # the two stand-ins of Llama 3.2's shapes: about 20 s to write
@pytest.mark.parametrize("model", MODELS)
def test_hugging_face_format_reads_as_the_same_checkpoint(llama32_dirs, model):
    """The notebooks see weights only through the checkpoint: from the Hugging Face folder it gives every tensor
    bitwise as from Meta's (wq, wk un-permuted; output.weight tied), and every size and RoPE setting alike."""
    meta, hf = (plumbing.open_checkpoint(llama32_dirs[model, f]) for f in ("meta", "hf"))
    assert sorted(hf.keys()) == sorted(meta.keys())
    for name in meta.keys():
        assert plumbing.same_bits(hf.get(name), meta.get(name)), name
    assert [getattr(hf.params, a) for a in SIZES] == [getattr(meta.params, a) for a in SIZES]
    assert {k: v for k, v in hf.params.rope_scaling.items() if k != "source"} == {
        k: v for k, v in meta.params.rope_scaling.items() if k != "source"
    }


@pytest.mark.notebook
@pytest.mark.parametrize("stem", ["07", "08"])
def test_hugging_face_format_gives_the_same_exports(run_notebook, llama32_dirs, stem):
    """End to end, on Llama 3.2 1B's shapes: 07 (every weight) and 08 (generation) export the same from either format."""
    from_meta = run_notebook(stem, llama3_dir=llama32_dirs["Llama-3.2-1B", "meta"])
    from_hf = run_notebook(stem, llama3_dir=llama32_dirs["Llama-3.2-1B", "hf"])
    assert set(from_hf) == set(from_meta)
    for name in from_meta:
        assert plumbing.same_bits(from_hf[name], from_meta[name]), name


@pytest.mark.notebook
def test_a_meta_file_without_output_weight_reads_as_tied(run_notebook, llama32_dirs, tmp_path):
    """A Llama 3.2 file that stores only tok_embeddings.weight: output.weight is that table, and 07 gives the same logits."""
    import shutil

    source = llama32_dirs["Llama-3.2-1B", "meta"]
    state = {k: v for k, v in meta_state(source).items() if k != "output.weight"}
    torch.save(state, tmp_path / "consolidated.00.pth")
    for name in ("params.json", "tokenizer.model"):
        shutil.copy(source / name, tmp_path / name)
    ckpt = plumbing.open_checkpoint(tmp_path)
    assert ckpt.tied_embeddings and "output.weight" in ckpt.keys()
    assert torch.equal(ckpt.get("output.weight"), ckpt.get("tok_embeddings.weight"))
    without, with_name = run_notebook("07", llama3_dir=tmp_path), run_notebook("07", llama3_dir=source)
    assert torch.equal(without["logits"], with_name["logits"])


@pytest.mark.slow
def test_build_standin_never_overwrites_weights_nor_another_stand_in(llama32_dirs, tmp_path, capsys):
    from plumbing.cli import main

    weights = tmp_path / "my-weights"
    weights.mkdir()
    (weights / "consolidated.00.pth").write_text("a download")
    assert main(["build-standin", "--model", "Llama-3.2-1B", "--out", str(weights)]) == 2
    assert "is not a stand-in" in capsys.readouterr().err and (weights / "consolidated.00.pth").read_text() == "a download"
    two_layers = llama32_dirs["Llama-3.2-1B", "meta"]
    assert main(["build-standin", "--model", "Llama3.2-3B", "--out", str(two_layers)]) == 2  # Meta's id for 3B
    assert "holds a stand-in of Llama-3.2-1B with 2 layers, not Llama-3.2-3B with 28" in capsys.readouterr().err
    assert main(["build-standin", "--model", "Llama3.2-1B", "--out", str(two_layers), "--layers", "2"]) == 0
    assert "already built" in capsys.readouterr().out


@pytest.mark.slow
def test_the_run_metadata_and_the_site_banner_name_the_models_shapes(llama32_dirs):
    from tools import run_notebooks
    from tools.book import weights_banner

    run = run_notebooks.run_metadata({"LLAMA3_DIR": str(llama32_dirs["Llama-3.2-1B", "meta"])})
    assert run["weights"] == "standin" and run["standin_model"] == "Llama 3.2 1B (2 layers)"
    assert "standin_model" not in run_notebooks.run_metadata({})  # the committed outputs' stand-in: as before

    for lang in ("en", "zh_CN"):
        text = weights_banner.BANNERS[lang]["standin"][1]
        assert "Llama 3.2 1B (2 layers)" in text.format(model=run["standin_model"], description="")
        assert "Meta-Llama-3-8B" not in text.format(model=run["standin_model"], description="")
