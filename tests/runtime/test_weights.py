"""Finding, validating and loading weights: Meta format, Hugging Face formats, the stand-in, bad input."""

from __future__ import annotations

import hashlib
import json
import shutil
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import plumbing
from plumbing import Llama3Error
from references import hf_config
from references import hf_permute_by_index as permute_by_index

ROOT = Path(__file__).resolve().parents[2]
LAYER0 = ["tok_embeddings.weight"] + [
    k for k in plumbing.ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS).expected_shapes() if k.startswith("layers.0.")
]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    return h.hexdigest()


@pytest.fixture(scope="module")
def meta(standin_dir):
    return plumbing.open_checkpoint(standin_dir)


@pytest.fixture(scope="module")
def hf_dir(hf_standin_dir):
    return hf_standin_dir


# --------------------------------------------------------------------------- formats


def test_meta_format_loads_layer0_in_bf16(meta):
    assert meta.source.format == "meta" and meta.source.standin
    assert "synthetic stand-in" in meta.description
    p = meta.params
    assert (p.dim, p.n_heads, p.n_kv_heads, p.head_dim, p.n_rep) == (4096, 32, 8, 128, 4)
    assert meta.shape("tok_embeddings.weight") == (128256, 4096)
    assert meta.shape("layers.0.attention.wk.weight") == (1024, 4096)
    for name in LAYER0:
        assert meta.dtype(name) == torch.bfloat16
        assert meta.get(name).dtype == torch.bfloat16


def test_a_checkpoint_read_in_float32_converts_each_tensor_once(meta):
    """``Checkpoint.to`` (the real-model cells' SmolLM2 in float32): the same values, each converted once and kept."""
    as32 = meta.to(torch.float32)
    first = as32.get("layers.0.attention_norm.weight")
    assert first.dtype == torch.float32 and as32.dtype("norm.weight") == torch.float32
    assert torch.equal(first, meta.get("layers.0.attention_norm.weight").float())
    assert as32.get("layers.0.attention_norm.weight") is first  # a generation loop reads every weight at every step


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
def test_meta_format_is_memory_mapped(meta):
    """The tensors are views of a file mapping: reading one does not copy the 1 GB table."""
    emb = meta.get("tok_embeddings.weight")
    storage = emb.untyped_storage()
    assert storage.nbytes() >= emb.numel() * 2
    maps = Path("/proc/self/maps").read_text()
    assert "consolidated.00.pth" in maps


def test_llama3_dir_standin_equals_default(standin_dir, monkeypatch):
    monkeypatch.setenv("LLAMA3_DIR", "data/standin")  # relative to the repository, as in README
    monkeypatch.chdir(ROOT / "notebooks")
    a = plumbing.open_checkpoint()
    monkeypatch.delenv("LLAMA3_DIR")
    b = plumbing.open_checkpoint()
    assert a.description == b.description and a.params == b.params
    assert torch.equal(a.get("layers.0.attention.wq.weight"), b.get("layers.0.attention.wq.weight"))


def test_hf_permutation_matches_the_conversion(meta):
    wq = meta.get("layers.0.attention.wq.weight")
    assert torch.equal(plumbing.hf_permute(wq, 32), permute_by_index(wq, 32))
    assert torch.equal(plumbing.hf_unpermute(plumbing.hf_permute(wq, 32), 32), wq)


def test_hf_safetensors_gives_bitwise_identical_tensors(meta, hf_dir):
    hf = plumbing.open_checkpoint(hf_dir)
    assert hf.source.format == "hf" and not hf.source.standin
    assert "Hugging Face" in hf.description
    assert hf.params.dim == meta.params.dim and hf.params.ffn_hidden_dim == 14336
    assert hf.params.rope_theta == 500000.0 and not hf.params.use_scaled_rope
    assert sorted(hf.keys()) == sorted(LAYER0)
    for name in LAYER0:
        assert torch.equal(hf.get(name), meta.get(name)), name


def test_hf_root_with_original_folder_reads_meta_format(standin_dir, tmp_path):
    (tmp_path / "original").mkdir()
    for f in ("params.json", "consolidated.00.pth", "tokenizer.model"):
        (tmp_path / "original" / f).symlink_to(standin_dir / f)
    (tmp_path / "config.json").write_text("{}")  # the HF root also has a config, ignored for original/
    ck = plumbing.open_checkpoint(tmp_path)
    assert ck.source.format == "meta" and ck.source.folder.name == "original"
    assert "Meta format" in ck.description  # no stand-in marker: reported as a real checkpoint
    assert ck.source.tokenizer_path.name == "tokenizer.model"


def test_llama31_hf_config_sets_use_scaled_rope():
    raw = hf_config(plumbing.ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS))
    raw["rope_scaling"] = {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    }
    p = plumbing.params_from_hf_config(raw)
    assert p.use_scaled_rope and p.context_length == 131072


# --------------------------------------------------------------------------- the stand-in


@pytest.mark.slow  # builds the 2.1 GB stand-in once more, to compare with the one make built
def test_standin_is_deterministic_and_atomic(tmp_path, monkeypatch):
    a = plumbing.ensure_standin()  # built by an earlier process (make standin), or now
    b = plumbing.build_standin(tmp_path / "b", progress=False)
    names = sorted(p.name for p in b.iterdir())
    assert names == sorted(["params.json", "consolidated.00.pth", "tokenizer.model", plumbing.STANDIN_MARKER])
    for n in names:
        assert sha256(a / n) == sha256(b / n), n
    assert json.loads((a / "params.json").read_text()) == plumbing.LLAMA3_8B_PARAMS


@pytest.mark.slow
def test_interrupted_standin_build_leaves_nothing_loadable(tmp_path, monkeypatch):
    def interrupted_save(obj, f, *args, **kwargs):
        f.write(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt

    # What is saved does not matter here, only that the save is cut off: a small tensor instead of 2.1 GB of them.
    monkeypatch.setattr(plumbing.standin, "standin_tensors", lambda params, seed: {"tok_embeddings.weight": torch.zeros(2, 2)})
    monkeypatch.setattr(torch, "save", interrupted_save)
    with pytest.raises(KeyboardInterrupt):
        plumbing.build_standin(tmp_path / "s", progress=False)
    assert list((tmp_path / "s").iterdir()) == []
    assert not plumbing.standin_complete(tmp_path / "s")


def test_standin_build_on_a_full_disk_says_so_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(plumbing.standin, "standin_tensors", lambda params, seed: {"tok_embeddings.weight": torch.zeros(1000, 1000)})
    monkeypatch.setattr(plumbing.standin.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9 - 10**6, 10**6))
    with pytest.raises(Llama3Error, match=r"needs 0\.00 GB .* has 0\.00 GB free: free some space"):
        plumbing.build_standin(tmp_path / "s", progress=False)
    assert list((tmp_path / "s").iterdir()) == []


# --------------------------------------------------------------------------- bad input


def copy_standin(standin_dir: Path, dest: Path, skip=()) -> Path:
    dest.mkdir()
    for f in ("params.json", "consolidated.00.pth", "tokenizer.model"):
        if f not in skip:
            (dest / f).symlink_to(standin_dir / f)
    return dest


def test_missing_llama3_dir(monkeypatch):
    monkeypatch.setenv("LLAMA3_DIR", "/no/such/folder")
    with pytest.raises(Llama3Error, match="does not exist.*unset it to use the synthetic stand-in"):
        plumbing.open_checkpoint()


def test_folder_without_params_json(standin_dir, tmp_path):
    d = copy_standin(standin_dir, tmp_path / "w", skip=("params.json",))
    with pytest.raises(Llama3Error, match="no params.json"):
        plumbing.open_checkpoint(d)


def test_folder_without_checkpoint(standin_dir, tmp_path):
    d = copy_standin(standin_dir, tmp_path / "w", skip=("consolidated.00.pth",))
    with pytest.raises(Llama3Error, match="no consolidated.00.pth"):
        plumbing.open_checkpoint(d)


def test_empty_folder(tmp_path):
    with pytest.raises(Llama3Error, match="no params.json.*no config.json"):
        plumbing.open_checkpoint(tmp_path)


def test_checkpoint_that_is_an_html_page(standin_dir, tmp_path):
    d = copy_standin(standin_dir, tmp_path / "w", skip=("consolidated.00.pth",))
    (d / "consolidated.00.pth").write_text("<!DOCTYPE html><html><body>Access denied</body></html>")
    with pytest.raises(Llama3Error, match="HTML page.*download failed"):
        plumbing.open_checkpoint(d)


def test_truncated_checkpoint(standin_dir, tmp_path):
    d = copy_standin(standin_dir, tmp_path / "w", skip=("consolidated.00.pth",))
    with open(standin_dir / "consolidated.00.pth", "rb") as src, open(d / "consolidated.00.pth", "wb") as dst:
        dst.write(src.read(50_000_000))
    with pytest.raises(Llama3Error, match="truncated"):
        plumbing.open_checkpoint(d)


class RunsCode:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_checkpoint_whose_pickle_runs_code_is_refused(standin_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    d = copy_standin(standin_dir, tmp_path / "w", skip=("consolidated.00.pth",))
    torch.save({"tok_embeddings.weight": torch.zeros(2, 2), "evil": RunsCode()}, d / "consolidated.00.pth")
    with pytest.raises(Llama3Error, match="Refused to load.*run code"):
        plumbing.open_checkpoint(d)
    assert not (tmp_path / "pwned").exists()


def test_params_json_that_disagrees_with_the_shapes(standin_dir, tmp_path):
    d = copy_standin(standin_dir, tmp_path / "w", skip=("params.json",))
    (d / "params.json").write_text(json.dumps({**plumbing.LLAMA3_8B_PARAMS, "n_kv_heads": 4}))
    with pytest.raises(Llama3Error, match=r"layers\.0\.attention\.wk\.weight should have shape \[512, 4096\].*holds \[1024, 4096\]"):
        plumbing.open_checkpoint(d)


def test_params_json_that_is_not_json(standin_dir, tmp_path):
    d = copy_standin(standin_dir, tmp_path / "w", skip=("params.json",))
    (d / "params.json").write_text("{dim: 4096")
    with pytest.raises(Llama3Error, match="not valid JSON"):
        plumbing.open_checkpoint(d)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc/self/status")
def test_memory_map_refused_by_the_system(standin_dir):
    """A real refusal: the address space is capped below the checkpoint's size (like `ulimit -v`)."""
    code = f"""
import resource, re, sys
import torch, plumbing
vm = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 300 * 2**20, resource.RLIM_INFINITY))
try:
    plumbing.open_checkpoint({str(standin_dir)!r})
except plumbing.Llama3Error as e:
    print(e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "refused to memory-map" in out.stdout and "ulimit -v" in out.stdout, out.stdout + out.stderr
    assert "Traceback" not in out.stderr


# --------------------------------------------------------------------------- command line


def test_check_weights_command_reports_format(standin_dir):
    out = subprocess.run(
        [sys.executable, "-m", "plumbing", "check-weights"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LLAMA3_DIR": ""},
    )
    assert out.returncode == 0, out.stderr
    assert "synthetic stand-in" in out.stdout and "14336" in out.stdout and "17 tokens" in out.stdout
    assert str(ROOT) not in out.stdout


def test_check_weights_command_error_is_one_line(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "plumbing", "check-weights"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LLAMA3_DIR": str(tmp_path / "x")},
    )
    assert out.returncode == 2
    assert out.stderr.startswith("error: LLAMA3_DIR=") and "Traceback" not in out.stderr


def test_finding_weights_never_builds_the_standin(tmp_path, monkeypatch):
    """Resolving, finding or opening weights with the stand-in missing is a clear error, and builds nothing."""
    import plumbing.weights

    target = tmp_path / "data" / "standin"
    monkeypatch.setattr(plumbing.weights, "STANDIN_DIR", target)
    monkeypatch.delenv("LLAMA3_DIR", raising=False)
    assert plumbing.resolve_dir(str(target)) is None  # LLAMA3_DIR naming the stand-in means the stand-in
    for call in (plumbing.find_weights, plumbing.open_checkpoint):
        with pytest.raises(Llama3Error, match="stand-in is not built yet.*make run"):
            call()
    assert not target.exists()


def test_setup_builds_a_missing_standin_and_says_so(monkeypatch, capsys, standin_dir):
    """``plumbing.setup()`` is the one call that builds the stand-in, with a message and a progress bar."""
    import plumbing.standin

    calls = []
    monkeypatch.setattr(plumbing.standin, "standin_complete", lambda *a, **k: bool(calls))
    monkeypatch.setattr(plumbing.standin, "build_standin", lambda *a, **k: calls.append(k))
    monkeypatch.delenv("LLAMA3_DIR", raising=False)
    inputs = plumbing.setup()
    assert calls == [{"progress": True}]
    assert "building the synthetic stand-in" in capsys.readouterr().err
    assert inputs.checkpoint.source.standin and inputs.params.n_kv_heads == 8


def test_unknown_command_is_one_line():
    out = subprocess.run([sys.executable, "-m", "plumbing", "frobnicate"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.startswith("error: unknown command 'frobnicate'")
    assert len(out.stderr.strip().splitlines()) == 1
