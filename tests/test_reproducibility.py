"""The committed outputs reproduce under every CPU kernel family, and the real-weights test mode works.

nbval compares every output text exactly. bf16 matmuls and float reductions may give different
last bits under different ATen CPU kernels, so the notebooks print only what is stable; these
tests re-run strict nbval with each kernel family this CPU supports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import plumbing

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = [str(p) for p in plumbing.series_notebooks()]
pytestmark = pytest.mark.notebook


def cpu_flags() -> set[str]:
    """The CPU's feature flags from Linux's /proc/cpuinfo (empty elsewhere: only the default kernels are tried)."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return set()
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def supported_capabilities() -> list[str]:
    """ATEN_CPU_CAPABILITY values torch can use here: default always; avx2 and avx512 when the CPU has them."""
    flags = cpu_flags()
    caps = ["default"]
    if {"avx2", "fma"} <= flags:
        caps.append("avx2")
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        caps.append("avx512")
    return caps


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLAMA3_", "ATEN_CPU_CAPABILITY"))}
    env.update(extra)
    return env


def run_pytest(args, env, timeout=900):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("capability", supported_capabilities())
def test_strict_nbval_under_cpu_capability(capability, standin_dir):
    env = clean_env(ATEN_CPU_CAPABILITY=capability)
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip().lower() == capability.lower(), probe.stdout + probe.stderr
    out = run_pytest(["--nbval", "--nbval-current-env", *NOTEBOOKS], env)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


@pytest.fixture(scope="module")
def fake_real_dir(tmp_path_factory, standin_dir) -> Path:
    """The stand-in's files without its marker: the notebooks treat it as a real Meta-format checkpoint."""
    d = tmp_path_factory.mktemp("real")
    for f in ("params.json", "consolidated.00.pth", "tokenizer.model"):
        (d / f).symlink_to(standin_dir / f)
    return d


def test_strict_nbval_with_real_weights_stops_with_a_clear_message(fake_real_dir):
    out = run_pytest(["--nbval", "--nbval-current-env", NOTEBOOKS[0]], clean_env(LLAMA3_DIR=str(fake_real_dir)))
    assert out.returncode == 4
    text = out.stdout + out.stderr
    assert "Strict nbval" in text and "--nbval-lax" in text and "make test" in text
    assert len(text.splitlines()) < 15  # a message, not a wall of diff


def test_real_weights_mode_compares_weights_independent_cells(fake_real_dir):
    env = clean_env(LLAMA3_DIR=str(fake_real_dir))
    flag = subprocess.run([sys.executable, "-m", "plumbing", "nbval-flag"],
                          env=env, capture_output=True, text=True, timeout=120).stdout.strip()
    assert flag == "--nbval-lax"
    out = run_pytest([flag, "--nbval-current-env", *NOTEBOOKS], env)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    # The tagged cells were compared: at least one per notebook.
    import nbformat

    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert any("nbval-check-output" in c.metadata.get("tags", []) for c in nb.cells), path
