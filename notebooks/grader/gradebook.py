"""Grading a folder of submissions: one CSV gradebook and one Markdown feedback file per student.

A folder holds either one subfolder per student, ``FOLDER/<student>/NN_name.ipynb`` (GitHub Classroom, an LMS
download; nbgrader's ``submitted/<student>/<assignment>/NN_name.ipynb``, at any depth in the student's folder),
or notebooks directly in it whose name starts with the student, ``FOLDER/<student>_NN_name.ipynb``; a
notebook directly in ``FOLDER`` whose name names no student belongs to ``FOLDER``'s own name (one student's folder).
Each notebook is graded by :func:`grader.grading.grade`; one that cannot be (not a notebook of the series,
unreadable) gets a row with status ``error`` and 0 points, and a line in the feedback.

Written atomically into ``OUT`` (default: ``FOLDER-grades/`` beside ``FOLDER``): ``grades.csv`` (one row per step:
student, notebook, grade_id, title, status, points, max_points) and ``feedback/<student>.md`` (per notebook each
step's status and points; for a step that did not pass, the grader's message and the hints of
:data:`grader.hints.HINTS`, or for one not attempted, what to write; the total).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from plumbing.errors import Llama3Error
from .hints import HINTS, MATCHES, SHORTCUT

if TYPE_CHECKING:
    from .grading import Report

COLUMNS = ("student", "notebook", "grade_id", "title", "status", "points", "max_points")


@dataclass
class Graded:
    """One submitted notebook: whose it is, where it is, and its report (None when it could not be graded).

    Attributes:
        student: the student's name (their folder's name, or the file name's prefix).
        path: the notebook's file.
        name: the file relative to the submissions folder, for messages.
        report: the grader's :class:`~grader.grading.Report`, or None.
        error: why it could not be graded (with ``report`` None).
        max_points: the points of its steps when its notebook of the series is known, else 0.
    """

    student: str
    path: Path
    name: str
    report: Report | None = None
    error: str = ""
    max_points: int = 0

    @property
    def notebook(self) -> str:
        """The notebook of the series it was graded as, or the file's name when it could not be graded."""
        return self.report.series if self.report is not None else self.path.name

    @property
    def points(self) -> int:
        return self.report.points if self.report is not None else 0

    @property
    def passed(self) -> bool:
        """Every step passed (an ungradable notebook never did)."""
        return self.report is not None and all(r.status == "passed" for r in self.report.results)


def default_out(folder: str | Path) -> Path:
    """Where :func:`grade_folder` writes by default: ``FOLDER-grades/`` beside ``FOLDER``."""
    folder = Path(folder).resolve()
    return folder.parent / f"{folder.name}-grades"


def submissions(folder: Path, skip: Path | None = None) -> list[tuple[str, Path]]:
    """(student, notebook) for every ``*.ipynb`` directly in ``folder`` or anywhere in a student's subfolder, sorted;
    hidden files and folders (``.ipynb_checkpoints``), ``__MACOSX`` and ``skip`` (the output folder) left out.

    Raises:
        Llama3Error: ``folder`` is not a folder, or holds no notebook.
    """
    from plumbing.paths import display_path

    if not folder.is_dir():
        raise Llama3Error(
            f"no folder at {display_path(folder)}; give the folder of the submissions "
            "(FOLDER/<student>/NN_name.ipynb or FOLDER/<student>_NN_name.ipynb)"
        )

    def visible(p: Path) -> bool:
        return not p.name.startswith((".", "__")) and (skip is None or p.resolve() != skip.resolve())

    found = [(student_of(p, folder.resolve().name), p) for p in folder.glob("*.ipynb") if p.is_file() and visible(p)]
    for sub in (p for p in folder.iterdir() if p.is_dir() and visible(p)):  # nbgrader's: <student>/<assignment>/
        found += [
            (sub.name, p)
            for p in sub.rglob("*.ipynb")
            if p.is_file() and all(visible(part) for part in [p, *p.relative_to(sub).parents][:-1])
        ]
    if not found:
        raise Llama3Error(
            f"no notebook (*.ipynb) in {display_path(folder)} or its subfolders; give the folder of the "
            "submissions (FOLDER/<student>/NN_name.ipynb or FOLDER/<student>_NN_name.ipynb)"
        )
    return sorted(found, key=lambda item: (item[0], item[1].name))


def student_of(path: Path, fallback: str) -> str:
    """The student of a notebook lying directly in the submissions folder: its name's prefix before a notebook of
    the series (``alice_03_rmsnorm.ipynb``: ``alice``), else before any ``NN_name``, else its whole stem;
    ``fallback`` when the prefix is empty (``03_rmsnorm.ipynb`` in one student's folder)."""
    from plumbing.paths import series_notebooks

    stem = path.stem
    cut = [stem.find(s.stem) for s in series_notebooks() if s.stem in stem]
    match = re.search(r"(?:^|[ _.-])(\d\d_[A-Za-z])", stem)
    end = min(cut) if cut else match.start(1) if match else len(stem)
    return stem[:end].rstrip(" _.-") or fallback


def grade_one(student: str, path: Path, folder: Path, checkpoint) -> Graded:
    """Grade one submitted notebook; whatever goes wrong with the file becomes :attr:`Graded.error`, never an
    exception (the checkpoint is the caller's, so a problem with the setup is raised before any notebook)."""
    from .grading import grade, steps_of
    from plumbing.paths import display_path, series_notebooks

    graded = Graded(student, path, path.relative_to(folder).as_posix())
    named = [s for s in series_notebooks() if s.stem in path.stem]  # for the row of a file that cannot be graded
    graded.max_points = sum(s.points for s in steps_of(named[0])) if len(named) == 1 else 0
    try:
        graded.report = grade(path, checkpoint=checkpoint)
    except Exception as e:  # a file that is no notebook of the series, or not one at all: a row, not a crash
        error = str(e) if isinstance(e, Llama3Error) else f"{type(e).__name__}: {e}"
        graded.error = error.replace(display_path(path), graded.name) or type(e).__name__  # not the grader's paths
    return graded


def rows(graded: list[Graded]) -> list[dict]:
    """The gradebook's rows (:data:`COLUMNS`): one per step of each graded notebook, one per ungradable one."""
    out = []
    for g in graded:
        if g.report is None:
            out.append(
                dict(
                    student=g.student,
                    notebook=g.notebook,
                    grade_id="",
                    title="not gradable",
                    status="error",
                    points=0,
                    max_points=g.max_points,
                )
            )
        else:
            out += [
                dict(
                    student=g.student,
                    notebook=g.notebook,
                    grade_id=r.grade_id,
                    title=r.title,
                    status=r.status,
                    points=r.points,
                    max_points=r.max_points,
                )
                for r in g.report.results
            ]
    return out


def write_csv(path: Path, graded: list[Graded]) -> None:
    """Write the gradebook to ``path`` (a temporary file, then renamed)."""
    from plumbing.paths import atomic_write

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows(graded))

    atomic_write(path, write)


def hints_for(result) -> tuple[str, ...]:
    """The hints for a :class:`~grader.grading.Result`: for a failed step, those of its step that its message
    matches (:data:`~grader.hints.MATCHES`), or all of them; for a shortcut, the shortcut's; else ()."""
    if result.status == "shortcut":
        return (SHORTCUT,)
    if result.status != "failed":
        return ()
    hints = HINTS.get(result.grade_id, ())
    return tuple(h for h in hints if h in MATCHES and MATCHES[h].search(result.detail or "")) or hints


def deep_dives_elsewhere(result, series: str) -> str:
    """Where the deep dives a step's hints name are (the student edition leaves them out), or ``""``."""
    if not any("deep dive" in hint for hint in hints_for(result)):
        return ""
    return (
        f"The deep dives named are not in your notebook: they are in the series' `{series}` and on the course "
        "site, and they show the step's code."
    )


def feedback(student: str, graded: list[Graded]) -> str:
    """The Markdown feedback of one student on their notebooks ``graded``: steps, messages, hints, total."""
    from .grading import steps_of

    lines = [f"# Feedback for {student}", ""]
    for g in sorted(graded, key=lambda g: (g.notebook, g.name)):
        if g.report is None:
            lines += [
                f"## {g.name}: not graded, 0/{g.max_points} points",
                "",
                f"The grader could not grade `{g.name}`: {g.error}",
                "",
                "Submit the notebook you worked in, as Jupyter saved it: the student edition's file "
                "(for example `03_rmsnorm.ipynb`), with its graded cells.",
                "",
            ]
            continue
        tasks = {s.grade_id: s.task for s in steps_of(Path(g.report.series))}
        lines += [
            f"## {g.report.series}: {g.report.points}/{g.report.max_points} points",
            "",
            f"Graded file: `{g.name}`",
            "",
            "| step | what it computes | status | points |",
            "| --- | --- | --- | --- |",
        ]
        lines += [f"| `{r.grade_id}` | {r.title} | {r.status} | {r.points}/{r.max_points} |" for r in g.report.results]
        lines.append("")
        for r in (r for r in g.report.results if r.status != "passed"):
            lines += [f"### `{r.grade_id}` {r.title}: {r.status}", ""]
            if r.detail:
                lines += ["What the grader found:", "", "```text", *r.detail.splitlines(), "```", ""]
            if hints_for(r):
                lines += ["Hints:", "", *[f"- {hint}" for hint in hints_for(r)], ""]
                if where := deep_dives_elsewhere(r, g.report.series):
                    lines += [where, ""]
            if r.status == "not attempted" and r.grade_id in tasks:
                lines += [
                    "What to write, in place of `raise NotImplementedError()` between `### BEGIN SOLUTION` and `### END SOLUTION`:",
                    "",
                    *[f"> {line}  " for line in tasks[r.grade_id].splitlines()],
                    "",
                ]
    points, max_points = sum(g.points for g in graded), sum(g.report.max_points if g.report else g.max_points for g in graded)
    lines.append(f"**Total: {points}/{max_points} points**")
    return "\n".join(lines) + "\n"


def grade_folder(
    folder: str | Path, out: str | Path | None = None, *, checkpoint=None, progress: Callable[[str], None] = print
) -> list[Graded]:
    """Grade every submission in ``folder`` and write ``OUT/grades.csv`` and ``OUT/feedback/<student>.md``.

    Args:
        folder: the submissions (see the module's docstring for the two layouts).
        out: where to write (default :func:`default_out`); skipped when it lies inside ``folder``.
        checkpoint: the checkpoint the checks use (default: ``LLAMA3_DIR`` or the stand-in, opened once).
        progress: called with one line per notebook graded.

    Returns:
        The :class:`Graded` notebooks, by student.

    Raises:
        Llama3Error: ``folder`` is missing or holds no notebook, or the weights cannot be opened.
    """
    from plumbing.checkpoint import open_checkpoint
    from plumbing.paths import atomic_write, display_path

    folder = Path(folder).expanduser()
    out = default_out(folder) if out is None else Path(out).expanduser()
    found = submissions(folder, skip=out)
    if out.exists() and not out.is_dir():
        raise Llama3Error(f"{display_path(out)} is a file; --out needs a folder for grades.csv and feedback/")
    checkpoint = open_checkpoint(None) if checkpoint is None else checkpoint
    graded = []
    for student, path in found:
        g = grade_one(student, path, folder, checkpoint)
        graded.append(g)
        verdict = f"{g.points}/{g.report.max_points}" if g.report else f"not graded ({g.error.splitlines()[0]})"
        progress(f"{student}: {g.name} {verdict}")
    write_csv(out / "grades.csv", graded)
    for student in sorted({g.student for g in graded}):
        text = feedback(student, [g for g in graded if g.student == student])

        def write(tmp: Path, text: str = text) -> None:  # a def: mypy cannot type a lambda with a default argument here
            tmp.write_text(text, encoding="utf-8")

        atomic_write(out / "feedback" / f"{student}.md", write)
    return graded
