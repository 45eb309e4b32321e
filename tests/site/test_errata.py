"""The errata pages cite the notebooks by section and deep-dive titles that exist: a renamed or moved section is caught.

English (docs/errata.md): ``[NN](../notebooks/NN_name.ipynb) §5 "Title"`` and ``deep dive "Title"``, a title or the
start of one. Chinese (docs/errata.zh-CN.md): ``第 5 节「中文标题」（English title）`` and ``深入探讨「中文标题」（English
title）``: the Chinese title as the Chinese edition shows it, the English one in brackets. Each citation belongs to
the notebook linked last before it.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from tools import i18n
import plumbing

ROOT = plumbing.REPO_ROOT
LINK = re.compile(r"\]\(\.\./notebooks/(?:zh/)?(?P<stem>\d\d_\w+)\.ipynb\)")
EN_CITE = re.compile(r'§(?P<number>\d+) "(?P<en>[^"]+)"|deep dives? "(?P<dive>[^"]+)"')
ZH_CITE = re.compile(r"第 (?P<number>\d+) 节 ?「(?P<zh>[^」]+)」（(?P<en>[^）]+)）|深入探讨 ?「(?P<dive>[^」]+)」（(?P<dive_en>[^）]+)）")
#: a section cited by its number alone, without its title
BARE = {"en": re.compile(r'§\d+(?!\d)(?! ")'), "zh_CN": re.compile(r"第 \d+ 节(?! ?「)")}


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def headings(nb) -> list[str]:
    """Every markdown heading of a notebook, whitespace collapsed, without its ``#`` marks."""
    return [
        flat(line.lstrip("#"))
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    ]


def notebook(stem: str, lang: str | None = None):
    path = ROOT / "notebooks" / f"{stem}.ipynb"
    return i18n.translated_notebook(path, lang) if lang else nbformat.read(path, as_version=4)


def citations(text: str, pattern: re.Pattern) -> list[tuple[str, re.Match]]:
    """(stem of the notebook linked last before it, the citation) for every citation of the page."""
    text = flat(text)
    events = sorted(
        [(m.start(), "link", m) for m in LINK.finditer(text)] + [(m.start(), "cite", m) for m in pattern.finditer(text)], key=lambda e: e[0]
    )
    out, stem = [], None
    for _, kind, m in events:
        if kind == "link":
            stem = m["stem"]
        else:
            assert stem, f"citation {m[0]!r} comes before any notebook link"
            out.append((stem, m))
    return out


def cited(found: list[str], number: str | None, title: str) -> bool:
    """Section ``number`` is titled ``title`` (or starts so); without a number, some heading is ``title``."""
    title = flat(title)
    if number:
        return any(h.startswith(f"{number}. {title}") for h in found)
    return any(h == title or h.startswith(title) for h in found)


def problems_of(page: str, lang: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    pattern = ZH_CITE if lang == "zh_CN" else EN_CITE
    found = citations(text, pattern)
    assert len(found) >= 20, f"{page}: only {len(found)} citations recognised"
    one_line = flat(text)
    bad = [f"a section without its title: {one_line[max(0, m.start() - 40) : m.end() + 30]!r}" for m in BARE[lang].finditer(one_line)]
    english, chinese = {}, {}
    for stem, m in found:
        english.setdefault(stem, headings(notebook(stem)))
        if lang == "zh_CN":
            chinese.setdefault(stem, headings(notebook(stem, lang)))
            zh, en = (m["zh"], m["en"]) if m["zh"] else (m["dive"], m["dive_en"])
            if not cited(chinese[stem], m["number"], zh):
                bad.append(f"{stem}: no Chinese heading {m[0]!r}")
            if not cited(english[stem], m["number"], en):
                bad.append(f"{stem}: no English heading {en!r} (cited as {m[0]!r})")
        elif not cited(english[stem], m["number"], m["en"] or m["dive"]):
            bad.append(f"{stem}: no heading {m[0]!r}")
    return bad


@pytest.mark.parametrize(("page", "lang"), [("errata.md", "en"), ("errata.zh-CN.md", "zh_CN")])
def test_every_cited_section_exists(page, lang):
    bad = problems_of(page, lang)
    assert not bad, f"{page} cites what the notebooks no longer have:\n  " + "\n  ".join(bad)


@pytest.mark.parametrize(("page", "lang"), [("errata.md", "en"), ("errata.zh-CN.md", "zh_CN")])
def test_a_renamed_section_is_caught(page, lang, monkeypatch):
    """Mutation: notebook 02's section 4, which both pages cite, renamed (in both editions) -> reported."""
    real = notebook

    def renamed(stem, lang=None):
        nb = real(stem, lang)
        for cell in nb.cells if stem.startswith("02") else []:
            cell.source = re.sub(r"^## 4\. .*$", "## 4. Renamed", cell.source, flags=re.M)
        return nb

    monkeypatch.setitem(globals(), "notebook", renamed)
    assert any(line.startswith("02_embedding_lookup:") for line in problems_of(page, lang))


#: What a source's row gives when it has no address: where the text says it was published, or that it does not say.
NO_ADDRESS = {"en": ("reposted without a source", "says nothing of its author"), "zh_CN": ("转载且未注明出处", "没有说明作者和发表之处")}


def sources(text: str) -> dict[str, str]:
    """label -> row, for every row of the page's source tables (a table whose header starts ``| label |``)."""
    rows, inside = {}, False
    for line in text.splitlines():
        if line.startswith(("| label |", "| 标记 |")):
            inside = True
        elif not line.startswith("|"):
            inside = False
        elif inside and not line.startswith("| ---"):
            rows[line.split("|")[1].strip()] = line
    return rows


@pytest.mark.parametrize(("page", "lang"), [("errata.md", "en"), ("errata.zh-CN.md", "zh_CN")])
def test_every_source_can_be_found(page, lang):
    """Each source gives an address, or says where it was published or that its text does not say; every label
    that items cite is in the tables."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    rows = sources(text)
    assert {"naklecha", "T000", "T001", "T002", "T003", "README-zh", "wdndev", "Deepdive"} <= set(rows), rows.keys()
    lost = [label for label, row in rows.items() if "](https://" not in row and not any(w in row for w in NO_ADDRESS[lang])]
    assert not lost, f"{page}: sources a reader cannot find: {lost}"
    cited_labels = set(re.findall(r"(?:Source|来源)：?:? ?(naklecha|T00\d|README-zh)", text))
    assert cited_labels <= set(rows), cited_labels - set(rows)
