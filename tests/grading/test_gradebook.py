"""Grading a folder of submissions (grader.gradebook, ``python -m plumbing grade FOLDER``, ``make grade SUBMISSIONS=``).

The hints are the instructor guide's, word for word, keyed by real steps; a folder in either layout (a subfolder per
student, or ``<student>_NN_name.ipynb``) holding a solved notebook, a blank one, one with a mistake and a broken file
gives one CSV row per step and per broken file and one feedback file per student, and exit status 1; a folder of
solved work exits 0. Notebook 03 only, on the small checkpoint (the folder's handling does not depend on the
weights): seconds per notebook.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grading_cases import cases
from grader import gradebook
from plumbing import Llama3Error
from grader.gradebook import hints_for
from grader.grading import Report, Result
from grader.hints import HINTS, MATCHES, SHORTCUT
from grader.steps import STEPS

ROOT = Path(__file__).resolve().parents[2]
SOLVED = ROOT / "notebooks" / "03_rmsnorm.ipynb"
BLANK = ROOT / "notebooks" / "student" / "03_rmsnorm.ipynb"
TASKS = {s.grade_id: s.task for s in STEPS["03"]}
N = len(STEPS["03"])  # notebook 03's steps, each worth 1 point


def plumbing_grade(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plumbing", "grade", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def with_mistake(path: Path, grade_id: str = "03-mean-square") -> None:
    """Notebook 03 solved, with tests/grading_cases/'s mistake in ``grade_id`` (the mean over the tokens' axis)."""
    old, new = cases("03")[0][grade_id]
    nb = nbformat.read(SOLVED, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == next(s.cell for s in STEPS["03"] if s.grade_id == grade_id))
    assert cell.source.count(old) == 1
    cell.source = cell.source.replace(old, new)
    nbformat.write(nb, path)


def part(markdown: str, heading: str) -> str:
    """The text after the heading that starts with ``heading``, up to the next heading."""
    return re.split(r"^#{1,3} ", markdown.split(heading, 1)[1], flags=re.M)[0]


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --------------------------------------------------------------------------- fast: no notebook runs


def guide_hints() -> dict[str, list[str]]:
    """Notebook number -> the "hint" cells of its table in docs/instructor.md §6, ``\\|`` read as ``|``."""
    text = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    section = text.split("\n## 6. ", 1)[1].split("\n## 7. ", 1)[0]
    found = {}
    for number, body in re.findall(r"^### (\d\d) · .*?\n(.*?)(?=^### |\Z)", section, re.M | re.S):
        rows = [line for line in body.splitlines() if line.startswith("| ")][2:]  # past the header and the rule
        found[number] = [re.split(r"(?<!\\)\|", row)[3].strip().replace("\\|", "|") for row in rows]
    return found


def test_hints_are_the_guides_word_for_word_and_keyed_by_real_steps():
    hints, steps = guide_hints(), {s.grade_id for every in STEPS.values() for s in every}
    assert sorted(hints) == sorted(STEPS) and all(len(h) >= 4 for h in hints.values()), hints
    assert set(HINTS) <= steps, f"not grade_ids: {sorted(set(HINTS) - steps)}"
    for grade_id, texts in HINTS.items():
        assert texts and len(set(texts)) == len(texts), grade_id
        for hint in texts:
            assert hint in hints[grade_id[:2]], f"{grade_id}: {hint!r} is no hint of notebook {grade_id[:2]}'s table"
    assert '"What does Meta\'s `encode` put first?" (deep dive "Forgetting `<|begin_of_text|>`")' in HINTS["01-encode"]
    assert {"03-mean-square", "03-inv-rms", "03-gain"} <= set(HINTS)


def test_a_failed_step_gets_the_hints_its_message_names_and_a_shortcut_the_shortcut_hint():
    guide = (ROOT / "docs" / "instructor.md").read_text(encoding="utf-8")
    assert SHORTCUT in guide.split("\n## 6. ", 1)[1].split("\n### ", 1)[0].replace("\n", " ")
    assert set(MATCHES) <= {hint for hints in HINTS.values() for hint in hints}
    loop = HINTS["08-generate"]
    choose, stop = (next(h for h in loop if word in h) for word in ("`choose`", "Where does"))

    def hints(status, detail, grade_id="08-generate"):
        return hints_for(Result(grade_id, "", status, 0, 1, detail))

    assert hints("failed", "greedy, stop at 128001: choose was called 0 times for 5 new ids") == (choose,)
    assert hints("failed", "stop_tokens is [128001, 128009], not Meta's Tokenizer.stop_tokens [128001, 128008, 128009]") == (stop,)
    assert hints("failed", "greedy: new ids: 4 of 5 values differ") == loop  # no mistake named: every hint of the step
    assert hints("shortcut", "calls F.rms_norm", "03-rms-norm") == (SHORTCUT,)
    assert hints("passed", "") == hints("not attempted", "") == ()


def test_student_names_and_the_two_layouts(tmp_path):
    assert gradebook.student_of(Path("alice_03_rmsnorm.ipynb"), "x") == "alice"
    assert gradebook.student_of(Path("bob-smith - 03_rmsnorm.ipynb"), "x") == "bob-smith"
    assert gradebook.student_of(Path("carol_1234_03_rmsnorm (1).ipynb"), "x") == "carol_1234"
    assert gradebook.student_of(Path("dave_99_homework.ipynb"), "x") == "dave"
    assert gradebook.student_of(Path("erin.ipynb"), "x") == "erin"
    assert gradebook.student_of(Path("03_rmsnorm.ipynb"), "frank") == "frank"
    folder = tmp_path / "hw"
    for name in (
        "alice/03_rmsnorm.ipynb",
        "alice/.ipynb_checkpoints/03_rmsnorm-checkpoint.ipynb",
        "bob_03_rmsnorm.ipynb",
        "03_rmsnorm.ipynb",
        "__MACOSX/x.ipynb",
        "grades/old.ipynb",
        "alice/deep/04_rope.ipynb",
        "readme.txt",
    ):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("{}")
    assert [(s, p.relative_to(folder).as_posix()) for s, p in gradebook.submissions(folder, skip=folder / "grades")] == [
        ("alice", "alice/03_rmsnorm.ipynb"),
        ("alice", "alice/deep/04_rope.ipynb"),  # nbgrader's <student>/<assignment>/
        ("bob", "bob_03_rmsnorm.ipynb"),
        ("hw", "03_rmsnorm.ipynb"),
    ]
    assert gradebook.default_out(folder) == tmp_path / "hw-grades"
    (folder / "empty").mkdir()
    for bad in (tmp_path / "missing", folder / "empty"):
        with pytest.raises(Llama3Error, match="give the folder of the submissions"):
            gradebook.submissions(bad)


def test_feedback_shows_messages_hints_and_tasks_for_the_steps_that_did_not_pass(tmp_path):
    report = Report(
        "x",
        "03_rmsnorm.ipynb",
        [
            Result("03-mean-square", "float32 rows and their mean square", "failed", 0, 1, "mean_square: shape [1, 4096]"),
            Result("03-inv-rms", "1/RMS and the divided rows", "not attempted", 0, 1),
            Result("03-gain", "back to bf16, then the gain", "passed", 1, 1),
        ],
    )
    graded = [
        gradebook.Graded("ann", tmp_path / "ann" / "03_rmsnorm.ipynb", "ann/03_rmsnorm.ipynb", report),
        gradebook.Graded("ann", tmp_path / "ann" / "04_rope.ipynb", "ann/04_rope.ipynb", None, "not JSON", 5),
    ]
    text = gradebook.feedback("ann", graded)
    assert text.startswith("# Feedback for ann\n") and text.rstrip().endswith("**Total: 1/8 points**")
    failed = part(text, "### `03-mean-square`")
    assert "failed" in failed and "mean_square: shape [1, 4096]" in failed
    assert all(f"- {hint}" in failed for hint in HINTS["03-mean-square"])
    assert "deep dive" in " ".join(HINTS["03-mean-square"])  # the student edition has none: say where they are
    assert "not in your notebook: they are in the series' `03_rmsnorm.ipynb` and on the course site" in failed
    blank = part(text, "### `03-inv-rms`")
    assert "not attempted" in blank and "Hints" not in blank
    assert all(line in blank for line in TASKS["03-inv-rms"].splitlines())
    assert "### `03-gain`" not in text and not any(hint in text for hint in HINTS["03-gain"] + HINTS["03-inv-rms"])
    assert "## ann/04_rope.ipynb: not graded, 0/5 points" in text and "not JSON" in text
    assert gradebook.rows(graded)[-1] == dict(
        student="ann", notebook="04_rope.ipynb", grade_id="", title="not gradable", status="error", points=0, max_points=5
    )
    assert [gradebook.hints_for(r) for r in report.results] == [HINTS["03-mean-square"], (), ()]


def test_usage_errors_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    nb = tmp_path / "03_rmsnorm.ipynb"
    shutil.copy(BLANK, nb)
    for args, message in (
        ((tmp_path / "missing",), "no notebook or folder at"),
        ((tmp_path / "empty",), "no notebook (*.ipynb) in"),
        ((tmp_path, "--json"), "--json and --step take one notebook"),
        ((nb, "--out", tmp_path / "out"), "--out is for a folder of submissions"),
        ((tmp_path, "--out"), "usage: python -m plumbing grade"),
    ):
        result = plumbing_grade(*args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
    assert "python -m plumbing grade FOLDER [--out DIR]" in plumbing_grade().stderr
    make = subprocess.run(["make", "--no-print-directory", "grade"], capture_output=True, text=True, cwd=ROOT)
    assert make.returncode != 0 and "make grade NOTEBOOK=" in make.stderr and "make grade SUBMISSIONS=folder [OUT=dir]" in make.stderr, (
        make.stderr
    )


def test_files_that_cannot_be_graded_are_rows_not_crashes(tmp_path, small_weights):
    folder = tmp_path / "hw"
    folder.mkdir()
    (folder / "ann_03_rmsnorm.ipynb").write_text("not json")
    (folder / "ben_03_rmsnorm.ipynb").write_text('{"cells": 5}')
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), folder / "cat_homework.ipynb")
    result = plumbing_grade(folder)
    assert result.returncode == 1, result.stdout + result.stderr
    rows = read_csv(tmp_path / "hw-grades" / "grades.csv")
    assert [(r["student"], r["notebook"], r["status"], r["points"], r["max_points"]) for r in rows] == [
        ("ann", "ann_03_rmsnorm.ipynb", "error", "0", str(N)),
        ("ben", "ben_03_rmsnorm.ipynb", "error", "0", str(N)),
        ("cat_homework", "cat_homework.ipynb", "error", "0", "0"),
    ]
    ann = (tmp_path / "hw-grades" / "feedback" / "ann.md").read_text(encoding="utf-8")
    assert "not a readable notebook" in ann and str(tmp_path) not in ann and "Submit the notebook you worked in" in ann
    assert "not a notebook of the series" in (tmp_path / "hw-grades" / "feedback" / "cat_homework.md").read_text()


# --------------------------------------------------------------------------- slow: the notebooks run


@pytest.mark.notebook
@pytest.mark.parametrize("layout", ["subfolders", "flat"])
def test_a_folder_of_submissions_into_a_gradebook_and_feedback(layout, tmp_path, small_weights):
    folder = tmp_path / "submissions"
    place = (
        (lambda student: folder / student / "03_rmsnorm.ipynb")
        if layout == "subfolders"
        else (lambda student: folder / f"{student}_03_rmsnorm.ipynb")
    )
    for student in ("alice", "bob", "carol", "dave"):
        place(student).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SOLVED, place("alice"))
    shutil.copy(BLANK, place("bob"))
    place("carol").write_text("<html>an LMS error page, not a notebook</html>")
    with_mistake(place("dave"))
    out = tmp_path / "submissions-grades" if layout == "subfolders" else tmp_path / "chosen"
    result = plumbing_grade(folder, *(["--out", out] if layout == "flat" else []), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "4 notebooks of 4 students graded, 1 with every step passed" in result.stdout, result.stdout

    ids = [s.grade_id for s in STEPS["03"]]
    statuses = {"alice": ["passed"] * N, "bob": ["not attempted"] * N, "dave": ["failed"] + ["passed"] * (N - 1)}
    expected = [
        dict(
            student=student,
            notebook="03_rmsnorm.ipynb",
            grade_id=g,
            title=s.title,
            status=status,
            points=str(int(status == "passed")),
            max_points="1",
        )
        for student in ("alice", "bob")
        for g, s, status in zip(ids, STEPS["03"], statuses[student])
    ]
    expected.append(
        dict(
            student="carol", notebook=place("carol").name, grade_id="", title="not gradable", status="error", points="0", max_points=str(N)
        )
    )
    expected += [
        dict(
            student="dave",
            notebook="03_rmsnorm.ipynb",
            grade_id=g,
            title=s.title,
            status=status,
            points=str(int(status == "passed")),
            max_points="1",
        )
        for g, s, status in zip(ids, STEPS["03"], statuses["dave"])
    ]
    assert read_csv(out / "grades.csv") == expected
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["alice.md", "bob.md", "carol.md", "dave.md"]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")], "a temporary file was left behind"

    def feedback(student: str) -> str:
        return (out / "feedback" / f"{student}.md").read_text(encoding="utf-8")

    alice = feedback("alice")
    assert f"**Total: {N}/{N} points**" in alice and "Hints" not in alice and "not attempted" not in alice
    assert alice.count("| passed | 1/1 |") == N
    bob = feedback("bob")
    assert f"**Total: 0/{N} points**" in bob and bob.count("| not attempted | 0/1 |") == N and "Hints" not in bob
    assert all(line in bob for task in TASKS.values() for line in task.splitlines()), "what to write, for every step"
    carol = feedback("carol")
    assert f"not graded, 0/{N} points" in carol and "not a readable notebook" in carol and str(tmp_path) not in carol
    dave = feedback("dave")
    assert f"**Total: {N - 1}/{N} points**" in dave and "### `03-mean-square` float32 rows and their mean square: failed" in dave
    failed = part(dave, "### `03-mean-square`")
    assert "What the grader found:" in failed and "mean_square" in failed.split("What the grader found:")[1]
    assert all(f"- {hint}" in failed for hint in HINTS["03-mean-square"])
    assert "deep dive" in " ".join(HINTS["03-mean-square"])  # the student edition has none: say where they are
    assert "not in your notebook: they are in the series' `03_rmsnorm.ipynb` and on the course site" in failed
    assert not any(hint in dave for hint in HINTS["03-inv-rms"] + HINTS["03-gain"])

    if layout == "flat":  # the single notebook's report shows the hints too
        single = plumbing_grade(place("dave"))
        assert single.returncode == 1 and "\nHints:\n" in single.stdout, single.stdout + single.stderr
        assert all(f"  03-mean-square: {hint}" in single.stdout for hint in HINTS["03-mean-square"])


@pytest.mark.notebook
def test_a_folder_of_solved_work_exits_0(tmp_path, small_weights):
    folder = tmp_path / "hw3"
    (folder / "alice").mkdir(parents=True)
    shutil.copy(SOLVED, folder / "alice" / "03_rmsnorm.ipynb")
    (folder / "grades").mkdir()
    (folder / "grades" / "old.ipynb").write_text("not json")  # the output folder inside: not a submission
    result = plumbing_grade(folder, "--out", folder / "grades")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [(r["student"], r["status"]) for r in read_csv(folder / "grades" / "grades.csv")] == [("alice", "passed")] * N
    assert f"**Total: {N}/{N} points**" in (folder / "grades" / "feedback" / "alice.md").read_text(encoding="utf-8")
