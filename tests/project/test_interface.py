"""The interface's words: the Chinese is in locale/zh_CN/LC_MESSAGES/interface.po, not in the code (tools/interface.py).

No Python file of the tools, the package or the diagrams holds a Chinese character, except the few listed here with
the reason (text that the code recognises or feeds in, not text it writes); every string that the code looks up
(``interface.messages``) has its entry in interface.po, translated and not fuzzy, and no entry is left that nothing
asks for; a missing or fuzzy entry is a ``Llama3Error`` that names its ``msgctxt``. The grader's package asks
nothing of interface.po: GitHub Classroom's template ships ``notebooks/grader`` and ``notebooks/plumbing`` without ``locale/``.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

import grader.steps
from tools import interface
import plumbing
from grader.grading import Step

ROOT = Path(__file__).resolve().parents[2]
CHINESE = re.compile("[\u4e00-\u9fff]")
#: the files allowed Chinese characters, and why: none of them writes Chinese interface text
ALLOWED = {
    "tools/book/search_zh.py": "its docstring shows how Chinese text is split into pairs of characters for the index",
    "tools/book/solutions.py": "its docstring names the Chinese notebooks' fold (from NN.po), which it recognises",
    "tools/book/deep_dives.py": "its docstrings name the Chinese notebooks' heading (from NN.po), which it recognises",
    "tools/slides_cut.py": "its comments name the Chinese notebooks' heading and fold (from NN.po), which it recognises",
    "tools/student.py": "SOLUTION_LINE matches the Chinese notebooks' lines on the solutions (from NN.po), to remove them",
    "notebooks/grader/steps/n01_tokenization.py": "the probes of the tokenizer steps: Chinese input text",
}


def python_files() -> list[str]:
    folders = [ROOT / "tools", ROOT / "notebooks" / "plumbing", ROOT / "notebooks" / "grader", ROOT / "images"]
    return sorted(p.relative_to(ROOT).as_posix() for folder in folders for p in folder.rglob("*.py"))


def test_no_chinese_in_the_code_but_the_files_allowed():
    found = {name for name in python_files() if CHINESE.search((ROOT / name).read_text(encoding="utf-8"))}
    assert found - set(ALLOWED) == set(), "move these Chinese strings to locale/zh_CN/LC_MESSAGES/interface.po"
    assert set(ALLOWED) - found == set(), "these files hold no Chinese any more: take them off ALLOWED"


def test_every_string_the_code_asks_for_is_translated():
    asked = interface.messages()
    contexts = [c for c, _ in asked]
    assert len(contexts) == len(set(contexts)), "a msgctxt names one place"
    assert {"site.show_solution", "banner.standin[1]", "pdf.title", "student.note", "edition.name", "task 03-mean-square"} <= set(contexts)
    assert interface.problems() == []


def test_the_english_edition_reads_no_catalogue():
    words = interface.Words("nowhere", {"a": "A", "b": ("B", "C")})
    assert words["en"] == {"a": "A", "b": ("B", "C")} and "fr" not in words
    assert words.messages() == [("nowhere.a", "A"), ("nowhere.b[0]", "B"), ("nowhere.b[1]", "C")]
    with pytest.raises(plumbing.Llama3Error, match=r"msgctxt 'nowhere\.a' has no entry"):
        words["zh_CN"]


def test_a_missing_or_fuzzy_entry_is_an_error_naming_its_context(tmp_path, monkeypatch):
    po = tmp_path / "zh_CN" / "LC_MESSAGES" / interface.NAME
    po.parent.mkdir(parents=True)
    shutil.copy(interface.path(), po)
    text = po.read_text(encoding="utf-8")
    text = text.replace('msgctxt "pdf.contents"', '#, fuzzy\nmsgctxt "pdf.contents"')
    text = re.sub(r'msgctxt "task 03-gain"\nmsgid .*?\n\n', "", text, flags=re.S)
    po.write_text(text, encoding="utf-8")
    monkeypatch.setattr(interface.i18n, "LOCALE_DIR", tmp_path)
    with pytest.raises(plumbing.Llama3Error, match=r"msgctxt 'pdf\.contents' is fuzzy"):
        interface.text("pdf.contents", "Contents")
    step = next(s for s in grader.steps.STEPS["03"] if s.grade_id == "03-gain")
    with pytest.raises(plumbing.Llama3Error, match=r"msgctxt 'task 03-gain' has no entry"):
        interface.task(step, "zh")
    found = "\n".join(interface.problems())
    assert "'pdf.contents' is fuzzy" in found and "'task 03-gain' has no entry" in found
    assert interface.text("pdf.solution", "Solution", "zh_CN") == "解答"


def test_the_graders_package_has_no_chinese_task():
    assert "task_zh" not in {f.name for f in dataclasses.fields(Step)}
    imports = re.compile(r"^\s*(?:import|from) (?:interface|i18n)\b", re.M)  # the tools that read locale/
    for package in (ROOT / "notebooks" / "plumbing", ROOT / "notebooks" / "grader"):
        assert not [p for p in package.rglob("*.py") if imports.search(p.read_text(encoding="utf-8"))]
