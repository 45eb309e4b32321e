"""The autograder (grader.grading, ``make grade``) and the student edition (tools/student.py, ``make student``).

For every notebook with graded steps: the series' notebook gets full marks; its student edition gets none,
every step "not attempted". Also: the committed student edition is what tools/student.py writes, the steps'
metadata and cases, the command line, and a notebook renamed or without markers. Each step's cases (a mistake,
a shortcut, a correct step written another way): tests/grading/test_grading_cases.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools import interface
import plumbing
from tools import student
from grading_cases import cases
from grader import grading
from grader import kernel as grading_kernel
from grader.steps import STEPS

ROOT = Path(__file__).resolve().parents[2]
SERIES = {p.name[:2]: p for p in plumbing.series_notebooks()}
GRADED = [n for n in SERIES if STEPS.get(n)]


def write(nb, folder: Path, name: str) -> Path:
    path = folder / name
    nbformat.write(nb, path)
    return path


def mistaken(series: Path, edits: dict[str, tuple[str, str]]):
    """The series' notebook with ``edits`` (grade_id -> (old, new)) made inside each step's solution lines."""
    return edited(series, [(grade_id, old, new) for grade_id, (old, new) in edits.items()])


def edited(series: Path, edits: list[tuple]):
    """The series' notebook with ``edits`` ``[(grade_id, old, new)]`` made in order inside each step's solution lines
    (``old`` and ``new`` may be tuples of replacements), the metadata's solution lines moved with them."""
    nb = nbformat.read(series, as_version=4)
    cells = {s.grade_id: s.cell for s in STEPS[series.name[:2]]}
    for grade_id, olds, news in edits:
        cell = next(c for c in nb.cells if c.get("id") == cells[grade_id])
        for old, new in zip(*((olds, news) if isinstance(olds, tuple) else ((olds,), (news,)))):
            region, _, _ = grading.solution_region(cell)
            assert region.count(old) == 1, f"{grade_id}: {old!r} is not once in its solution lines"
            cell.source = cell.source.replace(region, region.replace(old, new))
            added = new.count("\n") - old.count("\n")
            if added and "llama3" in cell.metadata:  # the solution's last line moves down
                first, last = cell.metadata["llama3"]["solution_lines"]
                cell.metadata["llama3"]["solution_lines"] = [first, last + added]
    return nb


def rounds(edits: list[tuple]) -> list[list[tuple]]:
    """``edits`` in rounds that edit each step at most once."""
    out: list[list[tuple]] = []
    for e in edits:
        free = next((r for r in out if e[0] not in {g for g, _, _ in r}), None)
        free.append(e) if free is not None else out.append([e])
    return out


def statuses(report) -> dict[str, str]:
    return {r.grade_id: r.status for r in report.results}


# --------------------------------------------------------------------------- fast: no notebook runs


def test_student_edition_is_up_to_date():
    stale = [p for p, text in student.student_files().items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    assert not stale, f"stale student edition: {[str(p.relative_to(ROOT)) for p in stale]}; run `make student`"


@pytest.mark.parametrize("number", sorted(SERIES))
def test_every_step_is_marked_with_nbgrader_conventions_and_has_cases(number):
    nb = nbformat.read(SERIES[number], as_version=4)
    marked = {c.id: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}
    steps = STEPS.get(number, [])
    assert {s.cell for s in steps} == set(marked), "marked cells and graded steps differ"
    for s in steps:
        meta = marked[s.cell].metadata["nbgrader"]
        assert meta == {"grade": False, "grade_id": s.grade_id, "locked": False, "schema_version": 3, "solution": True, "task": False}
        assert s.grade_id.startswith(f"{number}-") and grading.solution_region(marked[s.cell])
    ids = [s.grade_id for s in steps]
    assert len(ids) == len(set(ids))
    if steps:
        mistakes, shortcuts = cases(number)
        assert set(mistakes) == set(ids), "every step needs a mistake in tests/grading_cases/"
        assert shortcuts or not any(s.shortcuts for s in steps)


def test_student_edition_has_stubs_and_no_solutions():
    for number in GRADED:
        for language, _source, target in student.EDITIONS:
            nb = nbformat.read(target / SERIES[number].name, as_version=4)
            text = json.dumps(nb.cells, ensure_ascii=False)
            assert '"solution"' not in json.dumps([c.metadata.get("tags", []) for c in nb.cells])
            assert not student.SOLUTION_LINE.search("\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))
            assert "**Solution**" not in text and "**解答**" not in text
            assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
            for s in STEPS[number]:
                cell = next(c for c in nb.cells if c.id == s.cell)
                region, _, _ = grading.solution_region(cell)
                assert region.strip().endswith("raise NotImplementedError()")
                assert interface.task(s, language).split("\n")[0] in region
            assert f"notebooks/student/{'zh/' if language == 'zh' else ''}{SERIES[number].name}" in text


def test_student_edition_leaves_out_metas_code_of_a_step_and_makes_toy_answers_warm_ups():
    """The series' cells marked ``llama3.student`` (tools/student.py's ``withhold``): Meta's code quoted before a
    step goes, a toy computation of a step's answer becomes an ungraded stub; 03's answer appears nowhere else."""
    marked = 0
    for number in GRADED:
        series_cells = {c.id: c for c in nbformat.read(SERIES[number], as_version=4).cells}
        for language, _source, target in student.EDITIONS:
            cells = nbformat.read(target / SERIES[number].name, as_version=4).cells
            assert not [c.id for c in cells if "student" in c.metadata.get("llama3", {})]
            for cell in cells:
                asked = series_cells.get(cell.id, {}).get("metadata", {}).get("llama3", {}).get("student")
                if not asked:
                    continue
                marked += 1
                if cell.cell_type == "markdown":
                    assert "```" not in cell.source and student.WORDS[language]["withheld"] in cell.source
                else:
                    first, last = asked["warm_up"]
                    for line in series_cells[cell.id].source.split("\n")[first - 1 : last]:
                        assert line not in cell.source.split("\n"), (cell.id, line)
                    assert "raise NotImplementedError()" in cell.source and "nbgrader" not in cell.metadata
    assert marked >= 4, "03's quote of Meta's RMSNorm and its toy batch, in both editions"
    for _language, _source, target in student.EDITIONS:
        text = (target / SERIES["03"].name).read_text(encoding="utf-8")
        assert "rsqrt(" not in text and ".mean(-1" not in text


def test_stub_and_solution_lines():
    cell = {"source": "a = 1\nb = a + 1\nprint(b)", "metadata": {"llama3": {"solution_lines": [2, 2]}}}
    assert grading.solution_region(cell) == ("b = a + 1", 1, 2)
    assert grading.stub(cell, "b: a plus one") == (
        "a = 1\n### BEGIN SOLUTION\n# b: a plus one\nraise NotImplementedError()\n### END SOLUTION\nprint(b)"
    )
    student = {"source": grading.stub(cell, "b"), "metadata": cell["metadata"]}  # markers win over metadata
    assert grading.solution_region(student) == ("# b\nraise NotImplementedError()", 2, 4)
    indented = {"source": "def f(x):\n    return x", "metadata": {"llama3": {"solution_lines": [2, 2]}}}
    assert grading.stub(indented, "return x").endswith("    # return x\n    raise NotImplementedError()\n    ### END SOLUTION")
    for lines in ([0, 1], [2, 1], [3, 4]):
        with pytest.raises(plumbing.Llama3Error, match="solution_lines"):
            grading.stub({"source": "a = 1\nb = 2", "metadata": {"llama3": {"solution_lines": lines}}}, "b")
    with pytest.raises(plumbing.Llama3Error, match="solution_lines"):
        grading.stub({"source": "b = 1", "metadata": {}}, "b")


@pytest.mark.parametrize("number", sorted(SERIES))
def test_the_series_shows_no_markers_and_its_solution_lines_are_whole_statements(number):
    """No nbgrader marker in the notebooks a learner reads; each graded cell's solution lines start and end on
    code at one indentation, and the stub in their place still compiles (stale line numbers fail here)."""
    nb = nbformat.read(SERIES[number], as_version=4)
    assert not any("BEGIN SOLUTION" in c.source or "END SOLUTION" in c.source for c in nb.cells)
    for s in STEPS.get(number, []):
        cell = next(c for c in nb.cells if c.id == s.cell)
        region, b, e = grading.solution_region(cell)
        lines = region.split("\n")
        indent = len(lines[0]) - len(lines[0].lstrip())
        assert lines[0].strip() and lines[-1].strip(), f"{s.grade_id}: the solution lines start or end blank"
        assert all(len(line) - len(line.lstrip()) >= indent for line in lines if line.strip()), s.grade_id
        compile(grading.stub(cell, s.task), s.grade_id, "exec")
        compile(cell.source, s.grade_id, "exec")


def test_shortcuts_are_found_by_name_attribute_and_import():
    assert grading.shortcuts_in("y = F.rms_norm(x, (4,))", ("rms_norm",)) == ["calls F.rms_norm"]
    assert grading.shortcuts_in("y = torch.nn.functional.silu(x)", ("silu",)) == ["calls torch.nn.functional.silu"]
    assert grading.shortcuts_in("from llama_models.llama3.model import RMSNorm", ()) == ["imports llama_models.llama3.model"]
    assert grading.shortcuts_in("y = plumbing.reference.run(c, t, [])", ()) == ["uses plumbing.reference (Meta's code)"]
    assert grading.shortcuts_in("y = x * torch.sigmoid(x)", ("silu",)) == []
    assert grading.shortcuts_in("def (", ("silu",)) == []


def test_compare_reports_shape_dtype_and_values():
    import torch

    a = torch.ones(2, 3, dtype=torch.bfloat16)
    assert grading.compare("t", a, a.clone()) == []
    assert "shape [3, 2]" in grading.compare("t", a.T, a)[0]
    assert "dtype torch.float32" in grading.compare("t", a.float(), a)[0]
    b = a.clone()
    b[0, 0] = 2
    assert "1 of 6 values differ" in grading.compare("t", b, a)[0]
    assert grading.compare("ids", [1, 2], [1, 2]) == [] and grading.compare("ids", [1, 3], [1, 2])


def test_bad_input_is_one_clear_error(tmp_path):
    with pytest.raises(plumbing.Llama3Error, match="no notebook"):
        grading.grade(tmp_path / "03_rmsnorm.ipynb")
    other = tmp_path / "homework.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), other)
    with pytest.raises(plumbing.Llama3Error, match="not a notebook of the series"):
        grading.grade(other)
    broken = tmp_path / "03_rmsnorm.ipynb"
    broken.write_text("not json")
    with pytest.raises(plumbing.Llama3Error, match="not a readable notebook"):
        grading.grade(broken)
    result = subprocess.run([sys.executable, "-m", "plumbing", "grade"], capture_output=True, text=True)
    assert result.returncode == 2 and "usage: python -m plumbing grade" in result.stderr


def _loop_08(edits=()):
    """The names notebook 08's cell of 08-generate defines (``stop_tokens``, ``generate``), with ``edits``
    [(grade_id, old, new)] in its solution lines, defined in this process."""
    import types

    import torch

    step = next(s for s in STEPS["08"] if s.grade_id == "08-generate")
    cell = next(c for c in edited(SERIES["08"], list(edits)).cells if c.get("id") == step.cell)
    namespace = {"torch": torch, "plumbing": plumbing, "rules": types.SimpleNamespace(stop_tokens=plumbing.LLAMA3_STOP_TOKENS)}
    exec(compile(cell.source, "08-generate", "exec"), namespace)  # noqa: S102 (the series' own cell)
    return {name: namespace[name] for name in ("stop_tokens", "generate")}


def judged(grade_id: str, namespace: dict, context=None) -> list[str]:
    """A step's problems, judged in this process: its capture evaluated on a copy of ``namespace`` (as the grader's
    kernel does), saved and read back as the grader does (as data only), then its check with ``context`` (the
    grader's :class:`~grader.context.Context`, for a check that reads the checkpoint)."""
    import io

    import torch

    step = next(s for steps in STEPS.values() for s in steps if s.grade_id == grade_id)
    try:
        values = eval(step.capture, dict(namespace))  # noqa: S307 (the step's own capture)
    except Exception as e:  # in the grader: the step's values could not be read, it fails
        return [f"{type(e).__name__}: {e}"]
    saved = io.BytesIO()
    torch.save(grading_kernel._detached(values), saved)
    saved.seek(0)
    return step.check(grading_kernel.load_values(saved), context)


def _problems_08(loop: dict) -> list[str]:
    """08-generate's problems for ``loop`` (what :func:`_loop_08` returns)."""
    return judged("08-generate", loop)


@pytest.mark.slow  # 19 loops judged, each drawing from 128256 ids about 70 times
def test_08_loop_probes_greedy_seeded_sampling_and_every_stop_token(monkeypatch):
    """The notebook's loop passes 08-generate's probes, and so does each valid form alone; each further mistake of
    the loop (the choice ignored or drawn twice, a stop set missing one of Meta's stop tokens, the cell's own
    stop_tokens edited, ...) fails them, and so does the loop given a choice other than Meta's (the temperature
    multiplied, top-p keeping or dropping the wrong token): the seeded probes are compared with Meta's own generate,
    not with the grader's choice."""
    import inspect

    import torch

    from grading_cases import n08 as cases08
    from grader.steps import n08_generation as n08
    from grader.steps import n08_sampling

    loop = _loop_08()
    assert _problems_08(loop) == []
    for edit in cases08.VALID:
        assert _problems_08(_loop_08([edit])) == [], edit
    for edit in cases08.MORE_MISTAKES:
        assert _problems_08(_loop_08([edit])), edit
    for stops in cases08.STOP_SET_MISTAKES:
        found = _problems_08({**loop, "stop_tokens": stops})
        shown = [int(t) for t in stops] if isinstance(stops, list) else "ValueError"
        assert found and found[0].startswith(f"stop_tokens is {shown}"), found
    for where, old, new in cases08.CHOICE_MISTAKES:
        function = n08_sampling.sampled_choice if where == "sampled_choice" else plumbing.reference.meta_generation_code().sample_top_p
        source = inspect.getsource(function)
        assert source.count(old) == 1, old
        namespace = {**vars(n08_sampling), "torch": torch}
        exec(source.replace(old, new), namespace)  # noqa: S102
        with monkeypatch.context() as m:
            if where == "sampled_choice":
                m.setattr(n08, "sampled_choice", namespace["sampled_choice"])
            else:
                m.setattr(n08_sampling, "meta_sample_top_p", lambda f=namespace["sample_top_p"]: f)
            assert _problems_08(loop), (old, new)
    stops = {p.stop_token for p in n08.PROBES if p.stop_token is not None}
    assert stops == set(plumbing.LLAMA3_STOP_TOKENS) == set(n08.STOP_TOKENS)


# --------------------------------------------------------------------------- slow: the notebooks run


@pytest.mark.notebook
@pytest.mark.parametrize("number", GRADED)
def test_series_notebook_gets_full_marks_and_student_edition_none(number, tmp_path, standin_dir, small_dir, monkeypatch):
    full = grading.grade(SERIES[number])  # on the stand-in, the grader's default
    assert full.points == full.max_points > 0, full.text()
    nb = nbformat.read(SERIES[number], as_version=4)  # the student edition of the notebook as it is now
    monkeypatch.setenv("LLAMA3_DIR", str(small_dir))  # a blank notebook earns nothing on any weights: the small ones
    blank = grading.grade(write(student.student_notebook(nb, number, "en", SERIES[number].name), tmp_path, SERIES[number].name))
    assert blank.points == 0 and set(statuses(blank).values()) == {"not attempted"}, blank.text()


@pytest.mark.notebook
def test_cli_and_json(tmp_path, small_weights):
    number = "02"  # the notebook that grades fastest: the test is about the command line
    result = subprocess.run(
        [sys.executable, "-m", "plumbing", "grade", str(student.OUT / SERIES[number].name), "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["points"] == 0 and data["max_points"] == sum(s.points for s in STEPS[number])
    assert [s["grade_id"] for s in data["steps"]] == [s.grade_id for s in STEPS[number]]
    # --step: one step's verdict (GitHub Classroom's tests); the report is kept under the notebook's SHA-256
    step = STEPS[number][-1].grade_id
    for path, code, status in ((student.OUT / SERIES[number].name, 1, "not attempted"), (SERIES[number], 0, "passed")):
        for _ in range(2):  # the second time from build/grading/
            result = subprocess.run([sys.executable, "-m", "plumbing", "grade", str(path), "--step", step], capture_output=True, text=True)
            assert result.returncode == code and f": {status}," in result.stdout, result.stdout + result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "plumbing", "grade", str(SERIES[number]), "--step", "nope"], capture_output=True, text=True
    )
    assert result.returncode == 2 and "has no step 'nope'" in result.stderr


def test_a_kept_report_is_keyed_by_the_notebook_and_the_weights(tmp_path, small_dir, monkeypatch):
    """grade --step reuses a report only for the same notebook bytes on the same weights: a report of the small
    checkpoint (as the tests grade) is never read back for the stand-in, nor one notebook's for another's."""
    from plumbing.cli import report_cache

    a, b = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    a.write_text("{}", encoding="utf-8")
    b.write_text("{ }", encoding="utf-8")
    monkeypatch.delenv("LLAMA3_DIR", raising=False)
    on_standin = report_cache(a)
    assert report_cache(a) == on_standin and report_cache(b) != on_standin
    monkeypatch.setenv("LLAMA3_DIR", str(small_dir))
    assert report_cache(a) not in (on_standin, report_cache(b))
    assert on_standin.parent == plumbing.paths.REPO_ROOT / "build" / "grading"


@pytest.mark.notebook
def test_renamed_file_without_cell_ids_and_a_step_that_never_ends(tmp_path, small_weights):
    """A learning platform's download: another file name, cells saved without ids (nbformat 4.4); one step loops."""
    nb = mistaken(
        SERIES["03"],
        {
            "03-gain": (
                "token_embeddings = normed * attention_norm_weight",
                "token_embeddings = normed * attention_norm_weight\nwhile True:\n    pass",
            )
        },
    )
    for cell in nb.cells:
        cell.pop("id", None)
    nb.nbformat_minor = 4
    path = tmp_path / "alice_1234_03_rmsnorm.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    report = grading.grade(path, timeout=15)
    assert report.series == "03_rmsnorm.ipynb"
    assert statuses(report) == {"03-mean-square": "passed", "03-inv-rms": "passed", "03-gain": "failed", "03-rms-norm": "passed"}, (
        report.text()
    )
    assert "ran longer than 15 s" in next(r for r in report.results if r.grade_id == "03-gain").detail


@pytest.mark.notebook
@pytest.mark.parametrize("number", ["01", "06"])
def test_a_cell_without_markers_is_judged_on_the_learners_lines(number, tmp_path, small_weights):
    """nbgrader's own stubbing removes the markers: the learner's lines are then found between the lines the series'
    cell has before and after its solution, so the cell's own given lines (``plumbing.encode_prompt``, a call of
    ``silu``) are no shortcut."""
    nb = nbformat.read(SERIES[number], as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("llama3", None)  # no markers, no solution_lines: as nbgrader releases and collects it
    report = grading.grade(write(nb, tmp_path, SERIES[number].name))
    assert report.points == report.max_points, report.text()
