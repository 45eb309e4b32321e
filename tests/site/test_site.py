"""The course site of `make html` (tools/build_site.py, tools/book/), checked as files and in a real headless Chromium.

The site is built into a temporary folder from executed notebooks: ``build/`` when it holds an executed
copy of every notebook of the series as it is now (after `make run`), else the committed notebooks in notebooks/
(they carry their outputs; one without the run metadata that tools/run_notebooks.py records gets the
stand-in's, which is what `make refresh` runs on). LLAMA3_SITE_SRC=folder picks the folder. site/ and
build/ are left alone, except for the screenshots written to build/site-screenshots/ for a person to
look at.

In Chromium every page is loaded from file:// and from a static server on 127.0.0.1 (the one
`python -m http.server` runs): no request may fail or leave the site, the mathematics must be typeset
by the local MathJax (no raw TeX left, no MathJax error), every image must have loaded, the sidebar
must list every notebook of the series, and search must find the RoPE notebook for "rotary". Exercise
solutions and deep dives must be collapsed, and each page's weights banner must come from its
notebook's metadata.

The Chinese edition (site/zh/, built from the same executed notebooks with their markdown translated
by tools/i18n.py) is held to the same checks: its sidebar lists every translated notebook (and the
errata page and the instructor guide when docs/ has them in Chinese), Sphinx's own words are Chinese, each page links to its
English counterpart and back, and search finds the RoPE notebook for the Chinese word 旋转 (rotation;
Sphinx indexes Chinese without a dictionary through tools/book/search_zh.py, by pairs of characters).
Every page of both editions links to the repository and opens in Google Colab and on Binder: a notebook
page its own notebook (a Chinese page the one in notebooks/zh/), any other page its edition's folder of
notebooks and first notebook, at the address that pyproject.toml's ``[project.urls] Repository`` gives.
Chromium is found on PATH (chromium, chromium-browser, google-chrome) or given as LLAMA3_CHROMIUM=path.
Without it (a learner's laptop) the browser tests are skipped with the reason; when the environment
variable CI is set they fail instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tools import build_site
from tools import site_stage
import plumbing

from site_helpers import (
    HOME,
    ROOT,
    STEMS,
    ZH,
    DOC_PAGES,
    built,
    tiny_notebook,
    page_names,
    tags,
    sidebar,
    outside_links,
    expected_outside_links,
)


# --------------------------------------------------------------------------- as files


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_every_page_has_sidebar_contents_prev_next_and_download(site, executed, zh_stems, lang):
    stems, root = (STEMS, site) if lang == "en" else (zh_stems, site / ZH)
    docs = [f"../{page}.html" for page in DOC_PAGES[lang]]  # the errata page, the instructor guide
    for i, stem in enumerate(stems):
        page = root / "notebooks" / f"{stem}.html"
        found = tags(page)
        assert sidebar(page) == ["../index.html"] + [f"{s}.html" for s in stems] + docs, (
            f"{stem}: the sidebar does not list the series in order (then the pages of docs/)"
        )
        rel = {a["rel"]: a["href"] for t, a in found if t == "link" and a.get("rel") in ("prev", "next")}
        assert rel.get("prev") == ("../index.html" if i == 0 else f"{stems[i - 1]}.html"), stem
        assert rel.get("next") == (f"{stems[i + 1]}.html" if i + 1 < len(stems) else (docs or [None])[0]), stem
        download = [a["href"] for t, a in found if t == "a" and "btn-download-source-button" in a.get("class", "")]
        assert download == [f"../_sources/notebooks/{stem}.ipynb"], f"{stem}: no download link for the notebook"
        served = (page.parent / download[0]).read_bytes()
        if lang == "en":
            assert served == (executed / f"{stem}.ipynb").read_bytes()
        else:  # the translated notebook, as tools/i18n.py writes it into notebooks/zh/ (figures attached)
            expected = nbformat.writes(site_stage.edition_notebook(executed / f"{stem}.ipynb", lang)) + "\n"
            assert served.decode("utf-8") == expected
        toc = re.search(r'<nav id="pst-page-toc-nav".*?</nav>', page.read_text(encoding="utf-8"), flags=re.S)
        assert toc and toc[0].count('href="#') >= 2, f"{stem}: no contents list for the page"


def edition_links(page: Path) -> list[str]:
    """The page's links to the other edition (tools/book/editions.py)."""
    return [a["href"] for t, a in tags(page) if t == "a" and "llama3-edition-link" in a.get("class", "")]


def test_each_page_links_to_its_counterpart_in_the_other_edition(site, zh_stems):
    english = page_names(STEMS, DOC_PAGES["en"])
    chinese = page_names(zh_stems, DOC_PAGES["zh_CN"], ZH)
    for name in english + chinese + ["search.html", f"{ZH}/search.html"]:
        page = site / name
        links = edition_links(page)
        assert len(links) == 1, f"{name}: links to the other edition: {links}"
        target = (page.parent / links[0]).resolve()
        assert target.is_file(), f"{name}: the link {links[0]} to the other edition leads nowhere"
        inside = name.removeprefix(f"{ZH}/")
        other = f"{ZH}/{inside}" if name == inside else inside
        if other in english + chinese:  # the same page there, else that edition's home page
            assert target == (site / other).resolve(), f"{name}: links to {links[0]}, not to its counterpart {other}"
        else:
            assert target.name == "index.html", f"{name}: links to {links[0]}"
    assert "中文版" in (site / "index.html").read_text(encoding="utf-8")
    assert ">English</a>" in (site / ZH / "index.html").read_text(encoding="utf-8")


def test_every_page_links_to_the_repository_and_opens_in_colab_and_binder(site, zh_stems):
    """Both editions: each notebook page launches its own notebook in the repository (notebooks/zh/ for the
    Chinese pages), every other page its edition's folder and first notebook; each address exists there."""
    for lang, stems in [("en", STEMS), ("zh_CN", zh_stems)]:
        folder = build_site.EDITIONS[lang].folder
        for name in page_names(stems, DOC_PAGES[lang]) + ["search.html"]:
            page = site / folder / name
            found, expected = outside_links(page), expected_outside_links(name, lang, stems[0])
            assert found == expected, f"{page.relative_to(site)}: links out {found}, expected {expected}"
            opened = found["colab"][0].split("/blob/main/", 1)[1]
            assert (ROOT / opened).is_file(), f"{page.relative_to(site)}: Colab would open {opened}, not in the repository"


def test_the_chinese_edition_speaks_chinese(site, zh_stems):
    index = (site / ZH / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in index and "搜索" in index, "Sphinx's and the theme's words are not Chinese"
    left_out = [s for s in STEMS if s not in zh_stems]
    assert ("尚未收入中文版" in index) == bool(left_out)
    assert all(f"../notebooks/{s}.html" in index for s in left_out), "the home page does not name what is left out"
    for stem in zh_stems:
        html = (site / ZH / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
        assert '<html lang="zh-CN"' in html and "本页在合成替身权重" in html, f"{stem}: banner not in Chinese"
        assert "Show the" not in html, f"{stem}: English words of the site's own toggles on a Chinese page"
        # its diagrams are the Chinese ones (images/zh/), byte for byte
        shown = [(site / ZH / "notebooks" / src).resolve() for src in re.findall(r'<img [^>]*src="([^"]+\.png)"', html)]
        zh_images = {p.read_bytes() for p in (ROOT / "images" / "zh").glob("*.png")}
        en_images = {p.read_bytes() for p in (ROOT / "images").glob("*.png")}
        assert any(p.read_bytes() in zh_images for p in shown), f"{stem}: no diagram of images/zh/"
        assert not any(p.read_bytes() in en_images for p in shown), f"{stem}: an English diagram of images/"


def test_the_overview_page_is_built_in_both_editions_and_linked_from_the_home_page(site):
    """docs/overview.md (docs/overview.zh-CN.md): in each edition, listed in the home page's contents, its figure
    shown and linked at full size (Sphinx's link around a scaled image), its links to the notebooks working."""
    for lang, title in [("en", "The whole path on one page"), ("zh_CN", "一页看完整条路径")]:
        root = site / build_site.EDITIONS[lang].folder
        page = root / "docs" / "overview.html"
        assert page.is_file(), f"{page.relative_to(site)} was not built"
        index = (root / "index.html").read_text(encoding="utf-8")
        contents = "".join(re.findall(r'<div class="toctree-wrapper.*?</ul>', index, flags=re.S))  # the home page's lists
        assert 'href="docs/overview.html"' in contents, f"{lang}: the home page's contents do not list the overview"
        html = page.read_text(encoding="utf-8")
        assert title in html, f"{lang}: the overview's title"
        images = [a["src"] for t, a in tags(page) if t == "img" and "path_overview" in a.get("src", "")]
        assert images and (page.parent / images[0]).is_file(), f"{lang}: the overview's figure is missing"
        full_size = [a["href"] for t, a in tags(page) if t == "a" and "path_overview" in a.get("href", "")]
        assert full_size and (page.parent / full_size[0]).is_file(), f"{lang}: the figure does not link to itself"
        for href in re.findall(r'href="(\.\./notebooks/[^"#]+\.html)', html):
            assert (page.parent / href).is_file(), f"{lang}: the overview links to {href}, which is not built"


def test_nothing_is_loaded_from_outside_the_site(site):
    for page in sorted(site.rglob("*.html")):
        for tag, attrs in tags(page):
            url = attrs.get("src") or (attrs.get("href") if tag == "link" else None)
            if not url or url.startswith(("data:", "#")):
                continue
            assert not re.match(r"[a-z]+:|//", url), f"{page.relative_to(site)}: <{tag}> loads {url[:80]} from outside"
            target = (page.parent / url.split("#")[0].split("?")[0]).resolve()
            assert target.is_file(), f"{page.relative_to(site)}: <{tag}> loads {url}, which is not in the site"
    assert (site / "_static" / "mathjax" / "tex-svg-full.js").is_file() and (site / "_static" / "mathjax" / "LICENSE").is_file()


def test_banner_comes_from_the_notebook_metadata(executed, tmp_path):
    """Each page's banner follows its metadata, not the printed text (which this test makes say the opposite).
    Three notebooks, the first two run on real weights (Meta's, Hugging Face's), the last on the stand-in."""
    stems, runs = [STEMS[0], STEMS[1], STEMS[-1]], ["meta", "hf", "standin"]
    src = tmp_path / "runs"
    src.mkdir()
    for stem, weights in zip(stems, runs):
        nb = nbformat.read(executed / f"{stem}.ipynb", as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                if out.output_type == "stream":
                    out.text = re.sub(r"^weights: .*$", "weights: something else entirely", out.text, flags=re.M)
        nb.metadata["llama3"] = {
            "weights": weights,
            "weights_description": f"described as {weights}",
            "prompt": "a prompt of my own" if stem == STEMS[-1] else plumbing.DEFAULT_PROMPT,
        }
        nbformat.write(nb, src / f"{stem}.ipynb")
    out = built(build_site.build, src, tmp_path / "site", home=HOME, stems=stems, docs=None)
    index = out[0].read_text(encoding="utf-8")
    assert 'data-weights="site"' in index and "2 of 3" in index
    for page, weights in zip(out[1:], runs):
        html = page.read_text(encoding="utf-8")
        assert len(re.findall(r'class="llama3-banner ', html)) == 1, page.name
        assert f'data-weights="{weights}"' in html, f"{page.name}: banner is not for {weights}"
        assert (f"described as {weights}" in html) == (weights != "standin"), page.name
        assert ("a prompt of my own" in html) == (page.stem == STEMS[-1]), page.name


def test_a_notebook_without_run_metadata_stops_the_build(tmp_path):
    nb = tiny_notebook()
    del nb.metadata["llama3"]
    nbformat.write(nb, tmp_path / "01_tiny.ipynb")
    with pytest.raises(build_site.SiteError, match="llama3"):
        build_site.build(tmp_path, tmp_path / "site", home=tmp_path, stems=["01_tiny"], docs=None)


def test_missing_or_remote_images_and_missing_notebooks_stop_the_build(tmp_path):
    for src, message in [("../images/no_such.png", "missing or empty"), ("https://example.org/x.png", "remote")]:
        folder = tmp_path / message.split()[0]
        folder.mkdir()
        nbformat.write(tiny_notebook(markdown=f"![x]({src})"), folder / "01_tiny.ipynb")
        with pytest.raises(build_site.SiteError, match=message):
            build_site.build(folder, tmp_path / f"site_{folder.name}", home=folder, stems=["01_tiny"], docs=None)
    (tmp_path / "series").mkdir()
    nbformat.write(tiny_notebook(), tmp_path / "series" / "01_tiny.ipynb")
    with pytest.raises(build_site.SiteError, match="02_absent.ipynb is missing: run `make run`"):
        build_site.build(tmp_path / "series", tmp_path / "site_x", home=tmp_path, stems=["01_tiny", "02_absent"], docs=None)


def test_solutions_and_deep_dives_are_collapsed_in_the_html(site, executed, tiny_site, zh_stems):
    html = (tiny_site / "notebooks" / "01_tiny.html").read_text(encoding="utf-8")
    closed = re.findall(r"<details(?![^>]*\bopen\b)[^>]*>.*?</details>", html, flags=re.S)
    for text in (
        "answer printed by the solution: 42",
        "The answer is forty-two",
        "answer of a solution without prose",
        "Text of the first deep dive",
        "output of a deep-dive cell",
        "Text of the second deep dive",
    ):
        assert any(text in block for block in closed), f"{text!r} is not inside a closed <details>"
    assert "setup done" not in "".join(closed)
    for stem in STEMS:  # the series: as many collapsed solutions as solution cells, deep dives in one box
        nb = nbformat.read(executed / f"{stem}.ipynb", as_version=4)
        page = (site / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
        tagged = ["solution" in c.metadata.get("tags", []) for c in nb.cells]
        solutions = sum(
            1
            for i, c in enumerate(nb.cells)  # one toggle per solution: its prose and code, or its code
            if tagged[i] and (c.cell_type == "markdown" or i == 0 or not tagged[i - 1])
        )
        assert page.count("Show the solution") == solutions, stem
        dives = any(re.search(r"^## Deep dives\s*$", c.source, re.M) for c in nb.cells if c.cell_type == "markdown")
        assert page.count('<details class="llama3-deep-dives">') == dives, stem
        if stem in zh_stems:  # the Chinese page: the same, in Chinese words
            page = (site / ZH / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
            assert page.count("显示解答") == solutions, f"{stem} in Chinese"
            assert page.count('<details class="llama3-deep-dives">') == dives, f"{stem} in Chinese: deep dives not folded"


#: the tiny notebook's markdown in Chinese, as a translator would write it (headings as notebooks/zh/README.md says)


def test_a_tiny_chinese_edition(tiny_editions):
    """Translated headings and folds still collapse, in Chinese words; what is not translated is left out."""
    zh = tiny_editions / ZH
    html = (zh / "notebooks" / "01_tiny.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in html and "一个小页面" in html
    closed = re.findall(r"<details(?![^>]*\bopen\b)[^>]*>.*?</details>", html, flags=re.S)
    for text in (
        "答案是四十二",
        "answer printed by the solution: 42",
        "answer of a solution without prose",
        "第一个深入探讨的文字",
        "output of a deep-dive cell",
        "第二个深入探讨的文字",
    ):
        assert any(text in block for block in closed), f"{text!r} is not inside a closed <details>"
    assert html.count("显示解答") == 2 and "Show the solution" not in html
    assert html.count('<details class="llama3-deep-dives">') == 1 and "展开深入探讨" in html
    assert "本页在合成替身权重" in html
    assert sidebar(zh / "notebooks" / "01_tiny.html") == ["../index.html", "01_tiny.html", "../docs/errata.html"]
    assert not (zh / "notebooks" / "02_tiny.html").exists()
    index = (zh / "index.html").read_text(encoding="utf-8")
    assert "尚未收入中文版" in index and 'href="../notebooks/02_tiny.html"' in index
    assert edition_links(tiny_editions / "notebooks" / "02_tiny.html") == ["../zh/index.html"]
    assert edition_links(tiny_editions / "notebooks" / "01_tiny.html") == ["../zh/notebooks/01_tiny.html"]
    assert edition_links(zh / "notebooks" / "01_tiny.html") == ["../../notebooks/01_tiny.html"]
    # the errata pages: after the notebooks, linked to each other, their links to notebooks in their own edition
    assert sidebar(tiny_editions / "notebooks" / "02_tiny.html")[-1] == "../docs/errata.html"
    en_errata = (tiny_editions / "docs" / "errata.html").read_text(encoding="utf-8")
    zh_errata = (zh / "docs" / "errata.html").read_text(encoding="utf-8")
    assert 'href="../zh/docs/errata.html"' in en_errata and 'href="../../docs/errata.html"' in zh_errata
    assert 'href="../notebooks/01_tiny.html"' in en_errata and 'href="../notebooks/01_tiny.html"' in zh_errata
    assert "the README (<code" in en_errata  # a repository file that is no page: its name, not a broken link
    assert "</a>和这一行。" in zh_errata  # a line break between Chinese characters is no space


def test_every_page_of_a_tiny_site_has_launch_and_repository_links(tiny_editions):
    """Every HTML page of both editions, notebook or not (search, index of terms, a notebook left out of the
    Chinese edition), has a Colab, a Binder and a repository link; the Chinese menu speaks Chinese."""
    pages = [p for p in tiny_editions.rglob("*.html") if "_static" not in p.parts and "slides" not in p.parts]  # decks: test_slides
    assert {
        "index.html",
        "notebooks/01_tiny.html",
        "notebooks/02_tiny.html",
        "docs/errata.html",
        "search.html",
        f"{ZH}/index.html",
        f"{ZH}/notebooks/01_tiny.html",
        f"{ZH}/docs/errata.html",
        f"{ZH}/search.html",
    } <= {p.relative_to(tiny_editions).as_posix() for p in pages}
    for page in pages:
        name = page.relative_to(tiny_editions).as_posix()
        lang = "zh_CN" if name.startswith(f"{ZH}/") else "en"
        expected = expected_outside_links(name.removeprefix(f"{ZH}/"), lang, "01_tiny")
        assert outside_links(page) == expected, f"{name}: links out {outside_links(page)}, expected {expected}"
        html = page.read_text(encoding="utf-8")
        assert ('title="在 Colab 上运行"' in html and "Launch on" not in html) == (lang == "zh_CN"), name
