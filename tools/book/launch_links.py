"""Sphinx extension: every page links to the repository and opens in Google Colab and on Binder.

sphinx-book-theme makes the repository button and, on notebook pages, the launch menu (settings in conf.py). This
points a notebook's launch links at the edition's notebook in the repository (``llama3_notebooks``: ``notebooks``
or ``notebooks/zh``), gives the other pages a menu (Binder: that folder; Colab: its first notebook), each link a
class of its own (``btn-launch-binder``, ``btn-launch-colab``), and the menu its words (the theme has no Chinese).
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.util import logging

from tools.book.editions import label

logger = logging.getLogger(__name__)

#: the start of a path in each notebook interface's address (as sphinx-book-theme spells them)
INTERFACES = {"classic": "tree", "jupyterlab": "lab/tree"}
LOGOS = {"Binder": "_static/images/logo_binder.svg", "Colab": "_static/images/logo_colab.png"}


def launch_urls(options: dict, path: str) -> dict[str, str]:
    """The launch addresses, as the theme makes them, of the repository's file or folder ``path``: button -> address."""
    launch = options.get("launch_buttons") or {}
    owner, repo = options["repository_url"].strip("/").split("/")[-2:]
    branch = options.get("repository_branch") or "main"
    urls = {}
    if launch.get("binderhub_url"):
        interface = INTERFACES[launch.get("notebook_interface", "classic")]
        urls["Binder"] = f"{launch['binderhub_url'].strip('/')}/v2/gh/{owner}/{repo}/{branch}?urlpath={interface}/{path}"
    if launch.get("colab_url") and path.endswith(".ipynb"):
        urls["Colab"] = f"{launch['colab_url'].strip('/')}/github/{owner}/{repo}/blob/{branch}/{path}"
    return urls


def repository_path(app: Sphinx, pagename: str) -> str:
    """The path in the repository of the notebook of page ``pagename`` (``notebooks/NN_name``) in this edition."""
    return app.config.llama3_notebooks.strip("/") + pagename.removeprefix("notebooks") + ".ipynb"


def link_button(app: Sphinx, text: str, url: str) -> dict:
    return {
        "type": "link",
        "text": text,
        "tooltip": label(app, "launch_on").format(text),
        "icon": LOGOS[text],
        "url": url,
        "label": f"launch-{text.lower()}",
    }


def point_launch_buttons(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Point the theme's launch links of a notebook page at the edition's notebook; give the other pages a menu."""
    if "header_buttons" not in context:
        return
    options = app.config.html_theme_options
    groups = [b for b in context["header_buttons"] if b.get("label") == "launch-buttons"]
    if groups:  # a notebook page: the theme's links end with the staged path, path_to_docs + pagename
        prefix = options.get("path_to_docs", "").strip("/")
        staged = f"{prefix}/{pagename}.ipynb" if prefix else f"{pagename}.ipynb"
        for button in groups[0]["buttons"]:
            if not button.get("url", "").endswith(staged):
                logger.warning(
                    f"{pagename}: sphinx-book-theme's launch link {button.get('url')} does not end with "
                    f"{staged}; tools/book/launch_links.py cannot point it at the edition's notebook"
                )
                continue
            button["url"] = button["url"][: -len(staged)] + repository_path(app, pagename)
            button.update(label=f"launch-{button['text'].lower()}", tooltip=label(app, "launch_on").format(button["text"]))
        groups[0]["tooltip"] = label(app, "launch")
        return
    if context.get("page_source_suffix") == ".ipynb":
        logger.warning(f"{pagename}: sphinx-book-theme gave the notebook page no launch buttons")
        return
    notebooks = sorted(d for d in app.env.found_docs if d.startswith("notebooks/"))
    urls = launch_urls(options, app.config.llama3_notebooks.strip("/"))  # Binder: the folder of notebooks
    if notebooks:
        urls["Colab"] = launch_urls(options, repository_path(app, notebooks[0])).get("Colab")
    buttons = [link_button(app, text, url) for text, url in urls.items() if url]
    if buttons:
        context["header_buttons"].insert(
            0, {"type": "group", "tooltip": label(app, "launch"), "icon": "fas fa-rocket", "buttons": buttons, "label": "launch-buttons"}
        )


def setup(app: Sphinx) -> dict:
    app.add_config_value("llama3_notebooks", "notebooks", "html", types=(str,))
    app.connect("html-page-context", point_launch_buttons, priority=600)  # after the theme's buttons (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
