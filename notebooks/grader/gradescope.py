"""Gradescope's results for one submission: every notebook of the series in it, graded into ``results.json``.

    python -m grader.gradescope SUBMISSION RESULTS    # the autograder bundle's run_autograder (tools/gradescope.py)

Every ``*.ipynb`` under SUBMISSION (hidden files and folders, ``__MACOSX`` left out) is graded by
:func:`grader.grading.grade`, whatever its name: a renamed notebook is recognised by its graded cells' nbgrader
metadata. When several files are one notebook of the series (a repository's ``notebooks/03_rmsnorm.ipynb`` and
``notebooks/zh/03_rmsnorm.ipynb``), the one nearest SUBMISSION's top is graded and the output names the others.

RESULTS is Gradescope's ``results.json``: ``score`` (the points), ``execution_time``, ``output`` (which files were
graded, and why others were not) and ``tests``, one per graded step, named ``"GRADE_ID: title"``, with ``score``,
``max_score``, ``status`` (``passed`` or ``failed``) and ``output``: the step's status and the grader's message, the
hints of :data:`grader.hints.HINTS` for a step that failed or took a shortcut, the task for one not
attempted. A submission without a notebook of the series gets score 0 and an output that says what to submit. The
file is written whole or not at all (a temporary file, then renamed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from plumbing.errors import Llama3Error
from .gradebook import deep_dives_elsewhere, hints_for

SUBMIT = (
    "Submit the notebooks you worked in, as Jupyter saved them: the student edition's files (for example "
    "03_rmsnorm.ipynb), with their graded cells."
)


def notebooks_in(folder: Path) -> list[Path]:
    """Every ``*.ipynb`` under ``folder``, sorted by depth, then path; hidden files and folders and ``__MACOSX`` left
    out."""
    found = [
        p for p in folder.rglob("*.ipynb") if p.is_file() and not any(part.startswith((".", "__")) for part in p.relative_to(folder).parts)
    ]
    return sorted(found, key=lambda p: (len(p.relative_to(folder).parts), p.relative_to(folder).as_posix()))


def identify(path: Path):
    """(the notebook read, or None when unreadable; the series notebook it is).

    Raises:
        Llama3Error: neither its name nor its graded cells name a notebook of the series.
    """
    import nbformat

    from .grading import series_notebook

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # an unreadable file can still be named as a notebook of the series
        nb = None
    return nb, series_notebook(path, nb)


def step_output(result, task: str = "", series: str = "") -> str:
    """A test's ``output``: the step's status, the grader's message, and its hints (``series``: the notebook's name,
    for where their deep dives are) or its task."""
    lines = [result.status]
    if result.detail:
        lines += ["", result.detail]
    hints = hints_for(result)
    if hints:
        lines += ["", "Hints:", *[f"- {hint}" for hint in hints]]
        if series and (where := deep_dives_elsewhere(result, series)):
            lines.append(where)
    if result.status == "not attempted" and task:
        lines += ["", "What to write, in place of raise NotImplementedError() between ### BEGIN SOLUTION and ### END SOLUTION:", task]
    return "\n".join(lines)


def results(submission: str | Path, checkpoint=None) -> dict:
    """Gradescope's results of the submission folder ``submission`` (see the module's docstring).

    Raises:
        Llama3Error: ``submission`` is not a folder, or the weights cannot be opened.
    """
    from plumbing.checkpoint import open_checkpoint
    from .grading import grade, steps_of
    from plumbing.paths import display_path

    start = time.monotonic()
    folder = Path(submission)
    if not folder.is_dir():
        raise Llama3Error(f"no folder at {display_path(folder)}; give the submission's folder (/autograder/submission)")
    chosen: dict[Path, tuple[str, Path, object]] = {}  # series notebook -> (name in the submission, path, notebook read)
    notes: list[str] = []
    for path in notebooks_in(folder):
        name = path.relative_to(folder).as_posix()
        try:
            nb, series = identify(path)
        except Llama3Error as e:
            notes.append(f"{name}: not graded, {str(e).replace(path.name, name, 1)}")
            continue
        if series in chosen:
            notes.append(f"{name}: not graded, {chosen[series][0]} is the same notebook ({series.name})")
            continue
        chosen[series] = (name, path, nb)
    checkpoint = open_checkpoint(None) if checkpoint is None and chosen else checkpoint
    tests: list[dict[str, Any]] = []  # Gradescope's tests: name, score, max_score, status, output
    summary: list[str] = []
    for series in sorted(chosen):
        name, path, nb = chosen[series]
        steps = steps_of(series)
        tasks = {s.grade_id: s.task for s in steps}
        try:
            if nb is None:
                raise Llama3Error(f"{name} is not a readable notebook")
            report = grade(path, checkpoint=checkpoint)
        except Exception as e:  # the file, not the setup: its steps get 0, with the reason
            error = (str(e) if isinstance(e, Llama3Error) else f"{type(e).__name__}: {e}").replace(display_path(path), name)
            summary.append(f"{name}: not graded as {series.name}, 0/{sum(s.points for s in steps)} points: {error}")
            tests += [
                {
                    "name": f"{s.grade_id}: {s.title}",
                    "score": 0,
                    "max_score": s.points,
                    "status": "failed",
                    "output": f"not graded: {error}\n{SUBMIT}",
                }
                for s in steps
            ]
            continue
        summary.append(f"{name}: graded as {series.name}, {report.points}/{report.max_points} points")
        tests += [
            {
                "name": f"{r.grade_id}: {r.title}",
                "score": r.points,
                "max_score": r.max_points,
                "status": "passed" if r.status == "passed" else "failed",
                "output": step_output(r, tasks.get(r.grade_id, ""), series.name),
            }
            for r in report.results
        ]
    if not chosen:
        summary.append(f"No notebook of the series in the submission, so nothing was graded. {SUBMIT}")
    score = sum(t["score"] for t in tests)
    output = "\n".join([*summary, *notes, f"Total: {score}/{sum(t['max_score'] for t in tests)} points"])
    return {"score": score, "execution_time": round(time.monotonic() - start), "output": output, "tests": tests}


def write_results(path: str | Path, data: dict) -> None:
    """Write ``data`` as JSON to ``path`` (a temporary file, then renamed)."""
    from plumbing.paths import atomic_write

    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    atomic_write(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    """Grade the submission into results.json; exit status 0 when written, 2 on an error (printed as one line)."""
    parser = argparse.ArgumentParser(prog="python -m grader.gradescope", description=__doc__.split("\n\n")[0])
    parser.add_argument("submission", type=Path, help="the submission's folder (/autograder/submission)")
    parser.add_argument("results", type=Path, help="the results file to write (/autograder/results/results.json)")
    args = parser.parse_args(argv)
    try:
        data = results(args.submission)
        write_results(args.results, data)
    except Llama3Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(data["output"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
