"""Slides (``make slides``): every notebook of the series as a reveal.js lecture deck, in both editions, offline.

    python -m tools.slides                      # the committed notebooks (they carry their outputs) -> build/slides/
    python -m tools.slides --src build --out DIR
    python -m tools.slides --student            # the students' decks -> build/slides-student/ (no graded code)

Cut by tools/slides_cuts.toml (tools/slides_cut.py: a notebook it lacks gets a slide per section), written by
tools/slides_html.py. Every path in a deck is relative: the folder works from ``file://`` and loads nothing from outside.

Raises:
    SlidesError (a SiteError; one line, exit status 2): a notebook missing or never executed, a slide naming a cell
    that is missing or may not be shown, sphinx-revealjs or django-static-mathjax not installed, nbconvert failing,
    or an ``--out`` folder that holds something other than decks.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
import time
from pathlib import Path

import nbformat

from tools import interface
import plumbing
from tools.site_stage import EDITIONS, REPO_ROOT, SiteError, edition_notebook
from tools.slides_cut import CUTS, SlidesError, load_cuts, sections_table
from tools.slides_html import STATIC, copy_assets, deck_name, exporter, write_deck

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
    """``nb`` as the student edition has it (tools/student.py's ``withhold``), each graded cell's code its stub
    (outputs kept), marked ``llama3_stub`` so that its slide shows it whole."""
    from grader.grading import stub
    from grader.steps import STEPS
    from tools.student import withhold

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
    ``static``; return the decks.

    Raises:
        SlidesError: see :func:`copy_assets` and :func:`write_deck`.
    """
    copy_assets(static)
    exp = exporter()
    return [
        write_deck(nb, dest, static, cuts.get(stem) or sections_table(nb), language, exp) for dest, (nb, language, stem) in decks.items()
    ]


def site_decks(src: Path, site: Path, editions: dict[str, tuple[str, list[str]]]) -> list[Path]:
    """Write the course site's decks: ``editions`` is ``language -> (its folder in the site, its notebooks)``, the
    decks go to ``site/<folder>/slides/``, the assets once to ``site/slides/_static/``.

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
    """Write the decks of the executed ``src/NN_name.ipynb`` into ``out``, replaced as a whole: ``NN_name.slides.html``,
    ``<folder>/NN_name.slides.html`` for each other edition (``zh/``), ``_static/``; ``student``: :func:`student_version`.

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
                f"note: no {EDITIONS[lang].label} deck of {', '.join(left)}, whose translation is incomplete (python -m tools.i18n check)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
