"""The one list of notebooks: a new notebooks/NN_*.ipynb is run, tested and exported with no other edit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import plumbing

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def copied_notebook(tmp_path):
    """notebooks/99_copy.ipynb, a copy of notebook 01, in a copy of the repository's files (its data/ a link to ours):
    the checkout the other tests read keeps its eight notebooks, also while this test runs beside them."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    if not listed:
        pytest.skip("not a git checkout: the copy is made from git ls-files")
    repo = tmp_path / "repo"
    for name in listed.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    (repo / "data").symlink_to(ROOT / "data", target_is_directory=True)
    dest = repo / "notebooks" / "99_copy.ipynb"
    shutil.copyfile(plumbing.series_notebooks()[0], dest)
    return dest


def run(args: list[str], repo: Path) -> subprocess.CompletedProcess:
    env = plumbing.clean_environ(PYTHONPATH=str(repo / "notebooks"))  # the copy's package, which globs the copy's notebooks
    return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.notebook
def test_a_new_notebook_needs_no_other_edit(copied_notebook):
    name, repo = copied_notebook.name, copied_notebook.parent.parent
    last = run([sys.executable, "-c", "import plumbing; print(plumbing.series_notebooks()[-1])"], repo)
    assert last.stdout.strip() == str(copied_notebook), last.stdout + last.stderr
    # make run executes it and make test gives it to strict nbval (the Makefile reads the same glob).
    for target in ("run", "test"):
        dry = run(["make", "-n", target], repo)
        assert f"notebooks/{name}" in dry.stdout, dry.stdout[-2000:]
    # Strict nbval passes on it ...
    nbval = run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval", "--nbval-current-env", f"notebooks/{name}"], repo
    )
    assert nbval.returncode == 0, nbval.stdout[-3000:]
    # ... and the hygiene test checks it.
    hygiene = run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", "tests/notebooks/test_hygiene.py"], repo
    )
    assert f"[{copied_notebook.stem}]" in hygiene.stdout, hygiene.stdout[-2000:]
