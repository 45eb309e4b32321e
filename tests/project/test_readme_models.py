"""What both READMEs and the models pages say about the models, the downloads and the Python version agrees with the code.

- README.md stays short (at most 1,500 words), and every page of docs/ that either README links exists in both
  editions (``docs/<page>.md`` and ``docs/<page>.zh-CN.md``), each README linking its own language's file.
- The model table of docs/models.md and docs/models.zh-CN.md ("Which model to run" / 「选择哪个模型」) lists the four
  models of ``plumbing.MODELS`` with the parameter
  count, shapes, RoPE scaling and tied embeddings that :class:`plumbing.ModelParams` derives from their ``params.json``,
  and the bf16 download size (2 bytes a parameter). The measurement columns are only required to exist.
- Both models pages give the ModelScope command that fetches only ``original/``, the Hugging Face mirror's endpoint,
  and the Chinese README the PyPI mirror; the Colab and Binder links and the clone command of both platforms pages
  (docs/platforms.md, docs/platforms.zh-CN.md) use the address in ``pyproject.toml``.
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
from tools import site_stage

ROOT = Path(__file__).resolve().parents[2]

#: per models page (docs/models.md and its Chinese edition): the model table's column headers and how a cell spells a value
TABLES = {
    "docs/models.md": {
        "model": "model",
        "parameters": "parameters",
        "download": "download in bf16",
        "dim": "dim",
        "n_layers": "n_layers",
        "heads": "n_heads / n_kv_heads",
        "head_dim": "head_dim",
        "ffn": "FFN hidden size",
        "rope": "RoPE scaling",
        "tied": "tied embeddings",
        "measured": ("memory of 07 / 08: peak anon (peak RSS)", "time per notebook on the stand-in of that shape"),
        "none": "none",
        "factor": "factor {:g}",
        "yes": "yes",
        "no": "no",
    },
    "docs/models.zh-CN.md": {
        "model": "模型",
        "parameters": "参数量",
        "download": "bf16 下载大小",
        "dim": "dim",
        "n_layers": "n_layers",
        "heads": "n_heads / n_kv_heads",
        "head_dim": "head_dim",
        "ffn": "FFN 隐藏层维度",
        "rope": "RoPE 缩放",
        "tied": "共享嵌入表",
        "measured": ("07 / 08 的内存：匿名内存峰值（RSS 峰值）", "每个笔记本在同形状替身权重上的耗时"),
        "none": "无",
        "factor": "因子 {:g}",
        "yes": "是",
        "no": "否",
    },
}
MODELSCOPE = 'modelscope download --model LLM-Research/Llama-3.2-1B --include "original/*" --local_dir'
HF_MIRROR = "HF_ENDPOINT=https://hf-mirror.com"
PYPI_MIRROR = (
    "export PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple",
    "PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple make run",
    "export PIP_FIND_LINKS=https://mirrors.aliyun.com/pytorch-wheels/cpu/",
)  # PyTorch's CPU wheels


#: per edition: the models page, the platforms page and the README
PLATFORMS = {"docs/models.md": "docs/platforms.md", "docs/models.zh-CN.md": "docs/platforms.zh-CN.md"}
READMES = {"docs/models.md": "README.md", "docs/models.zh-CN.md": "README.zh-CN.md"}
#: README.md's length, in words as ``wc -w`` counts them: a short introduction; the rest lives on the pages of docs/
README_WORDS = 1500


def readme(name: str) -> str:
    """The text of a file of the repository (a README or a page of docs/)."""
    return (ROOT / name).read_text(encoding="utf-8")


def test_readme_is_short():
    words = len(readme("README.md").split())
    assert words <= README_WORDS, f"README.md has {words} words; at most {README_WORDS}: move details to a page of docs/"


@pytest.mark.parametrize("name", ["README.md", "README.zh-CN.md"])
def test_every_page_a_readme_links_exists_in_both_editions(name):
    """Every relative link of a README leads to a file that exists; every page of docs/ it links has its English and
    its Chinese file, and the README links its own language's one; every staged page of the site is linked."""
    text = readme(name)
    targets = [t.split("#")[0] for t in re.findall(r"(?<!!)\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", t)]
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"{name} links to files that do not exist: {missing}"
    pages = [t for t in targets if t.startswith("docs/")]
    zh = name == "README.zh-CN.md"
    for target in pages:
        page = Path(target).name.split(".")[0]
        assert page in site_stage.DOC_PAGES, f"{name} links {target}, which is no page of the site (site_stage.DOC_PAGES)"
        assert target == f"docs/{page}{'.zh-CN' if zh else ''}.md", f"{name} links {target}, not its own language's page"
        for edition in site_stage.EDITIONS.values():
            assert (ROOT / "docs" / getattr(edition, page)).is_file(), f"{target}: no {edition.language} edition"
    linked = {Path(t).name.split(".")[0] for t in pages}
    assert linked == set(site_stage.DOC_PAGES), f"{name} links the pages {sorted(linked)}, the site has {site_stage.DOC_PAGES}"


def model_table(text: str, first_header: str) -> tuple[list[str], list[list[str]]]:
    """The markdown table whose header row starts with ``first_header`` and has a ``dim`` column: headers, rows."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_header and "dim" in cells:
            rows = []
            for row in lines[i + 2 :]:
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
            assert got == want, f"{name}, {model}, column {spell[key]!r}: the page says {got!r}, plumbing gives {want!r}"


@pytest.mark.parametrize("name", TABLES)
def test_download_commands(name):
    text = readme(name)
    assert MODELSCOPE in text, f"{name} lacks the ModelScope command that downloads only original/"
    assert HF_MIRROR in text and 'hf download meta-llama/Llama-3.2-1B --include "original/*"' in text
    assert "llama-model download --source meta --model-id Llama3.2-1B --meta-url" in text
    if name == "docs/models.zh-CN.md":
        for line in PYPI_MIRROR:
            assert line in readme(READMES[name]), f"{READMES[name]} lacks the PyPI mirror line {line!r}"
        assert text.index("modelscope download") < text.index(HF_MIRROR) < text.index(".venv/bin/llama-model")


@pytest.mark.parametrize("name", TABLES)
def test_launch_links_use_the_address_in_pyproject(name):
    address = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    repo = address.rstrip("/").removeprefix("https://github.com/")
    text = readme(PLATFORMS[name])
    links = re.findall(r"colab\.research\.google\.com/github/([^/\s]+/[^/\s]+)/", text)
    links += re.findall(r"mybinder\.org/v2/gh/([^/\s]+/[^/\s]+)/", text)
    links += re.findall(r"git clone https://github\.com/([^/\s]+/[^/\s]+?)(?:\.git)?\s", text)
    assert len(links) >= 3 and set(links) == {repo}, (
        f"{PLATFORMS[name]}: launch links and clone to {set(links)}, pyproject.toml says {repo}"
    )


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
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def make_setup(tmp_path: Path, python: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "LLAMA3_DIR")}
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "setup", f"PYTHON_SYS={python}", f"VENV={tmp_path / 'venv'}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


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
