"""Gradescope's autograder bundle (tools/gradescope.py, ``make gradescope``) and its results (grader.gradescope).

The bundle holds setup.sh and run_autograder (executable) at its root, the grader and the student edition where
the grader finds them, and no solution, test or guide. Its own run_autograder, on the bundle's own package, writes a
results.json in Gradescope's format: full marks for a solved notebook (renamed), none for the blank one, and 0 with a
message for a submission without a notebook of the series.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from tools import gradescope
import plumbing
from grader.gradebook import hints_for
from grader.gradescope import step_output
from grader.grading import Result, solution_region
from grader.hints import HINTS
from grader.steps import STEPS

ROOT = Path(__file__).resolve().parents[2]
NAMES = {p.name for p in plumbing.series_notebooks()}
#: The keys Gradescope's autograder specification gives results.json and each of its tests.
RESULT_KEYS = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags", "visibility", "extra_data"}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope") / "out"
    assert gradescope.main([str(out)]) == 0
    assert [p.name for p in out.iterdir()] == [gradescope.NAME], "a temporary file was left behind"
    return out / gradescope.NAME


# --------------------------------------------------------------------------- what the bundle holds


def test_bundle_holds_the_scripts_the_grader_and_the_student_edition(bundle):
    with zipfile.ZipFile(bundle) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        names = list(infos)
        assert names[:2] == ["setup.sh", "run_autograder"]
        for script in names[:2]:
            mode = infos[script].external_attr >> 16
            assert stat.S_ISREG(mode) and mode & 0o111 == 0o111, f"{script} is not executable in the zip"
            assert zf.read(script).startswith(b"#!/usr/bin/env bash\n")
        assert {n for n in names if "/" not in n} == {"setup.sh", "run_autograder", "pyproject.toml", "requirements.lock", "LICENSE"}
        for folder in ("plumbing", "grader"):  # the two packages, whole
            package = ROOT / "notebooks" / folder
            assert {n.removeprefix(f"notebooks/{folder}/") for n in names if n.startswith(f"notebooks/{folder}/")} == {
                p.relative_to(package).as_posix()
                for p in package.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
            }
        assert "notebooks/grader/gradescope.py" in names and "notebooks/grader/steps/n03_rmsnorm.py" in names
        notebooks = {n.removeprefix("notebooks/") for n in names if n.startswith("notebooks/") and n.endswith(".ipynb")}
        assert notebooks == NAMES, "the student edition, in English only, at notebooks/NN_*.ipynb"
        for name in sorted(notebooks):  # the student edition: every graded step is a stub
            cells = {c.id: c for c in nbformat.reads(zf.read(f"notebooks/{name}").decode(), as_version=4).cells}
            for s in STEPS.get(name[:2], []):
                region, _, _ = solution_region(cells[s.cell])
                assert region.endswith("raise NotImplementedError()"), (name, s.grade_id)
        for name in names:
            parts = set(name.split("/"))
            assert not parts & {"tests", "docs", "tools", "student", "zh", "grading_cases", "data", ".venv", "__pycache__", ".github"}, name
    for script in ("setup.sh", "run_autograder"):  # bash reads both
        text = zipfile.ZipFile(bundle).read(script).decode()
        assert subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True).returncode == 0, script
    setup = zipfile.ZipFile(bundle).read("setup.sh").decode()
    for named in ("requirements.lock", "--editable .", "plumbing build-standin", "download.pytorch.org/whl/cpu"):
        assert named in setup, named
    assert "-m grader.gradescope" in zipfile.ZipFile(bundle).read("run_autograder").decode()


def test_a_path_ending_in_zip_and_what_is_refused(tmp_path, capsys):
    assert gradescope.main([str(tmp_path / "a" / "bundle.zip")]) == 0
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["bundle.zip"]
    (tmp_path / "file.txt").write_text("mine")
    (tmp_path / "folder.zip").mkdir()
    for out in ("file.txt", "folder.zip"):
        assert gradescope.main([str(tmp_path / out)]) == 2
        assert "error:" in capsys.readouterr().err
    assert (tmp_path / "file.txt").read_text() == "mine" and not any((tmp_path / "folder.zip").iterdir())
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "MAKEFLAGS")}
    result = subprocess.run(["make", "--no-print-directory", "gradescope"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 2 and "usage: make gradescope OUT=" in result.stderr


def test_a_failed_steps_output_has_the_graders_message_and_the_hints():
    failed = Result("03-inv-rms", "1/RMS and the divided rows", "failed", 0, 1, "inv_rms: 17 of 17 values differ")
    text = step_output(failed)
    assert text.startswith("failed\n") and "inv_rms: 17 of 17 values differ" in text and HINTS["03-inv-rms"][0] in text
    passed = Result("03-inv-rms", "1/RMS and the divided rows", "passed", 1, 1)
    assert step_output(passed) == "passed" and hints_for(failed)
    mean = Result("03-mean-square", "float32 rows and their mean square", "failed", 0, 1, "mean_square differs")
    assert "in the series' `03_rmsnorm.ipynb` and on the course site" in step_output(mean, series="03_rmsnorm.ipynb")


# --------------------------------------------------------------------------- run_autograder on the bundle's own package


@pytest.fixture(scope="module")
def autograder(bundle, tmp_path_factory, standin_dir):
    """``run(submission_files) -> results.json``: the bundle unpacked as Gradescope does, run by its run_autograder
    with its own package (this Python for its .venv, the stand-in for the one setup.sh builds)."""
    root = tmp_path_factory.mktemp("autograder")
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    python = root / "source" / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    env = plumbing.clean_environ(PYTHONPATH=str(root / "source" / "notebooks"), LLAMA3_DIR=str(standin_dir), AUTOGRADER_ROOT=str(root))
    where = "import plumbing, grader; print(plumbing.__file__); print(grader.__file__)"
    where = subprocess.run([str(python), "-c", where], env=env, capture_output=True, text=True)
    packages = [root / "source" / "notebooks" / name for name in ("plumbing", "grader")]
    assert [Path(f).parent for f in where.stdout.split()] == packages, where.stderr

    def run(files: dict[str, Path | None]) -> dict:
        submission, results = root / "submission", root / "results" / "results.json"
        subprocess.run(["rm", "-rf", str(submission), str(results.parent)], check=True)
        submission.mkdir()
        for name, source in files.items():
            (submission / name).parent.mkdir(parents=True, exist_ok=True)
            (submission / name).write_bytes(source.read_bytes() if source else b"notes\n")
        done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        data = json.loads(results.read_text(encoding="utf-8"))
        assert set(data) <= RESULT_KEYS and {"score", "tests", "output"} <= set(data)
        for test in data["tests"]:
            assert set(test) <= TEST_KEYS and test["status"] in ("passed", "failed"), test
            assert isinstance(test["score"], int) and isinstance(test["max_score"], int) and test["output"]
        assert data["score"] == sum(t["score"] for t in data["tests"])
        assert [p.name for p in results.parent.iterdir()] == ["results.json"], "a temporary file was left behind"
        return data

    return run


def step_names(number: str) -> list[str]:
    return [f"{s.grade_id}: {s.title}" for s in STEPS[number]]


@pytest.mark.notebook
def test_a_solved_notebook_renamed_gets_full_marks(autograder):
    data = autograder({"work/my rmsnorm (1).ipynb": ROOT / "notebooks" / "03_rmsnorm.ipynb"})
    assert [t["name"] for t in data["tests"]] == step_names("03")
    assert data["score"] == sum(s.points for s in STEPS["03"]) == sum(t["max_score"] for t in data["tests"]) > 0
    assert all(t["status"] == "passed" and t["output"] == "passed" for t in data["tests"])
    assert "work/my rmsnorm (1).ipynb: graded as 03_rmsnorm.ipynb" in data["output"]


@pytest.mark.notebook
def test_the_blank_notebook_gets_nothing_and_a_second_copy_is_named(autograder):
    blank = ROOT / "notebooks" / "student" / "03_rmsnorm.ipynb"
    data = autograder({"03_rmsnorm.ipynb": blank, "notebooks/zh/03_rmsnorm.ipynb": blank.parent / "zh" / blank.name})
    assert [t["name"] for t in data["tests"]] == step_names("03") and data["score"] == 0
    for test, s in zip(data["tests"], STEPS["03"]):
        assert test["status"] == "failed" and test["max_score"] == s.points
        assert test["output"].startswith("not attempted") and s.task.split("\n")[0] in test["output"]
    assert "notebooks/zh/03_rmsnorm.ipynb: not graded, 03_rmsnorm.ipynb is the same notebook" in data["output"]


@pytest.mark.notebook
def test_a_submission_without_a_notebook_of_the_series_gets_zero_and_a_message(autograder):
    data = autograder({"README.txt": None, "notes.ipynb": None})
    assert data["score"] == 0 and data["tests"] == []
    assert "No notebook of the series in the submission" in data["output"]
    assert "notes.ipynb: not graded" in data["output"]
