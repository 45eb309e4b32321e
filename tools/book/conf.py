"""Sphinx configuration of the course site (``make html``; tools/build_site.py runs ``python -m sphinx -c tools/book``).

The source folder is a staging copy that tools/site_stage.py writes: ``index.md`` (this folder's, as it
is: a toctree globs the notebooks, another lists the pages of docs/ that there are),
``notebooks/NN_*.ipynb`` (executed copies, never re-executed here) with ``images/`` beside them, and
the pages of docs/ (``docs/errata.md``, ``docs/models.md``, ...: tools/site_stage.py's ``DOC_PAGES``) when the
repository has them.

The site has two editions, built with this one configuration: English (``language = "en"``, in
``site/``) and Chinese (``-D language=zh_CN``, in ``site/zh/``: Sphinx's and the theme's own words
in Chinese, the notebooks translated by tools/i18n.py from ``locale/zh_CN/LC_MESSAGES/*.po``, the home
page from ``index.zh_CN.md``). tools/build_site.py sets the language and ``llama3_other_edition``
(editions.py), which links every page to its counterpart in the other edition, and for the Chinese
edition ``llama3_notebooks`` (launch_links.py: the repository's folder of the edition's notebooks).

Every page links to the repository and opens in Google Colab and on Binder (the theme's repository
button and launch menu, with launch_links.py). The repository's address is read from pyproject.toml,
``[project.urls] Repository``, the one place it is written.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The site's own small extensions, files beside this one, in the order they import each other.
LOCAL_EXTENSIONS = ["editions", "local_mathjax", "weights_banner", "solutions", "deep_dives", "search_zh", "launch_links", "home_links"]


#: The tools' modules that the extensions import: the site's words in each language (interface.py, which reads
#: locale/zh_CN/LC_MESSAGES/interface.po with i18n.py).
TOOLS = ["i18n", "interface"]


def load_local_extension(name: str, folder: Path = HERE) -> None:
    """Register ``folder/name.py`` as module ``name``, so that Sphinx (and the other extensions) import it by name."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


for _name in TOOLS:
    load_local_extension(_name, HERE.parent)
for _name in LOCAL_EXTENSIONS:
    load_local_extension(_name)

project = "Llama 3, step by step"
author = "the Llama 3, step by step authors"
copyright = f"{author}; text and figures CC BY 4.0, code Apache-2.0"

extensions = [
    "myst_nb",  # notebooks and markdown (MyST), the engine of Jupyter Book 1
    "sphinx.ext.mathjax",
    "local_mathjax",  # MathJax from a PyPI package, copied into the site: nothing from a CDN
    "weights_banner",  # which weights a page's outputs come from, read from the notebook's metadata
    "solutions",  # exercise solutions collapsed, code and output
    "deep_dives",  # the "Deep dives" section of a notebook, collapsed
    "editions",  # the link to the same page in the other edition (English <-> Chinese)
    "search_zh",  # Chinese search by pairs of characters (Sphinx's needs the package jieba)
    "launch_links",  # Colab and Binder links on every page, to the edition's notebooks in the repository
    "home_links",  # the home pages' link to the repository and to the slide decks of the build's notebooks
]
root_doc = "index"
exclude_patterns = ["**.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# --------------------------------------------------------------------------- notebooks
nb_execution_mode = "off"  # build/ holds executed notebooks; the site never runs a cell
nb_merge_streams = True
# html_image: the home page's overview figure is an <img> with a width, so Sphinx links it to the full-size file
# (html_scaled_image_link); no notebook or page of docs/ writes <img>
myst_enable_extensions = ["dollarmath", "amsmath", "html_image"]
myst_heading_anchors = 3

# --------------------------------------------------------------------------- editions
language = "en"  # tools/build_site.py builds the Chinese edition with language = "zh_CN"
llama3_other_edition = ""  # JSON, set by tools/build_site.py with -D (editions.py)

# --------------------------------------------------------------------------- the repository
PYPROJECT = tomllib.loads((HERE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
repository_url = PYPROJECT["project"]["urls"]["Repository"].rstrip("/")  # written there only
llama3_notebooks = "notebooks"  # launch_links.py; tools/build_site.py sets notebooks/zh for the Chinese edition

# --------------------------------------------------------------------------- HTML
html_theme = "sphinx_book_theme"
html_title = project
html_static_path = [str(HERE / "_static")]
templates_path = [str(HERE / "_templates")]
# the theme's sidebar, with the link to the other edition under the search field
html_sidebars = {"**": ["navbar-logo.html", "icon-links.html", "search-button-field.html", "language-switch.html", "sbt-sidebar-nav.html"]}
html_css_files = ["llama3.css"]
html_favicon = str(HERE / "_static" / "favicon.svg")  # declared, so browsers do not ask a server for /favicon.ico
html_copy_source = True  # the download button serves each page's .ipynb from _sources/
html_sourcelink_suffix = ""  # ... as NN_name.ipynb, not NN_name.ipynb.txt
html_show_search_summary = False  # summaries are fetched with fetch(), which file:// pages may not do
html_last_updated_fmt = None  # no dates: the site is the same on every rebuild
html_context = {"default_mode": "auto"}  # light or dark as the reader's system prefers
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "use_repository_button": True,  # on every page, beside the launch and download buttons
    "use_issues_button": False,
    "use_edit_page_button": False,
    "use_source_button": False,
    # the page's notebook in the repository, opened on Binder and in Colab (launch_links.py: every page, both editions)
    "repository_url": repository_url,
    "repository_branch": "main",
    "path_to_docs": "",  # the source folder's notebooks/NN_*.ipynb are the repository's notebooks/NN_*.ipynb
    "launch_buttons": {
        "notebook_interface": "jupyterlab",
        "binderhub_url": "https://mybinder.org",
        "colab_url": "https://colab.research.google.com",
    },
    "icon_links": [{"name": "GitHub", "url": repository_url, "icon": "fa-brands fa-github", "type": "fontawesome"}],
    "analytics": {},
    "navigation_with_keys": False,
    "navbar_persistent": [],  # the sidebar has the search field; no second one in a header bar
    "footer_content_items": ["copyright.html"],
    "extra_footer": "",
}
