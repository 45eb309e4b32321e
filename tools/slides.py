"""Slides (``make slides``): every notebook of the series as a reveal.js lecture deck, in both editions, offline.

    python tools/slides.py                      # the committed notebooks (they carry their outputs) -> build/slides/
    python tools/slides.py --src build --out DIR
    python tools/slides.py --student            # the students' decks -> build/slides-student/ (no graded code)

The slides are cut by hand in tools/slides_cuts.toml: per notebook, a list of slides, each with its title and at
most about 40 words of text (English and Chinese), and what it shows of the notebook: a code cell (or some of
its lines, at most 10) with its output cut to its first lines, a figure output alone, or a block of a markdown
cell (a formula, a figure). A deck is the title slide (the notebook's heading and figure), then the table's
slides, one after the other. Each slide's speaker notes (reveal.js ``<aside class="notes">``, key S) hold the
notebook's prose for that step: the markdown cells a slide names in ``notes``, and every other markdown cell of
its section that comes before the slide's cell (or, for the prose at a section's end, after the section's last
slide). The Setup section, setup and check cells (``plumbing.check(...)``), solutions, the Colab cells and the
deep dives are on no slide and in no notes. The Chinese deck is the same table over the translated notebook. A
notebook the table lacks gets one slide per section, its prose in the notes. The students' decks (``--student``)
show each graded cell as the student edition has it, its stub in place of its code (tools/student.py), whole.

The code is in three files: this one reads the notebooks (both editions, the students' stubs) and writes the
folder of decks; tools/slides_cut.py applies the table to a notebook (which cell goes on which slide, the notes);
tools/slides_html.py writes a deck's HTML with nbconvert's ``reveal`` exporter and the template
(tools/slides_template/llama3_slides/: nbconvert's ``reveal`` with every outside file made local, reveal.js from
the PyPI package sphinx-revealjs, MathJax 3 from django-static-mathjax, the copy the course site uses).

Reads:
    the series, ``plumbing.series_notebooks()``, as executed copies ``--src/NN_name.ipynb`` (default
    ``notebooks/``); the Chinese edition is each one translated by tools/i18n.py from
    ``locale/zh_CN/LC_MESSAGES/NN_name.po`` (``site_stage.edition_notebook``: what ``python tools/i18n.py
    build`` writes into notebooks/zh/ and what the site shows); tools/slides_cuts.toml; the installed packages
    sphinx-revealjs and django-static-mathjax; the template in tools/slides_template/.
Writes:
    ``--out`` (default ``build/slides/``), replaced as a whole: ``NN_name.slides.html`` per notebook,
    ``zh/NN_name.slides.html`` for each notebook whose translation is complete (the others are named in a
    note), and once ``_static/reveal.js/`` and ``_static/mathjax/`` with their licences. Every path in a
    deck is relative: the folder works from ``file://`` and from any static server, and loads nothing from
    outside it. tools/build_site.py puts the same decks into the site (:func:`site_decks`).
Raises:
    SlidesError (a SiteError; printed as one line, exit status 2): a notebook missing from ``--src`` or
    never executed, a notebook without slides in the table or a slide naming a cell that is missing or may not
    be shown, sphinx-revealjs or django-static-mathjax not installed, nbconvert failing on a notebook, or an
    ``--out`` folder that holds something other than decks.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
import time
from pathlib import Path

import nbformat

import interface
import plumbing
from site_stage import EDITIONS, REPO_ROOT, SiteError, edition_notebook
from slides_cut import CUTS, SlidesError, load_cuts, sections_table
from slides_html import STATIC, copy_assets, deck_name, exporter, write_deck

__all__ = ["SlidesError", "build", "site_decks", "executed", "student_version", "edition_decks", "write_decks"]


def executed(path: Path) -> nbformat.NotebookNode:
    """The executed notebook at ``path``.

    Raises:
        SlidesError: it is missing or never ran.
    """
    if not path.is_file():
        raise SlidesError(
            f"{path} is missing: the decks are made from the executed notebooks of the series "
            "(notebooks/ carries their outputs; `make run` executes them into build/)."
        )
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if code and not any(c.get("execution_count") or c.get("outputs") for c in code):
        raise SlidesError(f"{path} was never executed: its deck would show no outputs (`make refresh` or `make run`).")
    return nb


def student_version(nb, stem: str, language: str) -> nbformat.NotebookNode:
    """``nb`` with each graded cell's code replaced by the student edition's stub (its outputs kept), marked
    ``llama3_stub`` so that its slide shows it whole; Meta's code of a graded step and the warm-ups as the student
    edition has them (tools/student.py's ``withhold``)."""
    from grader.grading import stub
    from grader.steps import STEPS
    from student import withhold

    out = copy.deepcopy(nb)
    steps = {s.cell: s for s in STEPS.get(stem[:2], [])}
    for cell in out.cells:
        withhold(cell, language)
        step = steps.get(cell.get("id"))
        if step is not None and cell.cell_type == "code":
            cell.source = stub(cell, interface.task(step, language))
            cell.metadata["llama3_stub"] = True
    return out


def edition_decks(src: Path, stems: list[str], language: str) -> tuple[dict[str, nbformat.NotebookNode], list[str]]:
    """The notebooks of ``language``'s decks, stem -> notebook, and the stems left out (translation incomplete).

    Reads ``src/NN_name.ipynb`` and, for a translated edition, its catalogue (tools/i18n.py).

    Raises:
        SlidesError: see :func:`executed`.
    """
    notebooks, left = {}, []
    for stem in stems:
        nb = executed(src / f"{stem}.ipynb")
        if language == "en":
            notebooks[stem] = nb
            continue
        try:
            notebooks[stem] = edition_notebook(src / f"{stem}.ipynb", language)
        except SiteError:
            left.append(stem)
    return notebooks, left


def write_decks(decks: dict[Path, tuple], static: Path, cuts: dict) -> list[Path]:
    """Write every deck, ``dest -> (notebook, language, stem)``, cut by the table ``cuts``, with the assets in
    ``static`` (a notebook the table lacks: :func:`sections_table`); return the decks.

    Raises:
        SlidesError: see :func:`copy_assets` and :func:`write_deck`.
    """
    copy_assets(static)
    exp = exporter()
    return [
        write_deck(nb, dest, static, cuts.get(stem) or sections_table(nb), language, exp) for dest, (nb, language, stem) in decks.items()
    ]


def site_decks(src: Path, site: Path, editions: dict[str, tuple[str, list[str]]]) -> list[Path]:
    """The decks of the course site (tools/build_site.py): for each edition, ``language -> (its folder in
    the site, its notebooks)``, the decks of its notebooks in ``site/<folder>/slides/`` (English
    ``site/slides/``, Chinese ``site/zh/slides/``), the assets once in ``site/slides/_static/``.

    Reads ``src/NN_name.ipynb`` (executed), tools/slides_cuts.toml and, for a translated edition, the
    catalogues of tools/i18n.py.

    Raises:
        SlidesError: see :func:`load_cuts` and :func:`write_decks`; or a notebook of ``editions`` has no complete translation.
    """
    decks = {}
    for language, (folder, stems) in editions.items():
        notebooks, left = edition_decks(Path(src), stems, language)
        if left:
            raise SlidesError(f"no complete {EDITIONS[language].label} translation of {', '.join(left)}")
        for stem, nb in notebooks.items():
            decks[site / folder / "slides" / deck_name(stem)] = (nb, language, stem)
    return write_decks(decks, site / "slides" / STATIC, load_cuts())


def is_decks_folder(out: Path) -> bool:
    """Whether ``out`` is missing, empty, or holds only what :func:`build` writes."""
    if not out.exists():
        return True
    return all(p.name in (STATIC, "zh") or p.name.endswith(".slides.html") for p in out.iterdir())


def build(
    src: Path = REPO_ROOT / "notebooks",
    out: Path = REPO_ROOT / "build" / "slides",
    stems: list[str] | None = None,
    languages: tuple[str, ...] = ("en", "zh_CN"),
    cuts: Path = CUTS,
    student: bool = False,
) -> dict[str, list[Path]]:
    """Write the decks of the executed notebooks ``src/NN_name.ipynb``, cut by the table ``cuts``, into ``out``, replaced as a whole (see
    the module docstring): ``out/NN_name.slides.html``, ``out/<folder>/NN_name.slides.html`` for each other
    edition of ``languages`` (``zh/``), ``out/_static/``; with ``student``, the students' decks (:func:`student_version`).

    Returns:
        language -> its decks, in order; a notebook whose translation is incomplete has none.

    Raises:
        SlidesError: see the module docstring.
    """
    src, out = Path(src), Path(out)
    stems = [p.stem for p in plumbing.series_notebooks()] if stems is None else list(stems)
    if not stems:
        raise SlidesError("The series has no notebooks (notebooks/NN_*.ipynb).")
    if not is_decks_folder(out):
        raise SlidesError(f"{out} holds files other than decks; refusing to replace it with the decks.")
    decks, written = {}, {}
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    for language in languages:
        notebooks, _ = edition_decks(src, stems, language)
        if student:
            notebooks = {stem: student_version(nb, stem, language) for stem, nb in notebooks.items()}
        folder = tmp / EDITIONS[language].folder
        written[language] = [out / EDITIONS[language].folder / deck_name(stem) for stem in notebooks]
        decks.update({folder / deck_name(stem): (nb, language, stem) for stem, nb in notebooks.items()})
    try:
        write_decks(decks, tmp / STATIC, load_cuts(cuts))
        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return written


def main(argv: list[str] | None = None) -> int:
    """``make slides``: :func:`build` with the command line's folders; exit status 2 with one line on a SlidesError."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--src",
        type=Path,
        default=REPO_ROOT / "notebooks",
        help="folder of executed NN_*.ipynb (default notebooks/, which carry their outputs)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="the decks' folder, replaced whole (default build/slides/, or build/slides-student/)"
    )
    parser.add_argument(
        "--student", action="store_true", help="the students' decks: each graded cell as the student edition has it (its stub)"
    )
    args = parser.parse_args(argv)
    args.out = args.out or REPO_ROOT / "build" / ("slides-student" if args.student else "slides")
    start = time.perf_counter()
    stems = [p.stem for p in plumbing.series_notebooks()]
    try:
        written = build(args.src, args.out, stems, student=args.student)
    except SlidesError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{len(decks)} in {EDITIONS[lang].label}" for lang, decks in written.items())
    print(
        f"decks written in {args.out}: {counts} ({time.perf_counter() - start:.1f} s); open "
        f"{args.out / deck_name(stems[0])} (space for the next slide, S for the speaker notes)"
    )
    uncut = [stem for stem in stems if not load_cuts().get(stem)]
    if uncut:
        print(f"note: {', '.join(uncut)} not in {CUTS.name}: a slide per section, the prose in the notes")
    for lang, decks in written.items():
        left = [stem for stem in stems if args.out / EDITIONS[lang].folder / deck_name(stem) not in decks]
        if left:
            print(
                f"note: no {EDITIONS[lang].label} deck of {', '.join(left)}, whose translation is incomplete (python tools/i18n.py check)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
