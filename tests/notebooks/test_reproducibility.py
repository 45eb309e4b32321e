"""The committed outputs reproduce on every CPU path this machine can emulate, and the real-weights test mode works.

nbval compares every output text exactly. The last bits of bf16 matrix products and float reductions depend on
the kernels a CPU runs, so the notebooks print only what is the same on every CPU path, and these tests re-run
strict nbval over a matrix of paths emulated on this one machine:

- ``ATEN_CPU_CAPABILITY`` (PyTorch's own vectorised kernels): ``default``, ``avx2``, ``avx512``;
- ``ONEDNN_MAX_CPU_ISA`` (the oneDNN library behind bf16 matrix products, which ``ATEN_CPU_CAPABILITY`` does not
  reach): ``AVX2`` (no oneDNN bf16 kernels: PyTorch's own), ``AVX512_CORE``, ``AVX512_CORE_BF16``,
  ``AVX512_CORE_AMX``;
- 1 and 2 threads (``OMP_NUM_THREADS``).

Each value is tried only where this CPU has the instructions. ``make test`` runs :data:`REPRESENTATIVE` beside its
own run on the machine's defaults; ``make test-matrix`` (``LLAMA3_TEST_MATRIX=full``) runs every combination.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

import plumbing

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [str(p) for p in plumbing.series_notebooks()]
pytestmark = pytest.mark.notebook

#: oneDNN's ISA caps, with the CPU flags each needs and the words oneDNN's verbose line names it by ("" : no oneDNN bf16).
ONEDNN_ISAS = {
    "AVX2": ({"avx2", "fma"}, ""),
    "AVX512_CORE": ({"avx512f", "avx512bw", "avx512vl", "avx512dq"}, "AVX512BW"),
    "AVX512_CORE_BF16": ({"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16"}, "bfloat16 support"),
    "AVX512_CORE_AMX": ({"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16", "amx_bf16", "amx_tile"}, "AMX"),
}
#: PyTorch's kernel families, with the CPU flags each needs.
ATEN_CAPABILITIES = {"default": set(), "avx2": {"avx2", "fma"}, "avx512": {"avx512f", "avx512bw", "avx512vl", "avx512dq"}}
THREADS = (1, 2)
#: The part of the matrix ``make test`` runs beside its own run on the machine's defaults: a laptop without AVX-512
#: (PyTorch's AVX2 kernels, no oneDNN bf16 kernels), on two threads.
REPRESENTATIVE = [("avx2", "AVX2", 2)]


def cpu_flags() -> set[str]:
    """The CPU's feature flags from Linux's /proc/cpuinfo (empty elsewhere: only the default kernels are tried)."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return set()
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def supported_matrix() -> list[tuple[str, str, int]]:
    """Every (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA, threads) this CPU can run."""
    flags = cpu_flags()
    caps = [c for c, need in ATEN_CAPABILITIES.items() if need <= flags]
    isas = [i for i, (need, _) in ONEDNN_ISAS.items() if need <= flags]
    return list(itertools.product(caps, isas, THREADS))


def matrix() -> list[tuple[str, str, int]]:
    """The combinations to run: all with ``LLAMA3_TEST_MATRIX=full``, else the representative ones this CPU supports."""
    supported = supported_matrix()
    if os.environ.get("LLAMA3_TEST_MATRIX") == "full":
        return supported
    return [combo for combo in REPRESENTATIVE if combo in supported]


def clean_env(**extra) -> dict:
    """The environment without the series' variables and without any CPU-path setting, plus ``extra``."""
    return plumbing.clean_environ("ATEN_CPU_CAPABILITY", "ONEDNN_", "OMP_NUM_THREADS", "MKL_NUM_THREADS", **extra)


def run_pytest(args, env, timeout=1200):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


PROBE = """import torch
a, b = torch.ones(17, 256, dtype=torch.bfloat16), torch.ones(64, 256, dtype=torch.bfloat16)
(a @ b.T).sum()
print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads())
"""


def test_the_matrix_is_not_empty():
    assert supported_matrix(), "no CPU path to try: every strict nbval run would be skipped"


@pytest.mark.parametrize(
    "capability, isa, threads", matrix(), ids=[f"aten-{c}-onednn-{i}-{t}thread{'s' * (t > 1)}" for c, i, t in matrix()]
)
def test_strict_nbval_on_an_emulated_cpu(capability, isa, threads, standin_dir):
    env = clean_env(ATEN_CPU_CAPABILITY=capability, ONEDNN_MAX_CPU_ISA=isa, OMP_NUM_THREADS=str(threads))
    probe = subprocess.run([sys.executable, "-c", PROBE], env={**env, "ONEDNN_VERBOSE": "1"}, capture_output=True, text=True, timeout=120)
    isa_lines = [line for line in probe.stdout.splitlines() if ",info,cpu,isa:" in line]
    words = ONEDNN_ISAS[isa][1]
    assert (words in isa_lines[0]) if words else not any("AVX-512" in line or "AMX" in line for line in isa_lines), isa_lines
    assert probe.stdout.splitlines()[-1].split() == [capability.upper(), str(threads)], probe.stdout + probe.stderr
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
    flag = subprocess.run(
        [sys.executable, "-m", "plumbing", "nbval-flag"], env=env, capture_output=True, text=True, timeout=120
    ).stdout.strip()
    assert flag == "--nbval-lax"
    # The notebooks whose code takes another branch on real weights (what they print for the stand-in); the others
    # run the same code in both modes, which the strict run has just executed.
    branching = [p for p in NOTEBOOKS if "checkpoint.source.standin" in Path(p).read_text(encoding="utf-8")]
    assert branching, "no notebook prints differently on real weights: which ones does this test run?"
    out = run_pytest([flag, "--nbval-current-env", *branching], env)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    # The tagged cells were compared: at least one per notebook.
    import nbformat

    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert any("nbval-check-output" in c.metadata.get("tags", []) for c in nb.cells), path


# --------------------------------------------------------------------------- a long prompt on other CPU paths

#: Llama 3.2 1B's params.json, one layer (the notebook reads layer 0 only); factor 32 comes with the Hugging Face
#: config, so this Meta-format folder rotates with Meta's hard-coded factor 8.
LLAMA32_1B_ONE_LAYER = {**plumbing.MODELS["Llama-3.2-1B"], "n_layers": 1}
LONG_PROMPT = " ".join(["the answer to the ultimate question of life, the universe, and everything is forty-two;"] * 22)


@pytest.fixture(scope="module")
def llama32_1b_dir(tmp_path_factory):
    import references

    return references.write_small_checkpoint(tmp_path_factory.mktemp("llama32_1b"), LLAMA32_1B_ONE_LAYER)


@pytest.mark.parametrize("isa", ["AVX2", "AVX512_CORE"])
def test_long_prompt_on_llama32_1b_shapes_under_other_kernels(llama32_1b_dir, tmp_path, isa):
    """A 300-word prompt on a Llama 3.2 1B-shaped checkpoint runs to the end with oneDNN capped at an older CPU's ISA:
    no check claims bits that another kernel may round differently (the Hugging Face column check once did)."""
    from tools.run_notebooks import execute_notebook

    if not ONEDNN_ISAS[isa][0] <= cpu_flags():
        pytest.skip(f"this CPU lacks the instructions of {isa}")
    assert len(LONG_PROMPT.split()) >= 300
    env = plumbing.clean_environ(
        "ONEDNN_", LLAMA3_DIR=str(llama32_1b_dir), LLAMA3_PROMPT=LONG_PROMPT, LLAMA3_EXPORT_DIR=str(tmp_path), ONEDNN_MAX_CPU_ISA=isa
    )
    execute_notebook(plumbing.series_notebooks()[3], None, env=env, progress=False)
    assert (tmp_path / "04_rope.safetensors").is_file()


def test_a_run_in_this_process_exports_what_a_kernel_exports(run_notebook, small_dir, tmp_path):
    """The tests' in-process runs (tests/inprocess.py) export what a Jupyter kernel's run exports: the same tensors,
    bit for bit, and the same metadata (safetensors writes the metadata's keys in an order that changes from one
    process to the next, so the files' bytes are not compared)."""
    from safetensors import safe_open

    from tools.run_notebooks import execute_notebook

    def contents(path):
        with safe_open(str(path), framework="pt") as f:
            return f.metadata(), {name: f.get_tensor(name) for name in f.keys()}

    env = plumbing.clean_environ(LLAMA3_EXPORT_DIR=str(tmp_path), LLAMA3_DIR=str(small_dir))
    execute_notebook(plumbing.series_notebooks()[6], None, env=env, progress=False)
    kernel_metadata, kernel = contents(tmp_path / "07_next_token.safetensors")
    metadata, ours = contents(run_notebook("07", llama3_dir=small_dir, path=True))
    assert metadata == kernel_metadata and set(ours) == set(kernel)
    assert all(plumbing.same_bits(ours[name], kernel[name]) for name in kernel), "a tensor differs"
