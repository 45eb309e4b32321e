"""Sphinx extension: the site's two editions, English and 中文 (Chinese), link to each other.

tools/build_site.py builds the English edition into ``site/`` and the Chinese one into ``site/zh/``
and tells each about the other through the configuration value ``llama3_other_edition``::

    {"label": "中文版", "lang": "zh-CN", "root": "zh/", "pages": ["index", "notebooks/01_tokenization", ...]}

``root`` is the other edition's folder relative to this edition's root and ``pages`` its page names.
Every page gets a link in the sidebar (template ``_templates/language-switch.html``) to the same page
in the other edition, or to its home page when that page is not there (a notebook not yet translated).
Without the value (a single edition) no link is shown.

The labels that the site's own extensions write (solutions, deep dives, banner) are looked up with
:func:`label` in the build's language.
"""

from __future__ import annotations

from sphinx.application import Sphinx

#: The site's own words in each edition (Sphinx and the theme translate theirs).
LABELS = {
    "en": {
        "show_solution": "Show the solution",
        "hide_solution": "Hide the solution",
        "show_deep_dives": "Show the deep dives",
        "optional": " (optional)",
        "other_edition": "This page in another language",
    },
    "zh_CN": {
        "show_solution": "显示解答",
        "hide_solution": "隐藏解答",
        "show_deep_dives": "展开深入探讨",
        "optional": "（选读）",
        "other_edition": "本页的其他语言版本",
    },
}


def language(app: Sphinx) -> str:
    """The build's language as a key of :data:`LABELS` (``en`` for anything not translated)."""
    lang = (app.config.language or "en").replace("-", "_")
    return lang if lang in LABELS else lang.split("_")[0] if lang.split("_")[0] in LABELS else "en"


def label(app: Sphinx, key: str) -> str:
    return LABELS[language(app)][key]


def other_page(pagename: str, other: dict) -> str:
    """The address of ``pagename``'s counterpart in the other edition, relative to ``pagename``'s page."""
    up = "../" * pagename.count("/")
    target = pagename if pagename in other["pages"] else "index"
    return f"{up}{other['root']}{target}.html"


def add_link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    other = app.config.llama3_other_edition
    if other:
        context["llama3_other_edition"] = {"href": other_page(pagename, other), "label": other["label"],
                                           "lang": other["lang"], "title": label(app, "other_edition")}


def setup(app: Sphinx) -> dict:
    app.add_config_value("llama3_other_edition", None, "html", types=(dict, type(None)))
    app.connect("html-page-context", add_link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
