"""Sphinx extension: a banner on each page saying which weights its outputs come from.

The banner is read from the executed notebook's metadata, which tools/run_notebooks.py writes:
``metadata["llama3"] = {"weights": "standin" | "meta" | "hf", "weights_description": ..., "prompt": ...}``.
A page run on real weights says so in a banner of its own colour; a prompt other than the default
is shown, since the text describes the default prompt's tokens. The home page carries a banner when
any notebook of the site ran on real weights. A notebook without that metadata (never run by
tools/run_notebooks.py) is a warning, which tools/build_site.py turns into an error.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

import plumbing

logger = logging.getLogger(__name__)

STANDIN = ("Run on the synthetic stand-in:",
           "random weights with Meta-Llama-3-8B's names, shapes and dtype, not Meta's weights. The values "
           "differ from the real model's; shapes, dtypes and every check do not.")
REAL = ("Run on real weights:",
        "{description}. The outputs on this page come from a real Llama 3 checkpoint, not from the synthetic "
        "stand-in; Meta's Llama 3 Community License applies to them.")
SITE_REAL = ("Built from runs on real weights:",
             "{n} of {total} notebooks ran on a real Llama 3 checkpoint, not on the synthetic stand-in; "
             "each page says which weights it used.")


def run_of(source: str) -> dict | None:
    """The ``llama3`` metadata of the notebook at ``source`` (``None`` for a page that is no notebook)."""
    if not source.endswith(".ipynb"):
        return None
    return json.loads(Path(source).read_text(encoding="utf-8")).get("metadata", {}).get("llama3") or {}


def banner(kind: str, headline: str, text: str, prompt: str | None = None) -> str:
    """The banner's HTML; ``kind`` is ``standin``, ``meta``, ``hf`` or ``site``."""
    extra = ""
    if prompt is not None and prompt != plumbing.DEFAULT_PROMPT:
        extra = (f' <span class="llama3-banner-prompt">Prompt: <code>{escape(repr(prompt))}</code> '
                 "(the text describes the default prompt's tokens).</span>")
    css = "standin" if kind == "standin" else "real"
    return (f'<div class="llama3-banner llama3-banner-{css}" data-weights="{escape(kind)}" role="note">'
            f"<strong>{escape(headline)}</strong> {escape(text)}{extra}</div>\n")


def add_banner(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    env = app.builder.env
    if pagename not in env.found_docs:
        return  # search page, genindex
    run = run_of(str(env.doc2path(pagename)))
    if run is None:  # the home page
        runs = [run_of(str(env.doc2path(d))) for d in sorted(env.found_docs)]
        runs = [r for r in runs if r is not None]
        real = [r for r in runs if r.get("weights") not in (None, "standin")]
        if real:
            headline, text = SITE_REAL
            context["body"] = banner("site", headline, text.format(n=len(real), total=len(runs))) + context["body"]
        return
    if not run.get("weights"):
        logger.warning(f"{pagename}.ipynb has no 'llama3' metadata (which weights it ran on): "
                       "execute it with tools/run_notebooks.py (`make run`)", type="llama3", subtype="banner")
        return
    headline, text = STANDIN if run["weights"] == "standin" else REAL
    text = text.format(description=run.get("weights_description") or run["weights"])
    context["body"] = banner(run["weights"], headline, text, run.get("prompt")) + context["body"]


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", add_banner)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
