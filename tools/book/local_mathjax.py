"""Sphinx extension: MathJax 3 served from the site itself, from the PyPI package django-static-mathjax.

The package ships MathJax's own distribution (``mathjax/static/mathjax``, with its LICENSE). One file
of it is enough: ``es5/tex-svg-full.js`` holds TeX input with every extension and SVG output, so no
font files are fetched. It is copied to ``_static/mathjax/`` with the licence and ``mathjax_path``
points there: a page opened from disk or from any static server loads nothing from outside the site.
MathJax's configuration is ``mathjax-config.js`` beside this file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

MATHJAX_FILE = "es5/tex-svg-full.js"


def mathjax_dir() -> Path:
    """The MathJax distribution inside the installed package django-static-mathjax.

    Raises:
        ExtensionError: the package is not installed.
    """
    try:
        import mathjax  # the import name of django-static-mathjax
    except ImportError:
        raise ExtensionError(
            "MathJax is not installed: pip install -r requirements.txt (the site's MathJax comes from the package django-static-mathjax)"
        ) from None
    folder = Path(mathjax.__file__).resolve().parent / "static" / "mathjax"
    if not (folder / MATHJAX_FILE).is_file():
        raise ExtensionError(f"{folder / MATHJAX_FILE} is missing: reinstall django-static-mathjax")
    return folder


def configure(app: Sphinx, config) -> None:
    mathjax_dir()  # fail early, before reading any page
    config.mathjax_path = f"mathjax/{Path(MATHJAX_FILE).name}"  # relative to _static/
    config.mathjax_config_path = "mathjax-config.js"  # beside conf.py


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        dest = Path(app.outdir) / "_static" / "mathjax"
        dest.mkdir(parents=True, exist_ok=True)
        src = mathjax_dir()
        shutil.copy2(src / MATHJAX_FILE, dest / Path(MATHJAX_FILE).name)
        shutil.copy2(src / "LICENSE", dest / "LICENSE")


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", configure)
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
