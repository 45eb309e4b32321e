"""The repository to create a GitHub Classroom assignment from (tools/classroom_template.py, ``make classroom-template``)
and ``make student``, which keeps a learner's work (tools/student.py).

The template holds the student edition where the grader finds it, the package, the workflow, a Makefile and a README,
and none of the maintainers' files; no graded step's solution line is in it. Graded with its own package, the blank
notebook gets no points and a solved one full marks, through the workflow's own commands.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from tools import classroom_template
from tools import interface
import plumbing
from tools import student
from grader.grading import solution_region
from grader.steps import STEPS

ROOT = Path(__file__).resolve().parents[2]
SERIES = plumbing.series_notebooks()
NAMES = {p.name for p in SERIES}
ALL_STEPS = [s for p in SERIES for s in STEPS.get(p.stem[:2], [])]
#: Solution lines the student edition shows outside its graded cells (the instructor guide, "What the grading is, and
#: is not"): (grade_id, notebook) -> where. Any other solution line in the template fails the test.
#: A later notebook's "story so far" shows an earlier notebook's steps (the student wrote them there); a notebook never
#: shows its own steps' code outside their cells (its deep dives, which do, stay in the series).
#: Shorter solution lines (``)``, ``h = x``) are too common to say anything.
SHORTEST = 12


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("classroom") / "assignment"
    out.mkdir()  # an empty folder is accepted
    assert classroom_template.main([str(out)]) == 0
    assert [p.name for p in out.parent.iterdir()] == ["assignment"], "the temporary folder was left behind"
    return out


def normalised(line: str) -> str:
    return " ".join(line.split())


def text_of(path: Path) -> str:
    """A file's text; a notebook's cell sources (its JSON quotes and escapes every line)."""
    if path.suffix == ".ipynb":
        return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    return path.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- what the template holds


def test_template_holds_the_student_edition_the_grader_and_its_workflow(template):
    assert {p.name for p in template.iterdir()} == {
        ".github",
        ".gitignore",
        "LICENSE",
        "LICENSES",
        "Makefile",
        "README.md",
        "notebooks",
        "pyproject.toml",
        "requirements.lock",
    }
    assert {p.name for p in (template / "notebooks").iterdir()} == NAMES | {"plumbing", "grader", "zh"}
    assert {p.name for p in (template / "notebooks" / "zh").iterdir()} == NAMES
    for folder in ("plumbing", "grader"):  # the two packages, whole
        package = ROOT / "notebooks" / folder
        assert {p.relative_to(template / "notebooks" / folder) for p in (template / "notebooks" / folder).rglob("*")} == {
            p.relative_to(package) for p in package.rglob("*") if "__pycache__" not in p.parts
        }
    assert [p.name for p in (template / ".github" / "workflows").iterdir()] == ["classroom.yml"]
    for path in template.rglob("*"):
        assert not {
            "tests",
            "docs",
            "tools",
            "student",
            ".ci",
            "site",
            "slides",
            "binder",
            "locale",
            "images",
            "grading_cases",
            "test.yml",
            "__pycache__",
        } & set(path.relative_to(template).parts), path
        if path.suffix in (".ipynb", ".md", ".yml") or path.name == "Makefile":  # what names the notebooks' paths
            assert "notebooks/student" not in text_of(path), path
    for folder, language in ((template / "notebooks", "en"), (template / "notebooks" / "zh", "zh")):
        for series in SERIES:
            nb = nbformat.read(folder / series.name, as_version=4)
            cells = {c.id: c for c in nb.cells}
            assert "colab-link" not in cells and all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
            assert f"NOTEBOOK={folder.relative_to(template).as_posix()}/{series.name}" in cells["student-note"].source
            for s in STEPS.get(series.stem[:2], []):
                region, _, _ = solution_region(cells[s.cell])
                assert region.endswith("raise NotImplementedError()"), (series.name, s.grade_id)
                assert interface.task(s, language).split("\n")[0] in region


def test_workflow_grades_every_step_of_the_templates_notebooks(template):
    workflow = yaml.safe_load((template / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8"))
    tests = [
        step["with"]
        for step in workflow["jobs"]["run-autograding-tests"]["steps"]
        if step.get("uses", "").startswith("classroom-resources/autograding-command-grader")
    ]
    expected = {
        f".venv/bin/python -m plumbing grade notebooks/{p.name} --step {s.grade_id}" for p in SERIES for s in STEPS.get(p.stem[:2], [])
    }
    assert {t["command"] for t in tests} == expected and len(tests) == len(ALL_STEPS) > 0
    assert sum(t["max-score"] for t in tests) == sum(s.points for s in ALL_STEPS)
    assert all((template / t["command"].split()[4]).is_file() for t in tests)


def test_makefile_readme_and_gitignore(template):
    result = subprocess.run(["make", "grade"], cwd=template, capture_output=True, text=True)
    assert result.returncode == 2 and "usage: make grade NOTEBOOK=notebooks/03_rmsnorm.ipynb" in result.stderr
    targets = subprocess.run(["make", "-n", "setup", "standin", "lab"], cwd=template, capture_output=True, text=True)
    assert targets.returncode == 0 and "pip install --progress-bar on -r requirements.lock" in targets.stdout, targets.stderr
    readme = (template / "README.md").read_text(encoding="utf-8")
    for named in (
        "make grade NOTEBOOK=notebooks/03_rmsnorm.ipynb",
        "make lab",
        "### BEGIN SOLUTION",
        "`.github/workflows/classroom.yml`",
        "`notebooks/plumbing/`",
        "`notebooks/grader/`",
        "notebooks/zh/",
        f"{len(ALL_STEPS)} steps, {sum(s.points for s in ALL_STEPS)} points",
    ):
        assert named in readme, named
    ignored = (template / ".gitignore").read_text(encoding="utf-8").split()
    assert {".venv/", "/build/", "/data/", "*.pth"} <= set(ignored)


def test_no_solution_line_in_the_template(template):
    """Every graded step's solution lines (the series' ``llama3.solution_lines``) are in no file of the template, but
    for a later notebook's "story so far", which shows an earlier notebook's steps; not the grading checks either."""
    solutions: dict[str, set[str]] = {}  # normalised line -> the steps whose solution has it
    for series in SERIES:
        cells = {c.id: c for c in nbformat.read(series, as_version=4).cells}
        for s in STEPS.get(series.stem[:2], []):
            region, _, _ = solution_region(cells[s.cell])
            for line in map(normalised, region.split("\n")):
                if len(line) >= SHORTEST:
                    solutions.setdefault(line, set()).add(s.grade_id)
    assert len(solutions) > len(ALL_STEPS)
    found = []
    for path in sorted(p for p in template.rglob("*") if p.is_file() and p.suffix != ".png"):
        lines = set(map(normalised, text_of(path).split("\n")))
        for line in lines & solutions.keys():
            if path.suffix == ".ipynb" and all(g[:2] < path.name[:2] for g in solutions[line]):
                continue
            found.append(f"{path.relative_to(template)}: {sorted(solutions[line])} {line!r}")
    assert not found, "solution lines in the template:\n" + "\n".join(found)
    # The check finds them: the series' notebook of each step holds its own solution lines.
    assert solutions.keys() <= {normalised(line) for p in SERIES for line in text_of(p).split("\n")}


def test_refuses_a_folder_that_is_not_empty_and_make_needs_out(tmp_path, capsys):
    out = tmp_path / "assignment"
    out.mkdir()
    (out / "work.txt").write_text("mine")
    assert classroom_template.main([str(out)]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["work.txt"] and [p.name for p in tmp_path.iterdir()] == ["assignment"]
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "MAKEFLAGS")}
    result = subprocess.run(["make", "--no-print-directory", "classroom-template"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 2 and "usage: make classroom-template OUT=" in result.stderr


# --------------------------------------------------------------------------- graded with its own package


@pytest.mark.notebook
def test_template_grades_its_notebooks_with_its_own_package(template, tmp_path, standin_dir):
    copy = tmp_path / "assignment"
    shutil.copytree(template, copy)
    env = plumbing.clean_environ(PYTHONPATH=str(copy / "notebooks"), LLAMA3_DIR=str(standin_dir))

    def run(*args):
        return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True)

    where = run("-c", "import plumbing, grader; print(plumbing.__file__); print(grader.__file__)")
    assert [Path(f).parent for f in where.stdout.split()] == [copy / "notebooks" / "plumbing", copy / "notebooks" / "grader"], where.stderr
    points = sum(s.points for s in STEPS["03"])
    for blank in ("notebooks/03_rmsnorm.ipynb", "notebooks/zh/03_rmsnorm.ipynb"):
        result = run("-m", "plumbing", "grade", blank, "--json")
        report = json.loads(result.stdout)
        assert result.returncode == 1 and report["points"] == 0 and report["max_points"] == points, result.stderr
        assert {s["status"] for s in report["steps"]} == {"not attempted"}, blank
    shutil.copy(ROOT / "notebooks" / "03_rmsnorm.ipynb", copy / "notebooks" / "03_rmsnorm.ipynb")
    workflow = (copy / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8")
    commands = [line.split("command: ")[1] for line in workflow.splitlines() if "notebooks/03_rmsnorm.ipynb" in line]
    assert len(commands) == len(STEPS["03"])
    for command in commands:  # GitHub Classroom's tests: the first runs the notebook, the others read its report
        result = run(*command.split()[1:])
        assert result.returncode == 0 and ": passed, " in result.stdout, (command, result.stdout, result.stderr)
    reports = list((copy / "build" / "grading").glob("*.json"))
    assert len(reports) == 1 and json.loads(reports[0].read_text())["points"] == points


# --------------------------------------------------------------------------- make student keeps a learner's work


def test_make_student_does_not_overwrite_work_unless_forced(tmp_path, capsys):
    out = tmp_path / "student"
    expected = student.student_files(out)
    assert student.main(["--out", str(out)]) == 0
    assert all(p.read_text(encoding="utf-8") == text for p, text in expected.items())
    rmsnorm, rope = out / "03_rmsnorm.ipynb", out / "zh" / "04_rope.ipynb"

    def edit(path, change):
        nb = nbformat.read(path, as_version=4)
        change(nb)
        nbformat.write(nb, path)

    def add_to_markdown(nb):
        nb.cells[0].source += "\nmy notes"

    step = STEPS["03"][0]

    def write_the_step(nb):
        cell = next(c for c in nb.cells if c.id == step.cell)
        cell.source = cell.source.replace("raise NotImplementedError()", "x32 = x.float()")

    def reword_the_stub(nb):
        cell = next(c for c in nb.cells if c.id == step.cell)
        cell.source = cell.source.replace("raise NotImplementedError()", "# still to do\nraise NotImplementedError()")

    # A notebook whose graded cells still hold a stub is written again.
    edit(rope, add_to_markdown)
    edit(rmsnorm, reword_the_stub)
    assert student.main(["--out", str(out)]) == 0
    assert rope.read_text(encoding="utf-8") == expected[rope] and rmsnorm.read_text(encoding="utf-8") == expected[rmsnorm]
    # Code in a graded cell: nothing is written, and the message names the file, the step and what to do.
    edit(rmsnorm, write_the_step)
    edit(rope, add_to_markdown)
    mine = rmsnorm.read_text(encoding="utf-8")
    capsys.readouterr()
    assert student.main(["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "03_rmsnorm.ipynb" in err and step.grade_id in err and "--force" in err and "04_rope" not in err, err
    assert rmsnorm.read_text(encoding="utf-8") == mine and rope.read_text(encoding="utf-8") != expected[rope]
    assert student.main(["--out", str(out), "--check"]) == 1  # --check as before: reports, writes nothing
    assert rmsnorm.read_text(encoding="utf-8") == mine
    (out / "zh" / "05_attention.ipynb").write_text("{ not a notebook")  # an unreadable file is someone's too
    assert student.main(["--out", str(out)]) == 2 and "zh/05_attention.ipynb (the whole file)" in capsys.readouterr().err
    assert student.main(["--out", str(out), "--force"]) == 0
    assert all(p.read_text(encoding="utf-8") == text for p, text in expected.items())
