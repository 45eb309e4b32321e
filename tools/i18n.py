"""Extract, build and check the Chinese edition: the notebooks' text in gettext catalogues, one ``.po`` a notebook.

    python -m tools.i18n extract [--lang zh_CN]   # English notebooks -> locale/<lang>/LC_MESSAGES/<notebook>.po
    python -m tools.i18n build   [--lang zh_CN]   # English notebooks + catalogues -> notebooks/zh/<notebook>.ipynb
    python -m tools.i18n check   [--lang zh_CN]   # what is missing, stale or out of date (exit status 1 if anything)

Each command takes notebook numbers or names to work on some notebooks only (``build 05 06``).

Raises: ``build`` prints a ``plumbing.Llama3Error`` (a cell without a usable translation) as one line, exit status 2.
"""

from __future__ import annotations

import argparse
import copy
import io
import re
import sys
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.pofile import denormalize, read_po, write_po

import plumbing

ROOT = plumbing.REPO_ROOT
LOCALE_DIR = ROOT / "locale"
#: language code -> folder of the generated notebooks (under notebooks/)
EDITIONS = {"zh_CN": "zh"}


def catalogue_path(notebook: Path, lang: str = "zh_CN") -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{notebook.stem}.po"


def edition_path(notebook: Path, lang: str = "zh_CN") -> Path:
    return ROOT / "notebooks" / EDITIONS[lang] / notebook.name


def markdown_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "markdown" and c.source.strip()]


def read_catalogue(path: Path, lang: str) -> Catalog:
    if not path.exists():
        return Catalog(locale=lang, project="Llama 3, step by step")
    with open(path, "rb") as f:
        catalogue = read_po(f, locale=lang)
    for context, previous in previous_ids(path).items():  # Babel's reader drops the "#| msgid" lines
        for message in catalogue:
            if message.context == context:
                message.previous_id = [previous]  # Babel keeps (singular[, plural])
                message.user_comments = [c for c in message.user_comments if not c.startswith(("| msgid", '| "'))]
    return catalogue


QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def previous_ids(path: Path) -> dict[str, str]:
    """``msgctxt`` -> the previous English (``#| msgid``) of each fuzzy entry of the catalogue at ``path``."""
    out, pending = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#| msgid "):
            pending = [line[len("#| msgid ") :]]
        elif line.startswith('#| "') and pending is not None:
            pending.append(line[3:])
        elif line.startswith("msgctxt ") and pending is not None:
            quoted = QUOTED.findall(" ".join(pending))  # Babel writes them on one line or several
            out[denormalize(line[len("msgctxt ") :])] = denormalize("\n".join(quoted))
            pending = None
        elif not line.startswith("#"):
            pending = None
    return out


def write_catalogue(catalogue: Catalog, path: Path) -> None:
    buf = io.BytesIO()
    write_po(buf, catalogue, width=0, omit_header=False, sort_output=False, include_previous=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    plumbing.paths.atomic_write(path, lambda tmp: tmp.write_bytes(buf.getvalue()))


def catalogue_like(old: Catalog, lang: str) -> Catalog:
    """An empty catalogue with ``old``'s header dates, so re-extracting unchanged notebooks changes nothing."""
    return Catalog(
        locale=lang,
        project="Llama 3, step by step",
        version="1",
        fuzzy=False,
        copyright_holder="the Llama 3, step by step authors (CC BY 4.0)",
        msgid_bugs_address="",
        last_translator="",
        language_team="",
        creation_date=old.creation_date,
        revision_date=old.revision_date,
    )


def extract(notebook: Path, lang: str = "zh_CN") -> Catalog:
    """The catalogue for ``notebook``: every markdown cell, with the translations already known."""
    cells = [(cell.id, cell.source) for cell in markdown_cells(nbformat.read(notebook, as_version=4))]
    return updated(read_catalogue(catalogue_path(notebook, lang), lang), cells, lang)


def updated(old: Catalog, messages: list[tuple[str, str]], lang: str) -> Catalog:
    """A catalogue of ``messages`` (context, English), with ``old``'s translations."""
    by_context = {m.context: m for m in old if m.id}
    new = catalogue_like(old, lang)
    for context, english in messages:
        known = old.get(english, context=context)
        if known is not None:
            new.add(english, known.string, context=context, flags=known.flags)
            continue
        before = by_context.get(context)
        if before is not None and before.string:  # the English changed: keep the translation for review
            new.add(english, before.string, context=context, flags={"fuzzy"}, previous_id=before.id)
        else:
            new.add(english, "", context=context)
    return new


def problems(notebook: Path, lang: str = "zh_CN") -> list[str]:
    """Markdown cells of ``notebook`` without a usable translation (missing, empty or fuzzy)."""
    path = catalogue_path(notebook, lang)
    if not path.exists():
        return [f"{notebook.name}: no catalogue {plumbing.display_path(path)} (run `python -m tools.i18n extract`)"]
    catalogue = read_catalogue(path, lang)
    out = []
    for cell in markdown_cells(nbformat.read(notebook, as_version=4)):
        entry = catalogue.get(cell.source, context=cell.id)
        first = cell.source.strip().splitlines()[0][:60]
        if entry is None:
            out.append(f"{notebook.name}: cell {cell.id} has no entry (new or changed English text: {first!r})")
        elif not entry.string:
            out.append(f"{notebook.name}: cell {cell.id} is not translated ({first!r})")
        elif entry.fuzzy:
            out.append(f"{notebook.name}: cell {cell.id} is fuzzy: its English changed since it was translated ({first!r})")
    return out


def translated_notebook(notebook: Path, lang: str = "zh_CN"):
    """The English notebook with every markdown cell translated and its figures from images/zh/ where that has them;
    code, outputs and metadata unchanged.

    Raises:
        plumbing.Llama3Error: a markdown cell has no usable translation (see :func:`problems`).
    """
    missing = problems(notebook, lang)
    if missing:
        raise plumbing.Llama3Error("; ".join(missing[:5]) + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""))
    catalogue = read_catalogue(catalogue_path(notebook, lang), lang)
    nb = nbformat.read(notebook, as_version=4)
    out = copy.deepcopy(nb)
    for cell in markdown_cells(out):
        cell.source = catalogue.get(cell.source, context=cell.id).string
    from tools import attachments  # it imports this module

    attachments.edition_attachments(out, lang)
    return out


def notebook_text(notebook: Path, lang: str = "zh_CN") -> str:
    """The file ``build`` writes for ``notebook`` (``notebooks/zh/``), and the site serves: :func:`translated_notebook` as text.

    Raises:
        plumbing.Llama3Error: see :func:`translated_notebook`.
    """
    return nbformat.writes(translated_notebook(notebook, lang)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["extract", "build", "check"])
    parser.add_argument("--lang", default="zh_CN", choices=sorted(EDITIONS))
    parser.add_argument("notebooks", nargs="*", help="names or numbers of notebooks (default: the whole series)")
    args = parser.parse_args(argv)
    notebooks = [
        nb for nb in plumbing.series_notebooks() if not args.notebooks or any(nb.name.startswith(k) or nb.stem == k for k in args.notebooks)
    ]
    from tools import interface  # it imports this module

    if args.command == "extract":
        for nb in notebooks:
            write_catalogue(extract(nb, args.lang), catalogue_path(nb, args.lang))
            print(f"wrote {catalogue_path(nb, args.lang).relative_to(ROOT)}")
        write_catalogue(interface.extract(args.lang), interface.path(args.lang))
        print(f"wrote {interface.path(args.lang).relative_to(ROOT)}")
        return 0
    if args.command == "build":
        try:
            for nb in notebooks:
                dest = edition_path(nb, args.lang)
                dest.parent.mkdir(parents=True, exist_ok=True)
                text = notebook_text(nb, args.lang)
                plumbing.paths.atomic_write(dest, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
                print(f"wrote {dest.relative_to(ROOT)}")
        except plumbing.Llama3Error as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    found = [p for nb in notebooks for p in problems(nb, args.lang)] + interface.problems(args.lang)
    for nb in notebooks:
        dest = edition_path(nb, args.lang)
        if not found and (not dest.exists() or dest.read_text(encoding="utf-8") != notebook_text(nb, args.lang)):
            found.append(f"{dest.relative_to(ROOT)} is not up to date (run `python -m tools.i18n build`)")
    print("\n".join(found) if found else "every notebook and interface.po are translated and the edition is up to date")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
