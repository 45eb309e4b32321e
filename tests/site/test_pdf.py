"""The printed series (`make pdf`, tools/build_pdf.py): one PDF per edition, which the course site serves from pdf/
(English) and zh/pdf/ (Chinese).

The PDFs checked are the ones that the site's build prints (the ``site`` fixture of tests/conftest.py, built once for
tests/test_site*.py too), from the same executed notebooks and with the same code as `make pdf`. They are read with
poppler's pdftotext and pdffonts (Debian: apt install poppler-utils; without them these tests are skipped with the
reason, and fail when CI is set): a sane number of pages, a title page, a table of contents and an outline (bookmarks)
whose entries lead to the notebooks' first pages, every notebook's title in order, page numbers, the solutions and the
deep dives printed, no nbgrader marker, no Colab cell or launch button, no raw TeX, no blank page; the Chinese one
with its text extractable and a CJK font embedded. Every relative link of the site leads to a file (the home pages
link the PDFs), and an element wider than the page stops the print. The pure parts (what is staged for paper) are
checked without Chromium; the rest is marked slow (the site's build, about a minute more with the PDFs).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from tools import build_pdf
from tools import pdf_print
from tools import pdf_stage
from tools import site_stage
from site_helpers import STEMS, built, tags, tiny_notebook, unavailable

EN, ZH = site_stage.EDITIONS["en"], site_stage.EDITIONS["zh_CN"]
#: what a CJK font's name holds, as pdffonts shows it (WenQuanYi, Noto Sans CJK, Source Han, the other systems' own)
CJK_FONT = re.compile(r"WenQuanYi|CJK|SourceHan|PingFang|YaHei|Hei|Song|Ming|Kai|Fang|Hiragino", re.I)
#: the site's words that have no place on paper: its toggles, its launch menu, the Colab cells
SITE_ONLY = [
    "Show the solution",
    "Hide the solution",
    "Show the deep dives",
    "显示解答",
    "隐藏解答",
    "展开深入探讨",
    "Launch interactive content",
    "Launch on",
    "在线运行笔记本",
    "mybinder.org",
    "colab.research.google.com",
    "open this notebook there",
    "Google Colab only",
    "BEGIN SOLUTION",
    "END SOLUTION",
    "Toggle hidden content",
]
RAW_TEX = re.compile(r"\\(frac|sqrt|mathrm|mathbf|text|cdot|sum|left|right|begin|end|operatorname)\b|\$\$")


def squeeze(text: str) -> str:
    """``text`` for comparing with what pdftotext gives: ligatures undone (NFKC), quotes straight (the site's
    typography curls them), all white space dropped."""
    text = unicodedata.normalize("NFKC", text).translate(str.maketrans("‘’“”", "''\"\""))
    return re.sub(r"\s+", "", text)


# --------------------------------------------------------------------------- what is staged for paper (no Chromium)


def test_print_notebook_leaves_out_the_colab_cells():
    nb = tiny_notebook()
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb.cells[1:1] = [
        md("**Google Colab:** open this notebook there", id="colab-link"),
        code("import sys  # Google Colab only", id="colab-setup"),
        code("x = 1\ny = x + 1\nprint(y)", id="graded"),
    ]
    before = nbformat.writes(nb)
    printed = pdf_stage.print_notebook(nb)
    assert nbformat.writes(nb) == before, "print_notebook changed the notebook it was given"
    ids = [c.get("id") for c in printed.cells]
    assert "colab-link" not in ids and "colab-setup" not in ids and len(printed.cells) == len(nb.cells) - 2
    assert [c.source for c in printed.cells] == [c.source for c in nb.cells if c.get("id") not in ("colab-link", "colab-setup")]


def test_notebook_title_is_the_first_heading_as_printed():
    nb = tiny_notebook(title="02 · Embedding lookup: from token ids to `token_embeddings_unnormalized`")
    assert pdf_stage.notebook_title(nb) == "02 · Embedding lookup: from token ids to token_embeddings_unnormalized"


@pytest.mark.parametrize("edition", [EN, ZH])
def test_the_title_page_names_the_weights_and_lists_the_notebooks_in_order(edition):
    runs = [
        {"stem": "01_a", "weights": "standin", "weights_description": "the stand-in"},
        {"stem": "02_b", "weights": "standin", "weights_description": "the stand-in"},
        {"stem": "03_c", "weights": "meta", "weights_description": "Meta's <weights>"},
    ]
    page = pdf_stage.title_page(edition, runs, ["04_d"], "https://github.com/o/r")
    words = pdf_stage.WORDS[edition.language]
    assert words["title"] in page and 'href="https://github.com/o/r"' in page
    standin = html.escape(words["standin"].format(model="Meta-Llama-3-8B"))
    assert page.count(standin) == 1 and "Meta&#x27;s &lt;weights&gt;" in page  # each kind of weights once, escaped
    assert "04_d" in page  # the notebook this edition lacks
    toctree = page[page.index("```{toctree}") :]
    assert ":hidden:" in toctree and re.findall(r"notebooks/\S+", toctree) == ["notebooks/01_a", "notebooks/02_b", "notebooks/03_c"]
    assert 'id="llama3-print-toc"' in page and f'data-title="{words["contents"]}"' in page


def test_print_files_keep_the_series_only(tmp_path):
    nb = tiny_notebook()
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("Colab", id="colab-link"))
    files = {
        "index.md": site_stage.BOOK / "index.md",
        "images/x.png": tmp_path / "x.png",
        "notebooks/01_tiny.ipynb": nbformat.writes(nb),
        f"{site_stage.SERVED}notebooks/01_tiny.ipynb": "served",
        "docs/errata.md": "# Errata",
        "docs/instructor.md": "# Instructor guide",
    }
    printed = pdf_stage.print_files(files, EN, ["01_tiny"], [], "https://github.com/o/r")
    assert sorted(printed) == ["images/x.png", "index.md", "notebooks/01_tiny.ipynb"]
    assert printed["images/x.png"] == tmp_path / "x.png"
    assert "notebooks/01_tiny" in printed["index.md"] and "llama3-title-page" in printed["index.md"]
    assert "colab-link" not in printed["notebooks/01_tiny.ipynb"]


def test_without_chromium_or_a_chinese_font_the_message_says_what_to_install(monkeypatch):
    monkeypatch.delenv("LLAMA3_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(site_stage.SiteError, match="apt install chromium"):
        pdf_print.find_chromium()
    monkeypatch.setattr(pdf_print.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(pdf_print.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout="\n"))
    with pytest.raises(site_stage.SiteError, match="fonts-wqy-microhei"):
        pdf_print.check_cjk_font(["en", "zh_CN"])
    pdf_print.check_cjk_font(["en"])  # English needs none


# --------------------------------------------------------------------------- the PDFs of the site


def poppler(tool: str, *args: str) -> str:
    if not shutil.which(tool):
        unavailable(f"{tool} (poppler) is not installed; on Debian: apt install poppler-utils")
    return subprocess.run([tool, *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def printed(site, executed, zh_stems) -> dict[str, tuple[Path, list[str], list[str]]]:
    """language -> (its PDF in the site, the text of each page, its notebooks in order)."""
    found = {}
    for lang, stems in (("en", STEMS), ("zh_CN", zh_stems)):
        pdf = site / build_pdf.site_path(lang)
        assert pdf.is_file() and pdf.stat().st_size > 0, f"the site has no {pdf.relative_to(site)}"
        pages = poppler("pdftotext", "-raw", "-enc", "UTF-8", str(pdf), "-").split("\f")
        found[lang] = (pdf, pages[:-1] if pages and not pages[-1].strip() else pages, stems)
    return found


def titles(executed: Path, stems: list[str], lang: str) -> list[str]:
    return [pdf_stage.notebook_title(site_stage.edition_notebook(executed / f"{stem}.ipynb", lang)) for stem in stems]


def outline_pages(pdf: Path) -> list[tuple[str, int]]:
    """Every entry of the PDF's outline (bookmarks), depth first: its title and the page (from 1) it leads to."""
    import pypdf

    reader = pypdf.PdfReader(pdf)
    found = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                found.append((item.title, reader.get_destination_page_number(item) + 1))

    walk(reader.outline)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_title_page_contents_outline_and_every_notebook_in_order_with_page_numbers(printed, executed, lang):
    pdf, pages, stems = printed[lang]
    info = poppler("pdfinfo", str(pdf))
    count = int(re.search(r"^Pages:\s+(\d+)", info, re.M)[1])
    assert count == len(pages), f"pdfinfo says {count} pages, pdftotext gave {len(pages)}"
    assert 5 * len(stems) <= count <= 60 * len(stems), f"{pdf.name}: {count} pages for {len(stems)} notebooks"
    assert re.search(r"^Page size:.*\(A4\)", info, re.M), info
    words = pdf_stage.WORDS[lang]
    assert squeeze(words["title"]) in squeeze(pages[0]) and squeeze(words["contents"]) in squeeze(pages[1])
    assert not re.search(rf"\b1 / {count}\b", pages[0]), "the title page carries a page number"
    unnumbered = [i + 1 for i, text in enumerate(pages[1:], 1) if f"{i + 1} / {count}" not in text]
    assert not unnumbered, f"{pdf.name}: pages without their number: {unnumbered[:10]}"
    figures = {int(line.split()[0]) for line in poppler("pdfimages", "-list", str(pdf)).splitlines()[2:] if line.strip()}
    blank = [
        i + 1
        for i, text in enumerate(pages)  # no text but the page number, and no figure either
        if not text.replace(f"{i + 1} / {count}", "").strip() and i + 1 not in figures
    ]
    assert not blank, f"{pdf.name}: blank pages: {blank}"
    outline = outline_pages(pdf)
    starts, listed = [], []
    for stem, title in zip(stems, titles(executed, stems, lang)):
        where = [i for i, text in enumerate(pages) if squeeze(title) in squeeze(text)]
        assert len(where) >= 2, f"{pdf.name}: the title of {stem}, {title!r}, is in the contents and on its first page: {where}"
        contents, start = where[0], where[1]
        marks = [page for text, page in outline if squeeze(text) == squeeze(title)]
        assert marks == [start + 1], f"{pdf.name}: the outline leads to pages {marks} for {stem}, which starts on page {start + 1}"
        starts.append(start)
        listed.append(contents)
    assert starts == sorted(starts) and len(set(starts)) == len(starts), f"{pdf.name}: notebooks out of order: {starts}"
    assert max(listed) < starts[0], f"{pdf.name}: the contents (pages {listed}) do not list every notebook before the first"


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_solutions_and_deep_dives_are_printed_and_the_site_only_parts_are_not(printed, executed, lang):
    pdf, pages, stems = printed[lang]
    text = "\n".join(pages)
    flat = squeeze(text)
    left = [w for w in SITE_ONLY if squeeze(w) in flat]
    assert not left, f"{pdf.name} prints what belongs to the site or to Jupyter: {left}"
    raw = RAW_TEX.findall(text)
    assert not raw, f"{pdf.name}: TeX left untypeset: {raw[:5]}"
    solutions, missing = 0, []
    for stem in stems:
        nb = site_stage.edition_notebook(executed / f"{stem}.ipynb", lang)
        cells = [c for c in nb.cells if c.get("id") not in pdf_stage.LEFT_OUT_CELLS]
        for i, cell in enumerate(cells):
            tagged = "solution" in cell.metadata.get("tags", [])
            after_solution = i and "solution" in cells[i - 1].metadata.get("tags", [])
            if tagged and (cell.cell_type == "markdown" or not after_solution):
                solutions += 1  # one label per solution: its prose (and the code after it), or its code alone
            if tagged and cell.cell_type == "code":
                line = next((x for x in cell.source.splitlines() if len(x.strip()) > 12 and "SOLUTION" not in x), None)
                if line and squeeze(line) not in flat:
                    missing.append(f"{stem}: solution code {line.strip()!r}")
        dives = False
        for cell in cells:
            if cell.cell_type != "markdown":
                continue
            dives = dives or bool(re.search(r"^## .*Deep dives\s*$", cell.source, re.M))
            for heading in re.findall(r"^### (.+)$", cell.source, re.M) if dives else []:
                plain = re.sub(r"\$[^$]*\$", "", heading).replace("`", "").replace("*", "")
                if squeeze(plain) and squeeze(plain) not in flat:
                    missing.append(f"{stem}: deep dive {heading!r}")
    assert not missing, f"{pdf.name} lacks: {missing[:10]}"
    labels = sum(1 for line in text.splitlines() if line.strip() == pdf_stage.WORDS[lang]["solution"])
    assert solutions and labels >= solutions, f"{pdf.name}: {labels} solutions labelled, the notebooks have {solutions}"


@pytest.mark.slow
def test_the_chinese_pdf_has_its_text_and_a_cjk_font_embedded(printed):
    pdf, pages, _ = printed["zh_CN"]
    chinese = len(re.findall(r"[\u4e00-\u9fff]", "".join(pages)))
    assert chinese > 200 * len(pages) // 10, f"{pdf.name}: only {chinese} Chinese characters can be extracted"
    fonts = poppler("pdffonts", str(pdf)).splitlines()[2:]
    embedded = [line.split()[0] for line in fonts if CJK_FONT.search(line.split()[0]) and " yes " in f" {line} "]
    assert embedded, f"{pdf.name} embeds no CJK font by name:\n" + "\n".join(fonts[:20])


@pytest.mark.slow
def test_what_would_be_cut_off_at_the_margin_stops_the_print(tmp_path):
    """An equation wider than the page (MathJax does not break lines) stops the print with a message that names it."""
    wide = " + ".join(f"x_{{{i}}}" for i in range(120))
    nbformat.write(tiny_notebook(markdown=f"A sum too long for a line:\n\n$$\n{wide}\n$$"), tmp_path / "01_tiny.ipynb")
    with pytest.raises(site_stage.SiteError, match=r"reach past the right margin.*<svg>"):
        built(build_pdf.build, tmp_path, tmp_path / "pdf", home=tmp_path, stems=["01_tiny"], languages=("en",))
    assert not (tmp_path / "pdf").exists() or not any((tmp_path / "pdf").iterdir())


@pytest.mark.slow
def test_every_relative_link_of_the_site_leads_to_a_file(site):
    """The PDFs are in the site whenever it is built, so links to them (the home pages') never break; nor does any
    other link inside the site (tests/site/test_site.py checks what pages load, this what they link to)."""
    broken, checked = [], 0
    for page in site.rglob("*.html"):
        if "_static" in page.parts:
            continue
        for tag, attrs in tags(page):
            href = attrs.get("href") if tag == "a" else None
            if not href or urlsplit(href).scheme or href.startswith(("#", "//")):
                continue
            checked += 1
            if not (page.parent / unquote(urlsplit(href).path)).exists():
                broken.append(f"{page.relative_to(site)} -> {href}")
    assert checked and not broken, f"links that lead nowhere: {broken[:10]}"
    for lang, edition in site_stage.EDITIONS.items():  # each edition's home page links pdf/<its file>
        assert [p.name for p in (site / edition.folder / build_pdf.PDF_FOLDER).iterdir()] == [build_pdf.PDF_NAMES[lang]]
    assert build_pdf.site_path("en") == "pdf/llama3-step-by-step.pdf"
    assert build_pdf.site_path("zh_CN") == "zh/pdf/llama3-step-by-step.zh-CN.pdf"
