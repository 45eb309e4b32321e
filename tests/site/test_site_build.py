"""The pure parts of the site's build (tools/site_stage.py, and the command line of tools/build_site.py).

No Sphinx and no browser: the links of the errata pages, image paths, the staging of a tiny folder of
notebooks, and the ``python -m sphinx`` command line. tests/site/test_site.py builds the real site; the last test here
reads the home pages' HTML of that site (the ``site`` fixture of tests/conftest.py, one build for every module).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import nbformat
import pytest

from tools import attachments
from tools import build_site
from tools import i18n
import plumbing
from tools import site_stage

ROOT = Path(__file__).resolve().parents[2]
EN, ZH = site_stage.EDITIONS["en"], site_stage.EDITIONS["zh_CN"]
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16  # a non-empty file is all the staging checks


def errata(text: str, edition=EN, stems=("01_tiny",), folder: Path = ROOT / "docs") -> str:
    return site_stage.errata_text(text, edition, list(stems), folder, ROOT)


# --------------------------------------------------------------------------- links


def test_notebook_links_stay_in_their_edition_or_lead_to_the_english_page():
    link = "See [the tiny page](../notebooks/01_tiny.ipynb#a-section)."
    assert errata(link) == link  # Sphinx turns it into the page's link
    assert errata(link, ZH) == link
    assert errata("见[小页面](../notebooks/zh/01_tiny.ipynb)。", ZH) == "见[小页面](../notebooks/01_tiny.ipynb)。"
    left_out = errata("[02](../notebooks/02_other.ipynb#x)", ZH)  # not in the Chinese edition: its English page
    assert left_out == '<a href="../../notebooks/02_other.html#x" hreflang="en">02</a>'
    assert errata("[02](../notebooks/02_other.ipynb)", EN) == "[02](../notebooks/02_other.ipynb)"
    assert errata("![a figure](../notebooks/01_tiny.ipynb)") == "![a figure](../notebooks/01_tiny.ipynb)"


def test_errata_links_lead_to_the_other_editions_page():
    assert (
        errata("中文版：[errata.zh-CN.md](errata.zh-CN.md)")
        == '中文版：<a href="../zh/docs/errata.html" hreflang="zh-CN">errata.zh-CN.md</a>'
    )
    assert errata("English: [errata.md](errata.md)", ZH) == 'English: <a href="../../docs/errata.html" hreflang="en">errata.md</a>'
    assert errata("[this page](errata.md)") == "[this page](errata.md)"  # its own edition: left to Sphinx
    assert errata("[<&>](errata.zh-CN.md)").endswith(">&lt;&amp;&gt;</a>")


def test_repository_links_become_the_files_path():
    assert errata("See [the README](../README.md).") == "See the README (`README.md`)."
    assert errata("[`tools/i18n.py`](../tools/i18n.py#L3)") == "`tools/i18n.py`"
    assert errata("[the glossary](../notebooks/zh/README.md)", ZH) == "the glossary (`notebooks/README.md`)"
    kept = "[web](https://example.org/a.md), [anchor](#errata), [root](/x.md), ![img](../images/x.png)"
    assert errata(kept) == kept


def test_east_asian_line_breaks():
    wrap = site_stage.east_asian_line_breaks
    assert wrap("见小页面和\n这一行。") == "见小页面和这一行。"
    assert wrap("中文，\n  下一行") == "中文，下一行"
    assert wrap("English\nnext line") == "English\nnext line"
    assert wrap("中文\nEnglish\n中文") == "中文\nEnglish\n中文"
    assert wrap("```\n中文\n中文\n```\n中文\n中文") == "```\n中文\n中文\n```\n中文中文"  # fenced code is untouched
    assert errata("见[小页面](../notebooks/01_tiny.ipynb)和\n这一行。", ZH) == "见[小页面](../notebooks/01_tiny.ipynb)和这一行。"
    assert errata("英文版\n不变", EN) == "英文版\n不变"


# --------------------------------------------------------------------------- images


def test_image_sources():
    md = (
        '![a](../images/a.png) ![b](<../images/b.png> "title") <img alt="x" src="../images/c.png">'
        " ![d](data:image/png;base64,AAAA) ![e](attachment:e.png)"
    )
    assert site_stage.image_sources(md) == ["../images/a.png", "../images/b.png", "../images/c.png"]


def test_page_images_map_the_staged_path_to_the_file(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a b.png").write_bytes(PNG)
    found = site_stage.page_images("![x](../images/a%20b.png?v=1#top)", "01_tiny.ipynb", tmp_path / "notebooks", "notebooks", tmp_path)
    assert found == {"images/a b.png": (tmp_path / "images" / "a b.png").resolve()}
    assert site_stage.page_images("![x](images/a%20b.png)", "index.md", tmp_path, "", tmp_path) == {
        "images/a b.png": (tmp_path / "images" / "a b.png").resolve()
    }


@pytest.mark.parametrize(
    "src, message",
    [
        ("../images/none.png", "missing or empty"),
        ("../images/empty.png", "missing or empty"),
        ("https://example.org/x.png", "remote address"),
        ("//cdn/x.png", "remote address"),
        ("../../outside.png", "outside"),
    ],
)
def test_bad_images_stop_the_staging(tmp_path, src, message):
    (tmp_path / "repo" / "images").mkdir(parents=True)
    (tmp_path / "repo" / "images" / "empty.png").write_bytes(b"")
    (tmp_path / "outside.png").write_bytes(PNG)
    with pytest.raises(site_stage.SiteError, match=message):
        site_stage.page_images(f"![x]({src})", "01_tiny.ipynb", tmp_path / "repo" / "notebooks", "notebooks", tmp_path / "repo")


def test_one_image_path_for_both_editions():
    """notebooks/zh/ holds the English notebooks' image paths, and each finds the real file from there."""
    for english in plumbing.series_notebooks():
        chinese = i18n.edition_path(english)
        en = site_stage.image_sources(site_stage.markdown_of(nbformat.read(english, as_version=4)))
        zh = site_stage.image_sources(site_stage.markdown_of(nbformat.read(chinese, as_version=4)))
        assert zh == en, f"{chinese.name}: image paths {zh}, the English notebook has {en}"
        for src in zh:
            assert (chinese.parent / src).resolve() == (english.parent / src).resolve(), src
            assert (chinese.parent / src).resolve().is_relative_to(ROOT / "images"), src
            assert (chinese.parent / src).is_file(), f"{src} does not open from notebooks/zh/ (notebooks/images -> ../images)"


# --------------------------------------------------------------------------- staging


def tiny_notebook(title: str, markdown: str = "") -> nbformat.NotebookNode:
    md = nbformat.v4.new_markdown_cell
    code = nbformat.v4.new_code_cell("print(1)", execution_count=1, outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")])
    return nbformat.v4.new_notebook(cells=[md(f"# {title}\n\n{markdown}"), code])


@pytest.fixture()
def tiny(tmp_path, monkeypatch) -> Path:
    """A repository-like folder: notebooks/01_tiny (translated) and 02_tiny (not), images/, docs/, locale/."""
    home = tmp_path / "notebooks"
    home.mkdir()
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "tiny.png").write_bytes(PNG)
    (home / "images").symlink_to("../images")  # as in the repository
    nbformat.write(tiny_notebook("01 · Tiny", "![a figure](../images/tiny.png)"), home / "01_tiny.ipynb")
    nbformat.write(tiny_notebook("02 · Other"), home / "02_tiny.ipynb")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "errata.zh-CN.md").write_text(
        "# 勘误\n\n见[小页面](../notebooks/zh/01_tiny.ipynb)和\n[另一页](../notebooks/zh/02_tiny.ipynb)，\n还有这一行。\n", encoding="utf-8"
    )
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path / "locale")
    catalogue = i18n.extract(home / "01_tiny.ipynb")
    for message in catalogue:
        if message.id:
            message.string = message.id.replace("Tiny", "小页面").replace("a figure", "一幅图")
    i18n.write_catalogue(catalogue, i18n.catalogue_path(home / "01_tiny.ipynb"))
    i18n.write_catalogue(i18n.extract(home / "02_tiny.ipynb"), i18n.catalogue_path(home / "02_tiny.ipynb"))
    return tmp_path


def test_staging_the_english_edition(tiny):
    home = tiny / "notebooks"
    stems = site_stage.translated(home, ["01_tiny", "02_tiny"], "en")
    files = site_stage.stage_files(home, stems, home, EN)
    assert files == {
        "index.md": site_stage.BOOK / "index.md",
        "images/path_overview.png": (ROOT / "images" / "path_overview.png").resolve(),  # the home page's figure
        "notebooks/01_tiny.ipynb": home / "01_tiny.ipynb",  # copied as it is: the download button serves it
        "images/tiny.png": (tiny / "images" / "tiny.png").resolve(),
        "notebooks/02_tiny.ipynb": home / "02_tiny.ipynb",
    }
    site_stage.write_files(files, tiny / "stage")
    written = sorted(p.relative_to(tiny / "stage").as_posix() for p in (tiny / "stage").rglob("*") if p.is_file())
    assert written == sorted(files)
    assert (tiny / "stage" / "notebooks" / "01_tiny.ipynb").read_bytes() == (home / "01_tiny.ipynb").read_bytes()
    index = (tiny / "stage" / "index.md").read_text(encoding="utf-8")
    assert "notebooks/[0-9][0-9]_*" in index and ":glob:" in index and "%(" not in index


def test_staging_the_chinese_edition(tiny):
    home = tiny / "notebooks"
    stems = site_stage.translated(home, ["01_tiny", "02_tiny"], "zh_CN")
    assert stems == ["01_tiny"]  # 02_tiny's catalogue is empty
    page = site_stage.errata_page(tiny / "docs", ZH)
    files = site_stage.stage_files(home, stems, home, ZH, page)
    assert sorted(files) == [
        "docs/errata.md",
        "images/tiny.png",
        "images/zh/path_overview.png",
        "index.md",
        "notebooks/01_tiny.ipynb",
    ]  # the home page's figure in Chinese
    assert files["index.md"] == site_stage.BOOK / "index.zh_CN.md"
    # the notebook is what tools/i18n.py writes into notebooks/zh/, image path unchanged
    assert files["notebooks/01_tiny.ipynb"] == i18n.notebook_text(home / "01_tiny.ipynb")
    assert "![一幅图](../images/tiny.png)" in files["notebooks/01_tiny.ipynb"]
    assert files["docs/errata.md"] == (
        '# 勘误\n\n见[小页面](../notebooks/01_tiny.ipynb)和\n<a href="../../notebooks/'
        '02_tiny.html" hreflang="en">另一页</a>，还有这一行。\n'
    )
    assert site_stage.page_names(stems, page is not None) == ["index", "notebooks/01_tiny", "docs/errata"]
    with pytest.raises(site_stage.SiteError, match="02_tiny.ipynb has no complete translation"):
        site_stage.stage_files(home, ["02_tiny"], home, ZH)


def test_staging_shows_attachments_as_the_files_and_serves_the_notebook_as_it_is(tiny):
    """MyST-NB shows no attachments: the staged copy says ../images/ again, the download is the notebook itself."""
    home = tiny / "notebooks"
    assert attachments.update(home / "01_tiny.ipynb", tiny / "images")  # ![a figure](attachment:tiny.png)
    catalogue = i18n.extract(home / "01_tiny.ipynb")  # its translation, the image target changed as in the English
    for message in catalogue:
        if message.id:
            message.string, message.flags = message.id.replace("Tiny", "小页面").replace("a figure", "一幅图"), set()
    i18n.write_catalogue(catalogue, i18n.catalogue_path(home / "01_tiny.ipynb"))
    for edition, served in [(EN, home / "01_tiny.ipynb"), (ZH, i18n.notebook_text(home / "01_tiny.ipynb"))]:
        files = site_stage.stage_files(home, ["01_tiny"], home, edition)
        figure = "images/path_overview.png" if edition is EN else "images/zh/path_overview.png"
        assert sorted(files) == sorted(
            ["_sources/notebooks/01_tiny.ipynb", figure, "images/tiny.png", "index.md", "notebooks/01_tiny.ipynb"]
        )
        assert files["_sources/notebooks/01_tiny.ipynb"] == served  # what the download button serves
        assert "attachment:tiny.png" in site_stage.markdown_of(site_stage.edition_notebook(home / "01_tiny.ipynb", edition.language))
        shown = nbformat.reads(files["notebooks/01_tiny.ipynb"], as_version=4)
        assert "](../images/tiny.png)" in shown.cells[0].source and "attachments" not in shown.cells[0]
        assert shown.cells[1] == nbformat.read(home / "01_tiny.ipynb", as_version=4).cells[1]
        assert site_stage.served_files(files) == {"_sources/notebooks/01_tiny.ipynb": served}
        assert sorted(site_stage.source_files(files)) == sorted(set(files) - {"_sources/notebooks/01_tiny.ipynb"})


def test_staging_stops_at_a_missing_or_unexecuted_notebook(tiny):
    home = tiny / "notebooks"
    with pytest.raises(site_stage.SiteError, match="03_absent.ipynb is missing: run `make run`"):
        site_stage.translated(home, ["01_tiny", "03_absent"], "en")
    nb = tiny_notebook("03 · Never ran")
    nb.cells[1].execution_count, nb.cells[1].outputs = None, []
    nbformat.write(nb, home / "03_new.ipynb")
    with pytest.raises(site_stage.SiteError, match="03_new.ipynb was never executed"):
        site_stage.stage_files(home, ["03_new"], home, EN)


# --------------------------------------------------------------------------- the command line of Sphinx


def test_sphinx_command(tmp_path):
    other = {"label": "English", "lang": "en", "root": "../", "pages": ["index", "notebooks/01_tiny"]}
    command = build_site.sphinx_command(tmp_path / "src", tmp_path / "html", ZH, other, python="python")
    assert command[:3] == ["python", "-m", "sphinx"] and command[-2:] == [str(tmp_path / "src"), str(tmp_path / "html")]
    assert command[command.index("-b") + 1] == "html" and command[command.index("-c") + 1] == str(site_stage.BOOK)
    assert {"-W", "--keep-going", "-E", "-a", "-q"} <= set(command)
    settings = dict(command[i + 1].split("=", 1) for i, arg in enumerate(command) if arg == "-D")
    assert settings["language"] == "zh_CN" and settings["copyright"].startswith("Llama 3, step by step 的作者")
    # the Chinese pages launch the notebooks where tools/i18n.py writes them (tools/book/launch_links.py)
    assert ROOT / settings["llama3_notebooks"] == i18n.edition_path(ROOT / "notebooks" / "01_tiny.ipynb").parent
    assert json.loads(settings["llama3_other_edition"]) == other
    english = build_site.sphinx_command(tmp_path / "src", tmp_path / "html", EN, verbose=True)
    assert "-q" not in english and [a for a in english if re.match(r"llama3_other|llama3_notebooks|copyright", a)] == []


def test_the_site_reads_the_repository_address_from_pyproject():
    """The launch and repository links of the site take the address from ``[project.urls] Repository``; the
    site's configuration and build write it nowhere else (a fork changes that one line)."""
    address = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    files = [*site_stage.BOOK.rglob("*"), ROOT / "tools" / "build_site.py", ROOT / "tools" / "site_stage.py"]
    written = [
        f
        for f in files
        if f.is_file()
        and f.suffix in (".py", ".md", ".html", ".css", ".js")
        and address.rstrip("/").split("://")[-1] in f.read_text(encoding="utf-8")
    ]
    assert written == [], f"the repository's address is written in {written}, not only in pyproject.toml"
    assert '["project"]["urls"]["Repository"]' in (site_stage.BOOK / "conf.py").read_text(encoding="utf-8")


def test_the_overview_page_is_staged_in_both_editions_and_listed_on_the_home_pages():
    """docs/overview.md and docs/overview.zh-CN.md: a page of docs/ in each edition, first after the notebooks,
    with the path figure, a link to the other edition's overview and to every notebook of the series."""
    stems = [p.stem for p in plumbing.series_notebooks()]
    for edition, other in [(EN, ZH), (ZH, EN)]:
        pages = site_stage.doc_pages(site_stage.DOCS, edition)
        assert list(pages)[0] == "docs/overview" and pages["docs/overview"].name == edition.overview
        text = pages["docs/overview"].read_text(encoding="utf-8")
        staged = site_stage.errata_text(text, edition, stems, site_stage.DOCS, ROOT)
        to_other = f"{'../' * (2 if edition.folder else 1)}{other.folder + '/' if other.folder else ''}docs/overview.html"
        assert f'href="{to_other}"' in staged, f"{edition.overview}: no link to the other edition's overview"
        for stem in stems:
            assert f"](../notebooks/{stem}.ipynb)" in staged, f"{edition.overview}: no link to {stem}"
        images = site_stage.page_images(staged, edition.overview, site_stage.DOCS, "docs", ROOT)
        figure = "images/path_overview.png" if edition is EN else "images/zh/path_overview.png"
        assert images == {figure: (ROOT / figure).resolve()}
        home = (site_stage.BOOK / edition.index).read_text(encoding="utf-8")
        toctree = re.search(r"```\{llama3-toctree-if-found\}\n(.*?)```", home, flags=re.S)
        assert toctree, f"{edition.index}: no llama3-toctree-if-found"
        listed = [line for line in toctree[1].splitlines() if line.startswith("docs/")]
        assert listed == [f"docs/{page}" for page in site_stage.DOC_PAGES], f"{edition.index} lists {listed}"


def test_every_page_of_docs_is_staged_in_both_editions_with_its_links_resolved():
    """Every page of :data:`site_stage.DOC_PAGES` has its file in each edition, links to the other edition's file
    (which becomes a link to that page of the other edition), and, staged, links only to what Sphinx resolves: a
    notebook, a page of docs/ by its staged name, an anchor, or an address; a repository file becomes its path."""
    stems = [p.stem for p in plumbing.series_notebooks()]
    for edition, other in [(EN, ZH), (ZH, EN)]:
        pages = site_stage.doc_pages(site_stage.DOCS, edition)
        assert list(pages) == [f"docs/{page}" for page in site_stage.DOC_PAGES], f"{edition.language}: {list(pages)}"
        for page in site_stage.DOC_PAGES:
            source = pages[f"docs/{page}"]
            assert source.name == getattr(edition, page)
            text = source.read_text(encoding="utf-8")
            assert f"]({getattr(other, page)})" in text, f"{source.name}: no link to {getattr(other, page)}"
            staged = site_stage.errata_text(text, edition, stems, site_stage.DOCS, ROOT)
            to_other = f"{'../' * (2 if edition.folder else 1)}{other.folder + '/' if other.folder else ''}docs/{page}.html"
            assert f'href="{to_other}"' in staged, f"{source.name}: the link to the other edition's page"
            prose = re.sub(r"^```.*?^```[ \t]*$", "", staged, flags=re.M | re.S)
            for target in re.findall(r"(?<!!)\]\(([^)\s]+)\)", prose):
                notebook = re.fullmatch(r"\.\./notebooks/(\d\d_\w+)\.ipynb(#[^)\s]*)?", target)
                assert (
                    (notebook and notebook[1] in stems)
                    or target in [f"{p}.md" for p in site_stage.DOC_PAGES]
                    or re.match(r"https?://|#", target)
                ), f"{source.name}: a link Sphinx cannot resolve: {target}"


# --------------------------------------------------------------------------- the home pages' HTML


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_the_home_page_links_the_repository_in_its_text(site, lang):
    """Both home pages say where the repository is, in their text (not only the header's GitHub button): a link
    to the address of ``[project.urls] Repository``, the one the button has."""
    from site_helpers import REPOSITORY, tags

    folder = site_stage.EDITIONS[lang].folder
    home = site / folder / "index.html" if folder else site / "index.html"
    html = home.read_text(encoding="utf-8")
    article = re.search(r'<article class="bd-article".*?</article>', html, flags=re.S)
    assert article, f"{home}: no article"
    links = re.findall(r'<a\b[^>]*\bclass="[^"]*\bllama3-repository-link\b[^"]*"[^>]*>(.*?)</a>', article[0], flags=re.S)
    hrefs = [a.get("href") for t, a in tags(home) if t == "a" and "llama3-repository-link" in a.get("class", "").split()]
    assert hrefs == [REPOSITORY], f"{home}: the text links the repository as {hrefs}, not {REPOSITORY}"
    assert [re.sub(r"<[^>]+>", "", text).strip() for text in links] != [""], f"{home}: the repository link has no words"
    button = [a.get("href") for t, a in tags(home) if t == "a" and "btn-source-repository-button" in a.get("class", "")]
    assert button == hrefs, f"{home}: the header's button leads to {button}, the text to {hrefs}"
