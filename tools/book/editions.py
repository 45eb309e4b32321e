"""Sphinx extension: the site's two editions, English and Chinese, link to each other.

tools/build_site.py describes the other edition in ``llama3_other_edition``, JSON so that ``-D`` can set it::

    {"label": "English", "lang": "en", "root": "../", "pages": ["index", "notebooks/01_tokenization", ...]}

Each page's sidebar (``_templates/language-switch.html``) links to the same page there, else to its home page.
Directives: ``llama3-left-out`` names the other edition's notebooks that this one lacks; ``llama3-toctree-if-found``
is a toctree without the entries that are no page of the build (``suppress_warnings`` cannot silence Sphinx's
warning on an empty ``:glob:``).
"""

from __future__ import annotations

import json

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.directives.other import TocTree
from sphinx.util.docutils import SphinxDirective

from tools import interface

#: The words of the site's own extensions (Sphinx and the theme translate theirs); Chinese: interface.po, ``site.<key>``.
LABELS = interface.Words(
    "site",
    {
        "show_solution": "Show the solution",
        "hide_solution": "Hide the solution",
        "show_deep_dives": "Show the deep dives",
        "show_code": "Show the code",  # a collapsed code cell (tag hide-input), MyST-NB's nb_code_prompt_show
        "hide_code": "Hide the code",
        "optional": " (optional)",
        "other_edition": "This page in another language",
        "launch": "Launch interactive content",
        "launch_on": "Launch on {}",
        "left_out": ("Not yet in this edition:", " these notebooks are in the other edition only: ", ", ", "."),
    },
)


def language(app: Sphinx) -> str:
    """The build's language as a key of :data:`LABELS` (``en`` for anything not translated)."""
    return config_language(app.config)


def config_language(config) -> str:
    lang = (config.language or "en").replace("-", "_")
    return lang if lang in LABELS else lang.split("_")[0] if lang.split("_")[0] in LABELS else "en"


def label(app: Sphinx, key: str) -> str:
    return LABELS[language(app)][key]


def other_edition(config) -> dict | None:
    """The configuration's ``llama3_other_edition``, read (``None`` for a single edition)."""
    value = config.llama3_other_edition
    return json.loads(value) if value else None


def other_page(pagename: str, other: dict) -> str:
    """The address of ``pagename``'s counterpart in the other edition, relative to ``pagename``'s page."""
    up = "../" * pagename.count("/")
    target = pagename if pagename in other["pages"] else "index"
    return f"{up}{other['root']}{target}.html"


def add_link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    other = other_edition(app.config)
    if other:
        context["llama3_other_edition"] = {
            "href": other_page(pagename, other),
            "label": other["label"],
            "lang": other["lang"],
            "title": label(app, "other_edition"),
        }


class LeftOut(SphinxDirective):
    """``llama3-left-out``: a paragraph naming the other edition's notebooks that this edition lacks."""

    def run(self) -> list:
        other = other_edition(self.config)
        missing = [p for p in (other or {}).get("pages", []) if p.startswith("notebooks/") and p not in self.env.found_docs]
        if not missing:
            return []
        strong, text, comma, stop = LABELS[config_language(self.config)]["left_out"]
        up = "../" * self.env.docname.count("/")
        para = nodes.paragraph("", "", nodes.strong(strong, strong), nodes.Text(text))
        for i, page in enumerate(missing):
            name = page.removeprefix("notebooks/")
            if i:
                para += nodes.Text(comma)
            para += nodes.reference(name, name, refuri=f"{up}{other['root']}{page}.html")
        para += nodes.Text(stop)
        return [para]


class TocTreeIfFound(TocTree):
    """``llama3-toctree-if-found``: a toctree of the entries (page names, from the root) that this build has."""

    def parse_content(self, toctree) -> list:
        found = [(line, self.content.items[i]) for i, line in enumerate(self.content) if line.strip() in self.env.found_docs]
        self.content = StringList([line for line, _ in found], items=[item for _, item in found])
        return super().parse_content(toctree)


def code_prompts(app: Sphinx, config) -> None:
    """MyST-NB's words on a collapsed code cell's toggle, in the build's language."""
    config.nb_code_prompt_show = LABELS[config_language(config)]["show_code"]
    config.nb_code_prompt_hide = LABELS[config_language(config)]["hide_code"]


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", code_prompts)
    app.add_config_value("llama3_other_edition", "", "env", types=(str,))
    app.add_directive("llama3-left-out", LeftOut)
    app.add_directive("llama3-toctree-if-found", TocTreeIfFound)
    app.connect("html-page-context", add_link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
