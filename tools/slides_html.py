"""The decks' HTML: nbconvert's ``reveal`` exporter with this project's template, and reveal.js and MathJax copied beside.

The template (tools/slides_template/llama3_slides/) is nbconvert's ``reveal`` with every outside file made local:
reveal.js from sphinx-revealjs, MathJax 3 from django-static-mathjax (the site's copy), no jQuery, require.js or
Mermaid. Its type sizes are set for a 1024 x 768 projector: code at least 20 px there.

Raises:
    SlidesError: sphinx-revealjs or django-static-mathjax is missing or incomplete, or nbconvert failed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from tools.site_stage import EDITIONS
from tools.slides_cut import HIDE_INPUT, SlidesError, slideshow

__all__ = ["STATIC", "deck_name", "copy_assets", "reveal_dir", "mathjax_dir", "exporter", "write_deck"]

TEMPLATES = Path(__file__).resolve().parent / "slides_template"
TEMPLATE = "llama3_slides"
STATIC = "_static"  # the assets' folder in the decks' root folder: _static/reveal.js/, _static/mathjax/
WIDTH, HEIGHT = 1280, 720  # the deck's size in CSS pixels (16:9); reveal.js scales it to the window
#: what the decks use of sphinx-revealjs's ``_static/revealjs/``
REVEAL_FILES = [
    "LICENSE",
    "dist/reveal.css",
    "dist/reveal.js",
    "dist/theme/white.css",
    "dist/theme/fonts/source-sans-pro",
    "plugin/notes/notes.js",
]
MATHJAX_FILE = "es5/tex-svg-full.js"  # TeX input, SVG output: no font files to fetch (as tools/book/local_mathjax.py)


def package_folder(module: str, package: str) -> Path:
    """The folder of the installed top-level ``module`` (from the PyPI package ``package``), not imported.

    Raises:
        SlidesError: the package is not installed.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise SlidesError(f"the Python package {package} is not installed: make setup (or pip install -r requirements.lock)")
    return Path(next(iter(spec.submodule_search_locations)))


def reveal_dir() -> Path:
    """reveal.js as sphinx-revealjs ships it (``dist/``, ``plugin/``, ``LICENSE``).

    Raises:
        SlidesError: sphinx-revealjs is not installed, or lacks a file the decks use.
    """
    folder = package_folder("sphinx_revealjs", "sphinx-revealjs") / "_static" / "revealjs"
    missing = [name for name in REVEAL_FILES if not (folder / name).exists()]
    if missing:
        raise SlidesError(f"{folder} lacks {', '.join(missing)}: reinstall sphinx-revealjs (requirements.lock)")
    return folder


def mathjax_dir() -> Path:
    """MathJax's distribution in django-static-mathjax (the course site's MathJax).

    Raises:
        SlidesError: django-static-mathjax is not installed, or lacks ``es5/tex-svg-full.js``.
    """
    folder = package_folder("mathjax", "django-static-mathjax") / "static" / "mathjax"
    if not (folder / MATHJAX_FILE).is_file():
        raise SlidesError(f"{folder / MATHJAX_FILE} is missing: reinstall django-static-mathjax (requirements.lock)")
    return folder


def copy_assets(static: Path) -> None:
    """Copy reveal.js (:data:`REVEAL_FILES`) into ``static/reveal.js/`` and MathJax into ``static/mathjax/``.

    Raises:
        SlidesError: see :func:`reveal_dir` and :func:`mathjax_dir`.
    """
    reveal, mathjax = reveal_dir(), mathjax_dir()
    for name in REVEAL_FILES:
        src, dest = reveal / name, static / "reveal.js" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest)
    (static / "mathjax").mkdir(parents=True, exist_ok=True)
    shutil.copy2(mathjax / MATHJAX_FILE, static / "mathjax" / Path(MATHJAX_FILE).name)
    shutil.copy2(mathjax / "LICENSE", static / "mathjax" / "LICENSE")


def deck_name(stem: str) -> str:
    """The deck's file name: ``NN_name.slides.html`` (nbconvert's own naming)."""
    return f"{stem}.slides.html"


def exporter():
    """nbconvert's slides exporter with this project's template, the deck's size, and no execution prompts."""
    from nbconvert import SlidesExporter

    exp = SlidesExporter(
        extra_template_basedirs=[str(TEMPLATES)],
        template_name=TEMPLATE,
        reveal_theme="white",
        reveal_transition="slide",
        reveal_number="c/t",
        reveal_width=str(WIDTH),
        reveal_height=str(HEIGHT),
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        exclude_anchor_links=True,
    )
    exp.log.setLevel("ERROR")  # "Alternative text is missing": the figures' outputs have none
    from nbconvert.preprocessors import TagRemovePreprocessor

    exp.register_preprocessor(TagRemovePreprocessor(remove_input_tags={HIDE_INPUT}), enabled=True)
    return exp


def write_deck(nb, dest: Path, static: Path, slides: list[dict], language: str = "en", exp=None) -> Path:
    """Write the deck of the executed notebook ``nb``, cut as ``slides``, to ``dest``, reading reveal.js and MathJax
    from ``static`` (:func:`copy_assets`) by relative paths.

    Raises:
        SlidesError: see :func:`slideshow`; or nbconvert failed on the notebook.
    """
    exp = exp or exporter()
    up = Path(os.path.relpath(static, dest.parent)).as_posix()
    exp.reveal_url_prefix = f"{up}/reveal.js"
    exp.mathjax_url = f"{up}/mathjax/{Path(MATHJAX_FILE).name}"
    exp.language_code = EDITIONS[language].lang.split("-")[0]
    try:
        body, _ = exp.from_notebook_node(slideshow(nb, slides, language), resources={"metadata": {"name": dest.name.split(".")[0]}})
    except SlidesError as e:
        raise SlidesError(f"{dest.name}: {e}") from None
    except Exception as e:  # nbconvert's and its filters' errors, of many types
        raise SlidesError(f"nbconvert could not make the deck {dest.name}: {type(e).__name__}: {e}") from e
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(body, encoding="utf-8")
    return dest
