"""Sphinx extension: a notebook's ``## Deep dives`` section is shown collapsed on the site.

Everything after that heading is optional material (NOTEBOOK_GUIDE.md); on the site the heading
stays visible and its content goes into a closed ``<details>`` element whose summary lists the deep
dives. The page's contents list still links to each one (the browser opens the element on the way).
The section is found by its reference name, which Sphinx keeps in translated editions too.
Exercise solutions need nothing here: their cells are tagged ``hide-input``, which MyST-NB collapses.
"""

from __future__ import annotations

from html import escape

from docutils import nodes
from sphinx.application import Sphinx

SECTION_NAME = "deep dives"  # docutils' normalised name of the heading "## Deep dives"


class deep_dives(nodes.General, nodes.Element):
    """The collapsed content of a Deep dives section; ``summary`` lists the titles of the deep dives."""


def visit_html(self, node: deep_dives) -> None:
    listed = f' <span class="llama3-deep-dives-list">{escape(node["summary"])}</span>' if node["summary"] else ""
    self.body.append(f'<details class="llama3-deep-dives"><summary><strong>Show the deep dives</strong> '
                     f'(optional){listed}</summary>\n')


def depart_html(self, node: deep_dives) -> None:
    self.body.append("</details>\n")


def collapse(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    for section in list(doctree.findall(nodes.section)):
        if SECTION_NAME not in section["names"] or not section.children:
            continue
        title, content = section.children[0], section.children[1:]
        if not isinstance(title, nodes.title) or not content:
            continue
        dives = [s[0].astext() for s in content if isinstance(s, nodes.section) and s.children]
        box = deep_dives(summary=" · ".join(dives))
        box.extend(content)
        section.children = [title]
        section.append(box)


def setup(app: Sphinx) -> dict:
    app.add_node(deep_dives, html=(visit_html, depart_html))
    app.connect("doctree-resolved", collapse)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
