"""Exporting result tensors (plumbing.export) and running the notebooks (tools/run_notebooks.py): one clear error,
nothing stale or half-written left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import plumbing
from plumbing import Llama3Error

ROOT = Path(__file__).resolve().parents[2]


def test_export_writes_readable_labelled_files(tmp_path, monkeypatch):
    from safetensors import safe_open

    monkeypatch.setenv("LLAMA3_EXPORT_DIR", str(tmp_path / "out"))
    monkeypatch.delenv("LLAMA3_DIR", raising=False)
    path = plumbing.export("x.safetensors", {"t": torch.arange(3)})
    assert path.stat().st_mode & 0o044  # readable by others, as the user's umask allows
    with safe_open(str(path), framework="pt") as f:
        assert "synthetic stand-in" in f.metadata()["weights"]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["x.safetensors"]  # no temporary file left


def test_export_folder_that_is_a_file(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("LLAMA3_EXPORT_DIR", str(tmp_path / "afile"))
    with pytest.raises(Llama3Error, match="is a file, not a folder"):
        plumbing.export("x.safetensors", {"t": torch.arange(3)})


@pytest.mark.notebook
def test_failed_run_reports_one_line_and_leaves_no_stale_results(tmp_path):
    """`make run` with bad weights: one message, and build/ keeps no result from an earlier run."""
    out = tmp_path / "build"
    out.mkdir()
    stale = out / "02_embedding_lookup.ipynb"
    stale.write_text("{}")
    env = {**os.environ, "LLAMA3_DIR": str(tmp_path)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.run_notebooks",
            "--out",
            str(out),
            str(ROOT / "notebooks" / "02_embedding_lookup.ipynb"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert run.returncode == 1
    assert "02_embedding_lookup.ipynb stopped: Llama3Error:" in run.stderr and "Traceback" not in run.stderr
    assert not stale.exists()


@pytest.mark.notebook
def test_interrupted_run_leaves_no_stale_results(tmp_path):
    """Ctrl-C during `make run`: one line, exit status 130, and build/ keeps no earlier result of the notebooks not yet run."""
    import signal
    import time

    import psutil

    out = tmp_path / "build"
    out.mkdir()
    names = ["01_tokenization.ipynb", "02_embedding_lookup.ipynb"]
    for name in names:
        (out / name).write_text("{}")  # results of an earlier run
    env = plumbing.clean_environ()
    run = subprocess.Popen(
        [sys.executable, "-m", "tools.run_notebooks", "--out", str(out), *[str(ROOT / "notebooks" / n) for n in names]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 120
    while not psutil.Process(run.pid).children() and time.monotonic() < deadline:  # wait for the first kernel
        time.sleep(0.1)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr[-2000:]
    assert "interrupted while running 01_tokenization.ipynb" in stderr
    assert not any((out / n).exists() for n in names)


def test_export_to_a_full_disk_is_one_clear_error(tmp_path, monkeypatch):
    """safetensors reports a full disk with its own exception type: it becomes a Llama3Error, and no file is left."""
    import safetensors.torch
    from safetensors import SafetensorError

    def full_disk(*args, **kwargs):
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(safetensors.torch, "save_file", full_disk)
    monkeypatch.setenv("LLAMA3_EXPORT_DIR", str(tmp_path))
    monkeypatch.delenv("LLAMA3_DIR", raising=False)
    with pytest.raises(Llama3Error, match="Cannot write the export .*No space left on device"):
        plumbing.export("x.safetensors", {"t": torch.zeros(3)})
    assert list(tmp_path.iterdir()) == []
