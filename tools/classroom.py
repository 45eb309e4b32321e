"""Write GitHub Classroom's autograding workflow for the student edition (``make classroom``).

    python -m tools.classroom            # writes .github/workflows/classroom.yml
    python -m tools.classroom --check    # writes nothing; exit status 1 when the committed file is stale

One test per graded step (``grader.steps``), worth its points.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import plumbing
from grader.steps import STEPS

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = REPO_ROOT / ".github" / "workflows" / "classroom.yml"

HEAD = """\
# GitHub Classroom's autograding of the student edition (notebooks/student/): one test per graded step, worth its
# points. Written by tools/classroom.py from grader.steps (`make classroom`); tests/grading/test_grading.py
# checks that it is up to date. Each test runs `python -m plumbing grade NOTEBOOK --step GRADE_ID`: the first
# test of a notebook runs it on the synthetic stand-in and keeps the report in build/grading/, the others read it.
name: Autograding Tests

on:
  - push
  - repository_dispatch
  - workflow_dispatch

permissions:
  checks: write
  actions: read
  contents: read

jobs:
  run-autograding-tests:
    runs-on: ubuntu-24.04
    if: github.actor != 'github-classroom[bot]'
    timeout-minutes: 180  # a notebook whose cells all loop: each cell stops after 2 min (grader.grading.TIMEOUT)
    env:
      PIP_EXTRA_INDEX_URL: https://download.pytorch.org/whl/cpu
    steps:
      - uses: actions/checkout@v4

      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
          cache: pip
          cache-dependency-path: requirements.lock

      - name: .venv and the synthetic stand-in
        run: make standin
"""

TEST = """
      - name: {grade_id}
        id: {runner}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: "{grade_id}: {title}"
          command: .venv/bin/python -m plumbing grade notebooks/student/{notebook} --step {grade_id}
          timeout: 20
          max-score: {points}
"""


def runner(grade_id: str) -> str:
    """The step id of a test: GitHub Actions' ids start with a letter (``s03-mean-square``)."""
    return f"s{grade_id}"


def workflow() -> str:
    """The text of .github/workflows/classroom.yml."""
    tests, runners = [], []
    for series in plumbing.series_notebooks():
        for s in STEPS.get(series.stem[:2], []):
            tests.append(TEST.format(grade_id=s.grade_id, runner=runner(s.grade_id), title=s.title, notebook=series.name, points=s.points))
            runners.append(runner(s.grade_id))
    env = "".join(f'          {r.upper()}_RESULTS: "${{{{ steps.{r}.outputs.result }}}}"\n' for r in runners)
    report = (
        "\n      - name: Autograding Reporter\n        if: always()\n"
        "        uses: classroom-resources/autograding-grading-reporter@v1\n"
        f"        env:\n{env}        with:\n          runners: {','.join(runners)}\n"
    )
    return HEAD + "".join(tests) + report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file is stale")
    args = parser.parse_args(argv)
    text = workflow()
    stale = not WORKFLOW.is_file() or WORKFLOW.read_text(encoding="utf-8") != text
    if args.check:
        if stale:
            print(f"stale: {WORKFLOW.relative_to(REPO_ROOT)} (run `make classroom`)")
        return 1 if stale else 0
    if stale:
        plumbing.paths.atomic_write(WORKFLOW, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    print(f"{WORKFLOW.relative_to(REPO_ROOT)}: {text.count('autograding-command-grader')} tests" + ("" if stale else " (unchanged)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
