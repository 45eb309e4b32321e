"""Sphinx extension: a notebook's ``## Deep dives`` section is shown collapsed on the site.

Everything after that heading is optional material (CONTRIBUTING.md). The heading stays; its content goes into a
closed ``<details>`` whose summary lists the deep dives (the page's contents still link to each one).
"""

from __future__ import annotations

from html import escape

from docutils import nodes
from sphinx.application import Sphinx

from tools.book.editions import label

SECTION_NAME = "deep dives"  # docutils' normalised name of the heading "## Deep dives"


def is_deep_dives(section: nodes.section) -> bool:
    """Whether ``section`` is headed ``Deep dives`` (``深入探讨 · Deep dives`` in the Chinese edition)."""
    return any(name.split("·")[-1].strip() == SECTION_NAME for name in section["names"])


class deep_dives(nodes.General, nodes.Element):
    """The collapsed content of a Deep dives section; ``summary`` lists the titles of the deep dives,
    ``show`` and ``optional`` are the words of the toggle."""


def visit_html(self, node: deep_dives) -> None:
    listed = f' <span class="llama3-deep-dives-list">{escape(node["summary"])}</span>' if node["summary"] else ""
    self.body.append(
        f'<details class="llama3-deep-dives"><summary><strong>{escape(node["show"])}</strong>{escape(node["optional"])}{listed}</summary>\n'
    )


def depart_html(self, node: deep_dives) -> None:
    self.body.append("</details>\n")


def collapse(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    for section in list(doctree.findall(nodes.section)):
        if not is_deep_dives(section) or not section.children:
            continue
        title, content = section.children[0], section.children[1:]
        if not isinstance(title, nodes.title) or not content:
            continue
        dives = [s[0].astext() for s in content if isinstance(s, nodes.section) and s.children]
        box = deep_dives(summary=" · ".join(dives), show=label(app, "show_deep_dives"), optional=label(app, "optional"))
        box.extend(content)
        section.children = [title]
        section.append(box)


def setup(app: Sphinx) -> dict:
    app.add_node(deep_dives, html=(visit_html, depart_html))
    app.connect("doctree-resolved", collapse)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
