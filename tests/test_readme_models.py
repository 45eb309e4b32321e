"""What both READMEs say about the models, the downloads and the Python version agrees with the code.

- The model table ("Which model to run" / 「选择哪个模型」) lists the four models of ``plumbing.MODELS`` with the parameter
  count, shapes, RoPE scaling and tied embeddings that :class:`plumbing.ModelParams` derives from their ``params.json``,
  and the bf16 download size (2 bytes a parameter). The measurement columns are only required to exist.
- Both READMEs give the ModelScope command that fetches only ``original/``, the Hugging Face mirror's endpoint,
  and the Chinese one the PyPI mirror; their Colab and Binder links use the address in ``pyproject.toml``.
- The Makefile refuses a Python older than 3.11 before creating ``.venv``, with a message naming 3.11: run against a
  fake interpreter that answers ``-c`` as Python 3.9 would, in a temporary ``VENV``, so nothing real is touched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import plumbing

ROOT = Path(__file__).resolve().parent.parent

#: per README: the model table's column headers and how a cell spells a value
TABLES = {
    "README.md": {
        "model": "model", "parameters": "parameters", "download": "download in bf16", "dim": "dim",
        "n_layers": "n_layers", "heads": "n_heads / n_kv_heads", "head_dim": "head_dim", "ffn": "FFN hidden size",
        "rope": "RoPE scaling", "tied": "tied embeddings",
        "measured": ("memory of 07 / 08: peak anon (peak RSS)", "time per notebook on the stand-in of that shape"),
        "none": "none", "factor": "factor {:g}", "yes": "yes", "no": "no",
    },
    "README.zh-CN.md": {
        "model": "模型", "parameters": "参数量", "download": "bf16 下载大小", "dim": "dim",
        "n_layers": "n_layers", "heads": "n_heads / n_kv_heads", "head_dim": "head_dim", "ffn": "FFN 隐藏层维度",
        "rope": "RoPE 缩放", "tied": "共享嵌入表",
        "measured": ("07 / 08 的内存：匿名内存峰值（RSS 峰值）", "每个笔记本在同形状替身权重上的耗时"),
        "none": "无", "factor": "因子 {:g}", "yes": "是", "no": "否",
    },
}
MODELSCOPE = 'modelscope download --model LLM-Research/Llama-3.2-1B --include "original/*" --local_dir'
HF_MIRROR = "HF_ENDPOINT=https://hf-mirror.com"
PYPI_MIRROR = ("pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple",
               "PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple make run")


def readme(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def model_table(text: str, first_header: str) -> tuple[list[str], list[list[str]]]:
    """The markdown table whose header row starts with ``first_header`` and has a ``dim`` column: headers, rows."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_header and "dim" in cells:
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return cells, rows
    raise AssertionError(f"no table with the headers {first_header!r} and 'dim'")


def expected_row(name: str, spell: dict) -> dict[str, str]:
    """What the table's cells must say for ``name``, derived from plumbing (``ModelParams`` of its ``params.json``)."""
    p = plumbing.ModelParams.from_dict(plumbing.MODELS[name])
    count = p.parameter_count()
    return {
        "parameters": f"{count:,}",
        "download": f"{2 * count / 1e9:.1f} GB",
        "dim": str(p.dim),
        "n_layers": str(p.n_layers),
        "heads": f"{p.n_heads} / {p.n_kv_heads}",
        "head_dim": str(p.head_dim),
        "ffn": str(p.ffn_hidden_dim),
        "rope": spell["factor"].format(p.rope_scaling["factor"]) if p.use_scaled_rope else spell["none"],
        "tied": spell["yes"] if p.tied_embeddings else spell["no"],
    }


@pytest.mark.parametrize("name", TABLES)
def test_model_table_agrees_with_plumbing(name):
    spell = TABLES[name]
    headers, rows = model_table(readme(name), spell["model"])
    for column in spell["measured"]:
        assert column in headers, f"{name}: the model table lacks the column {column!r}"
    listed = {}
    for row in rows:
        assert len(row) == len(headers), f"{name}: a row of the model table has {len(row)} cells, not {len(headers)}: {row}"
        repos = re.findall(r"`meta-llama/([^`]+)`", row[0])
        assert len(repos) == 1, f"{name}: the model cell {row[0]!r} should name one Hugging Face repository"
        listed[repos[0]] = dict(zip(headers, row))
        for column in spell["measured"]:  # measured by make bench-models, or the same as a model of the same shapes
            cell = listed[repos[0]][column]
            assert re.search(r"\d", cell) or "Meta-Llama-3-8B" in cell, f"{name}: {repos[0]}'s {column!r} is not filled in"
    assert sorted(listed) == sorted(plumbing.MODELS), f"{name}: the table lists {sorted(listed)}"
    assert [m for m in plumbing.MODELS if m in plumbing.TIED_EMBEDDINGS] == ["Llama-3.2-1B", "Llama-3.2-3B"]
    for model, cells in listed.items():
        for key, want in expected_row(model, spell).items():
            got = cells[spell[key]]
            assert got == want, f"{name}, {model}, column {spell[key]!r}: the README says {got!r}, plumbing gives {want!r}"


@pytest.mark.parametrize("name", TABLES)
def test_download_commands(name):
    text = readme(name)
    assert MODELSCOPE in text, f"{name} lacks the ModelScope command that downloads only original/"
    assert HF_MIRROR in text and 'hf download meta-llama/Llama-3.2-1B --include "original/*"' in text
    assert "llama-model download --source meta --model-id Llama3.2-1B --meta-url" in text
    if name == "README.zh-CN.md":
        for line in PYPI_MIRROR:
            assert line in text, f"{name} lacks the PyPI mirror line {line!r}"
        assert text.index("modelscope download") < text.index(HF_MIRROR) < text.index(".venv/bin/llama-model")


@pytest.mark.parametrize("name", TABLES)
def test_launch_links_use_the_address_in_pyproject(name):
    address = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    repo = address.rstrip("/").removeprefix("https://github.com/")
    text = readme(name)
    links = re.findall(r"colab\.research\.google\.com/github/([^/\s]+/[^/\s]+)/", text)
    links += re.findall(r"mybinder\.org/v2/gh/([^/\s]+/[^/\s]+)/", text)
    links += re.findall(r"git clone https://github\.com/([^/\s]+/[^/\s]+?)(?:\.git)?\s", text)
    assert len(links) >= 3 and set(links) == {repo}, f"{name}: launch links and clone to {set(links)}, pyproject.toml says {repo}"


def fake_python(folder: Path, version: tuple[int, int, int]) -> Path:
    """An executable that runs ``-c CODE`` as Python ``version`` would report itself (anything else fails)."""
    path = folder / f"python{version[0]}.{version[1]}"
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "if len(sys.argv) < 3 or sys.argv[1] != '-c':\n"
        f"    sys.exit('fake Python {version[0]}.{version[1]}: only -c is supported')\n"
        f"sys.version_info = ({version[0]}, {version[1]}, {version[2]}, 'final', 0)\n"
        "code, sys.argv = sys.argv[2], ['-c', *sys.argv[3:]]\n"
        "exec(compile(code, '<string>', 'exec'), {'__name__': '__main__'})\n",
        encoding="utf-8")
    path.chmod(0o755)
    return path


def make_setup(tmp_path: Path, python: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "LLAMA3_DIR")}
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "setup", f"PYTHON_SYS={python}",
                           f"VENV={tmp_path / 'venv'}"], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_refuses_an_old_python(tmp_path):
    old = make_setup(tmp_path, str(fake_python(tmp_path, (3, 9, 18))))
    assert old.returncode != 0
    assert "needs Python 3.11 or newer; found Python 3.9" in old.stderr, old.stderr
    assert "make PYTHON_SYS=/path/to/python3.11 run" in old.stderr and "brew install python@3.11" in old.stderr
    assert "==> creating" not in old.stdout  # stopped before anything was created
    missing = make_setup(tmp_path, str(tmp_path / "no-such-python"))
    assert missing.returncode != 0 and "3.11 or newer" in missing.stderr, missing.stderr
    assert not (tmp_path / "venv").exists()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_accepts_python_3_11_and_newer(tmp_path):
    """A new enough Python passes the check; the fake then fails at ``-m venv``, so no environment is built."""
    for version in ((3, 11, 2), (3, 13, 0)):
        new = make_setup(tmp_path, str(fake_python(tmp_path, version)))
        assert "3.11 or newer" not in new.stderr and "==> creating" in new.stdout, new.stdout + new.stderr
        assert new.returncode != 0 and "only -c is supported" in new.stderr
