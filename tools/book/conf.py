"""Sphinx configuration of the course site (``make html``; tools/build_site.py runs ``python -m sphinx -c tools/book``
from the repository root, so that the extensions import as ``tools.book.*``).

One configuration for both editions: for the Chinese one tools/build_site.py sets ``-D language=zh_CN`` and
``llama3_notebooks=notebooks/zh`` (launch_links.py); for both, ``llama3_other_edition`` (editions.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent

project = "Llama 3, step by step"
author = "the Llama 3, step by step authors"
copyright = f"{author}; text and figures CC BY 4.0, code Apache-2.0"

extensions = [
    "myst_nb",  # notebooks and markdown (MyST), the engine of Jupyter Book 1
    "sphinx.ext.mathjax",
    "tools.book.local_mathjax",  # MathJax from a PyPI package, copied into the site: nothing from a CDN
    "tools.book.weights_banner",
    "tools.book.solutions",
    "tools.book.deep_dives",
    "tools.book.editions",
    "tools.book.search_zh",
    "tools.book.launch_links",
    "tools.book.home_links",
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
language = "en"
llama3_other_edition = ""  # JSON, set by tools/build_site.py with -D (editions.py)

# --------------------------------------------------------------------------- the repository
PYPROJECT = tomllib.loads((HERE.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
repository_url = PYPROJECT["project"]["urls"]["Repository"].rstrip("/")  # written there only
llama3_notebooks = "notebooks"  # launch_links.py

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
    "use_repository_button": True,
    "use_issues_button": False,
    "use_edit_page_button": False,
    "use_source_button": False,
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
