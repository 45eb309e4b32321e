"""The instructor guide, docs/instructor.md and docs/instructor.zh-CN.md, and its place on the course site.

No notebook runs and no Sphinx: the two editions have the same sections, every ``make`` target and repository
path they name exists, the table of common mistakes covers every notebook of the series and every mistake of
tests/notebooks/test_mutations.py, and tools/site_stage.py stages the guide into both editions of the site with its links
rewritten (tests/site/test_site.py builds the real site).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import plumbing
from tools import site_stage
from grader.steps import STEPS

ROOT = Path(__file__).resolve().parents[2]
EN, ZH = site_stage.EDITIONS["en"], site_stage.EDITIONS["zh_CN"]
GUIDES = {"en": site_stage.DOCS / EN.instructor, "zh_CN": site_stage.DOCS / ZH.instructor}
STEMS = [p.stem for p in plumbing.series_notebooks()]
#: What the guide describes before it lands in the repository (the printable PDF): a ``make`` target or path
#: listed here may be missing. Delete an entry once it exists.
PENDING_TARGETS: set[str] = set()
PENDING_PATHS: set[str] = set()
#: The mistakes section: its number in both editions (``## 6. ...``).
MISTAKES = 6


def text(lang: str) -> str:
    return GUIDES[lang].read_text(encoding="utf-8")


def without_fences(markdown: str) -> str:
    return re.sub(r"^```.*?^```[ \t]*$", "", markdown, flags=re.M | re.S)


def headings(markdown: str) -> list[tuple[int, str]]:
    """(level, title) of every heading outside fenced code."""
    return [(len(m[1]), m[2].strip()) for m in re.finditer(r"^(#{1,6}) (.*)$", without_fences(markdown), re.M)]


def sections(markdown: str, level: int = 2) -> list[tuple[str, str]]:
    """(heading, body) of every heading of ``level``, the body up to the next heading of that level or higher."""
    parts = re.split(rf"^(#{{1,{level}}} .*)$", without_fences(markdown), flags=re.M)
    return [(parts[i].lstrip("#").strip(), parts[i + 1]) for i in range(1, len(parts), 2) if parts[i].startswith("#" * level + " ")]


def table_rows(markdown: str) -> list[int]:
    """The number of body rows of each table in ``markdown``."""
    tables = re.findall(r"(?:^\|.*\|[ \t]*\n)+", markdown, flags=re.M)
    return [len(t.strip().splitlines()) - 2 for t in tables]


def code(markdown: str) -> list[str]:
    """The text of every inline code span and fenced block."""
    fences = re.findall(r"^```[^\n]*\n(.*?)^```", markdown, flags=re.M | re.S)
    return fences + re.findall(r"`([^`\n]+)`", without_fences(markdown))


# --------------------------------------------------------------------------- the two editions


def test_both_guides_exist_with_the_same_sections():
    en, zh = text("en"), text("zh_CN")
    assert [level for level, _ in headings(en)] == [level for level, _ in headings(zh)], "the headings differ in structure"
    numbers = [[re.match(r"(\d+)\.", title)[1] for title, _ in sections(t)] for t in (en, zh)]
    assert numbers[0] == numbers[1] == [str(i) for i in range(1, len(numbers[0]) + 1)], numbers
    for (title_en, body_en), (title_zh, body_zh) in zip(sections(en, 3), sections(zh, 3)):
        assert table_rows(body_en) == table_rows(body_zh), f"{title_en} / {title_zh}: the tables differ"
    assert "instructor.zh-CN.md" in en and "instructor.md" in zh, "each guide links to the other"


def test_no_dollar_signs_outside_code():
    """MyST reads $...$ as mathematics (myst_enable_extensions: dollarmath)."""
    for lang in GUIDES:
        prose = re.sub(r"`[^`\n]+`", "", without_fences(text(lang)))
        assert "$" not in prose, f"{GUIDES[lang].name}: a dollar sign outside code"


# --------------------------------------------------------------------------- what the guide names exists


def makefile_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m[1] for m in re.finditer(r"^([A-Za-z][\w-]*)\s*:(?!=)", makefile, re.M)}


@pytest.mark.parametrize("lang", GUIDES)
def test_every_make_target_exists(lang):
    named = {m[1] for span in code(text(lang)) for m in re.finditer(r"\bmake ([a-z][\w-]*)", span)}
    assert {"html", "bench", "bench-models"} <= named
    missing = named - makefile_targets() - PENDING_TARGETS
    assert not missing, f"{GUIDES[lang].name} names make targets the Makefile does not have: {sorted(missing)}"


def tracked_top_level() -> set[str]:
    """The first path component of every file in git (what a fresh clone has), or of the folder's entries."""
    try:
        files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return {p.name for p in ROOT.iterdir() if p.name not in (".git", ".venv", "build", "site", "data")}
    return {f.split("/")[0] for f in files}


def exists(path: str) -> bool:
    pattern = path.rstrip("/").replace("NN", "[0-9][0-9]")
    return any(ROOT.glob(pattern)) if "*" in pattern or "[" in pattern else (ROOT / pattern).exists()


@pytest.mark.parametrize("lang", GUIDES)
def test_every_repository_path_exists(lang):
    guide, top = text(lang), tracked_top_level()
    named = set()
    for span in code(guide):  # paths in code: those that start at a top-level entry of the repository
        for word in re.split(r"[\s=]+", span):
            word = word.lstrip("`'\"(").rstrip("`'\",.;:)")
            if "/" in word and word.split("/")[0] in top or word in top and "." in word:
                named.add(word)
    for target in re.findall(r"(?<!!)\]\(([^)\s]+)\)", without_fences(guide)):  # relative links, from docs/
        if not re.match(r"[a-z][a-z0-9+.-]*:|#", target, re.I):
            path = (GUIDES[lang].parent / target.split("#")[0]).resolve()
            if path.relative_to(ROOT).parts[0] not in site_stage.SITE_ONLY:  # slides, PDFs: only in the built site
                named.add(path.relative_to(ROOT).as_posix())
    assert {"tests/notebooks/test_mutations.py", "binder/", "requirements.lock", ".github/workflows/classroom.yml"} <= named, (
        "the paths were not found"
    )
    missing = sorted(p for p in named - PENDING_PATHS if not exists(p))
    assert not missing, f"{GUIDES[lang].name} names paths the repository does not have: {missing}"


# --------------------------------------------------------------------------- the common mistakes


def mutations() -> list[tuple]:
    """tests/notebooks/test_mutations.py's ``MUTATIONS``, whether or not pytest collected that file in this run."""
    import importlib.util
    import sys

    module = sys.modules.get("test_mutations")
    if module is None:
        spec = importlib.util.spec_from_file_location("test_mutations", ROOT / "tests" / "notebooks" / "test_mutations.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.MUTATIONS


def mistakes(lang: str) -> dict[str, str]:
    """Notebook number -> the body of its subsection in the mistakes section."""
    body = [b for title, b in sections(text(lang)) if title.startswith(f"{MISTAKES}.")][0]
    return {title[:2]: sub for title, sub in sections(f"## x\n{body}", 3)}


@pytest.mark.parametrize("lang", GUIDES)
def test_the_mistakes_tables_cover_every_notebook(lang):
    MUTATIONS = mutations()

    found = mistakes(lang)
    assert sorted(found) == sorted(stem[:2] for stem in STEMS), f"mistakes for {sorted(found)}, the series is {STEMS}"
    for number, body in found.items():
        assert table_rows(body) and table_rows(body)[0] >= 4, f"{number}: a table of at least 4 mistakes"
    for stem, mistake, _, _, check in MUTATIONS:
        assert f"`{check}" in found[stem], f"{GUIDES[lang].name}: {stem}, {mistake!r}: the check {check!r} is not in the table"


# --------------------------------------------------------------------------- on the site


@pytest.mark.parametrize("edition", [EN, ZH], ids=["en", "zh_CN"])
def test_the_guide_is_staged_into_both_editions(edition):
    pages = site_stage.doc_pages(site_stage.DOCS, edition)
    assert pages["docs/instructor"] == GUIDES[edition.language], "the guide is a page of docs/"
    assert site_stage.page_names(STEMS, pages)[-len(pages) :] == list(pages)
    assert list(pages)[-1] == "docs/instructor", "the guide comes after the errata page"
    files = site_stage.stage_files(ROOT / "notebooks", [], ROOT / "notebooks", edition, pages)
    staged = site_stage.errata_text(GUIDES[edition.language].read_text(encoding="utf-8"), edition, STEMS, site_stage.DOCS)
    assert files["docs/instructor.md"] == site_stage.errata_text(
        pages["docs/instructor"].read_text(encoding="utf-8"), edition, [], site_stage.DOCS
    )
    other = ZH if edition is EN else EN
    to_other = ("../zh/" if edition is EN else "../../") + "docs/instructor.html"
    assert f'<a href="{to_other}" hreflang="{other.lang}">' in staged, "the link to the other edition's guide"
    assert '<a href="../slides/03_rmsnorm.slides.html">' in staged, "the links to the slides stay links"
    assert "](../notebooks/zh/" not in staged
    for target in re.findall(r"(?<!!)\]\(([^)\s]+)\)", without_fences(staged)):  # what Sphinx resolves
        stem = re.fullmatch(r"\.\./notebooks/(\d\d_\w+)\.ipynb", target)
        assert (
            (stem and stem[1] in STEMS) or target in [f"{page}.md" for page in site_stage.DOC_PAGES] or re.match(r"https?://|#", target)
        ), f"{edition.language}: a link Sphinx cannot resolve: {target}"
    assert "](errata.md)" in staged, "the link to this edition's errata page"


def test_the_home_pages_list_the_guide():
    for edition in (EN, ZH):
        home = (site_stage.BOOK / edition.index).read_text(encoding="utf-8")
        block = re.search(r"```\{llama3-toctree-if-found\}\n(.*?)```", home, flags=re.S)
        assert block and [line for line in block[1].splitlines() if line.startswith("docs/")] == [
            f"docs/{page}" for page in site_stage.DOC_PAGES
        ], f"{edition.index}: the toctree of the pages of docs/"


def test_links_between_pages_of_docs():
    link = site_stage.errata_text
    assert (
        link("[guide](instructor.zh-CN.md)", EN, [], ROOT / "docs", ROOT)
        == '<a href="../zh/docs/instructor.html" hreflang="zh-CN">guide</a>'
    )
    assert link("[勘误页](errata.zh-CN.md)", ZH, [], ROOT / "docs", ROOT) == "[勘误页](errata.md)"
    assert link("[指南](instructor.zh-CN.md)", ZH, [], ROOT / "docs", ROOT) == "[指南](instructor.md)"
    assert link("[errata](errata.md)", ZH, [], ROOT / "docs", ROOT) == '<a href="../../docs/errata.html" hreflang="en">errata</a>'
    assert (
        link("[slides](../slides/01_x.slides.html), [pdf](../pdf/a.pdf)", ZH, [], ROOT / "docs", ROOT)
        == '<a href="../slides/01_x.slides.html">slides</a>, <a href="../pdf/a.pdf">pdf</a>'
    )
    assert link("![img](../slides/x.png)", EN, [], ROOT / "docs", ROOT) == "![img](../slides/x.png)"
    assert site_stage.page_names(["01_x"], True) == ["index", "notebooks/01_x", "docs/errata"]
    assert site_stage.page_names(["01_x"], {"docs/errata": 0, "docs/instructor": 0}) == [
        "index",
        "notebooks/01_x",
        "docs/errata",
        "docs/instructor",
    ]


def test_classroom_workflow_is_up_to_date_with_one_test_per_step():
    import yaml

    from tools import classroom

    assert classroom.WORKFLOW.read_text(encoding="utf-8") == classroom.workflow(), "run `make classroom`"
    steps = yaml.safe_load(classroom.workflow())["jobs"]["run-autograding-tests"]["steps"]
    graders = [s for s in steps if "autograding-command-grader" in s.get("uses", "")]
    every = [s for number in sorted(STEPS) for s in STEPS[number]]
    assert [g["with"]["command"].split()[-1] for g in graders] == [s.grade_id for s in every]
    assert sum(g["with"]["max-score"] for g in graders) == sum(s.points for s in every)
    for g in graders:
        assert Path(ROOT / g["with"]["command"].split()[4]).is_file()
    reporter = steps[-1]
    assert reporter["with"]["runners"].split(",") == [g["id"] for g in graders]
    assert set(reporter["env"]) == {f"{g['id'].upper()}_RESULTS" for g in graders}


def test_instructor_guides_list_every_step_with_its_points():
    for name in ("instructor.md", "instructor.zh-CN.md"):
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        rows = dict(re.findall(r"^\| \d\d_\w+ \| `([\w-]+)` \| .* \| (\d+) \|$", text, re.M))
        assert rows == {s.grade_id: str(s.points) for steps in STEPS.values() for s in steps}, name
