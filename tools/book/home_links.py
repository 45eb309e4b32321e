"""Sphinx extension: the home pages' links to the repository and to the slide decks of this build's notebooks.

``{llama3-repository}`text``` links to the repository (the theme's ``repository_url``); ``llama3-slides`` links the
slide deck (tools/slides.py) of each notebook of this build only: an edition's left-out notebook has no deck.
"""

from __future__ import annotations

import re

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

NOTEBOOK = re.compile(r"^notebooks/(?P<stem>(?P<number>\d\d)_[^/]+)$")


def repository_url(config) -> str:
    return (config.html_theme_options or {}).get("repository_url", "").rstrip("/")


def repository_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{llama3-repository}`words```: ``words`` linked to the repository (class ``llama3-repository-link``)."""
    url = repository_url(inliner.document.settings.env.config)
    if not url:
        message = inliner.reporter.error("llama3-repository: the configuration has no repository_url", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    return [nodes.reference(rawtext, text, refuri=url, classes=["llama3-repository-link"])], []


class Slides(SphinxDirective):
    """``llama3-slides``: "<argument> 01 · 02 · ... ." with a link to each notebook's slide deck."""

    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {"end": directives.unchanged}

    def run(self) -> list:
        stems = sorted(m["stem"] for m in map(NOTEBOOK.match, self.env.found_docs) if m)
        if not stems:
            return []
        up = "../" * self.env.docname.count("/")
        para = nodes.paragraph("", "", classes=["llama3-slides"])
        if self.arguments:
            para += nodes.Text(self.arguments[0] + " ")
        for i, stem in enumerate(stems):
            if i:
                para += nodes.Text(" · ")
            number = stem[:2]
            para += nodes.reference(number, number, refuri=f"{up}slides/{stem}.slides.html")
        para += nodes.Text(self.options.get("end", "."))
        return [para]


def setup(app: Sphinx) -> dict:
    app.add_role("llama3-repository", repository_role)
    app.add_directive("llama3-slides", Slides)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
