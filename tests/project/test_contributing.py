"""The contributor guide, CONTRIBUTING.md, stays true to the repository.

No notebook runs: every repository path the guide names in code exists, every file of tools/ is in its table,
every ``make`` target it names is in the Makefile, no file still cites the guide's old name, and each package's
module table (its ``__init__.py``) names its modules.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "CONTRIBUTING.md"
OLD_NAME = "NOTEBOOK" + "_GUIDE"  # the guide's former name, split so that this file does not cite it
#: folders never searched: the environment, git's own, and what the build and the setup write
SKIPPED = {".venv", ".git", "build", "site", "data", ".ruff_cache", ".pytest_cache", "__pycache__"}


def text() -> str:
    return GUIDE.read_text(encoding="utf-8")


def without_fences(markdown: str) -> str:
    return re.sub(r"^```.*?^```[ \t]*$", "", markdown, flags=re.M | re.S)


def code(markdown: str) -> list[str]:
    """The text of every inline code span and fenced block."""
    fences = re.findall(r"^```[^\n]*\n(.*?)^```", markdown, flags=re.M | re.S)
    return fences + re.findall(r"`([^`\n]+)`", without_fences(markdown))


def repository_files() -> list[Path]:
    """Every file of the repository: what git tracks plus new files it does not ignore (else a walk of the folder)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split("\0")
        files = [ROOT / name for name in listed if name]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, subfolders, names in os.walk(ROOT):
            subfolders[:] = [d for d in subfolders if d not in SKIPPED]
            files += [Path(folder) / name for name in names]
    return [p for p in files if p.is_file() and not SKIPPED & set(p.relative_to(ROOT).parts)]


def top_level() -> set[str]:
    """The repository's top-level entries (files and folders), as a fresh clone has them."""
    return {p.relative_to(ROOT).parts[0] for p in repository_files()}


def exists(path: str) -> bool:
    """``path`` exists; ``NN_name`` and ``NN`` stand for any notebook's name and number, ``*`` for anything."""
    pattern = path.rstrip("/").replace("NN_name", "NN_*").replace("NN", "[0-9][0-9]")
    return any(ROOT.glob(pattern)) if "*" in pattern or "[" in pattern else (ROOT / pattern).exists()


def named_paths(markdown: str) -> set[str]:
    """Every word in code that starts at a top-level entry of the repository (``tools/i18n.py``, ``Makefile``)."""
    top, named = top_level(), set()
    for span in code(markdown):
        for word in re.split(r"[\s=,]+", span):
            word = word.strip("`'\"()[]{}").rstrip(".;:'")
            first = word.split("/")[0]
            if first in top and (word == first or "/" in word):
                named.add(word)
    return named


def makefile_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m[1] for m in re.finditer(r"^([A-Za-z][\w-]*)\s*:(?!=)", makefile, re.M)}


def test_every_repository_path_the_guide_names_exists():
    named = named_paths(text())
    assert {"tools/i18n.py", "tests/grading_cases/", "notebooks/plumbing/errors.py", "tests/notebooks/test_hygiene.py"} <= named, (
        "the paths were not found"
    )
    missing = sorted(p for p in named if not exists(p))
    assert not missing, f"CONTRIBUTING.md names paths the repository does not have: {missing}"


def test_every_tool_is_in_the_table():
    rows = "\n".join(line for line in without_fences(text()).splitlines() if line.startswith("|"))
    tools = sorted(str(p.relative_to(ROOT)) for folder in ("tools", "benchmarks") for p in (ROOT / folder).glob("[!_]*.py"))
    assert len(tools) > 10, "no tools/*.py found"
    missing = [name for name in tools if f"`{name}`" not in rows]
    assert not missing, f"CONTRIBUTING.md's table lacks {missing}: one line each, from the file's first docstring line"


@pytest.mark.parametrize("package", ["plumbing", "grader"])
def test_each_packages_module_table_names_its_modules_and_only_those(package):
    """The table of ``notebooks/<package>/__init__.py``'s docstring: a row per module or subpackage (``reference_*``
    names several; a part may be named in its module's row), and no row for one that is gone."""
    folder = ROOT / "notebooks" / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    rules = [i for i, line in enumerate(doc.splitlines()) if line.startswith("====")]
    assert len(rules) >= 2, f"{package}/__init__.py's docstring has no module table"
    rows = doc.splitlines()[rules[0] + 1 : rules[1]]
    named = [re.match(r"``([\w*]+)``", row).group(1) for row in rows if row.startswith("``")]
    mentioned = named + re.findall(r"``(\w+)``", "\n".join(rows))  # a part named in its module's row
    modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("__")} | {
        p.name for p in folder.iterdir() if (p / "__init__.py").is_file()
    }
    assert not [m for m in modules if not any(fnmatch.fnmatch(m, n) for n in mentioned)], f"{package}'s table lacks them"
    assert not [n for n in named if not any(fnmatch.fnmatch(m, n) for m in modules)], f"{package}'s table names no module"


def test_every_make_target_exists():
    named = {m[1] for span in code(text()) for m in re.finditer(r"\bmake ([a-z][\w-]*)", span)}
    assert {"run", "test", "test-fast", "html", "slides", "pdf", "student", "classroom"} <= named
    missing = sorted(named - makefile_targets())
    assert not missing, f"CONTRIBUTING.md names make targets the Makefile does not have: {missing}"


def test_the_guides_paths_are_checked():
    """Mutation: a path that does not exist, and a target the Makefile lacks, are caught."""
    edited = text() + "\n`tools/no_such_tool.py` and `make no-such-target`\n"
    assert not exists("tools/no_such_tool.py") and "tools/no_such_tool.py" in named_paths(edited)
    assert "no-such-target" not in makefile_targets()
    assert exists("locale/zh_CN/LC_MESSAGES/NN_name.po") and exists("tests/grading_cases/nNN.py")


def test_nothing_cites_the_old_guide():
    citing = sorted(str(p.relative_to(ROOT)) for p in repository_files() if OLD_NAME.encode() in p.read_bytes())
    assert not citing, f"cite CONTRIBUTING.md instead of {OLD_NAME}.md in: {citing}"


def test_the_pre_commit_hooks_run_what_make_lint_runs():
    """.pre-commit-config.yaml's hooks are ruff's linter and formatter, from .venv, as `make lint` runs them."""
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = [hook["entry"].split() for repo in config["repos"] for hook in repo["hooks"]]
    assert [entry[:2] for entry in entries] == [[".venv/bin/ruff", "check"], [".venv/bin/ruff", "format"]]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "-m ruff check ." in lint and "-m ruff format --check ." in lint
