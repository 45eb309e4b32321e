"""Sphinx extension: a banner on each page saying which weights its outputs come from.

Read from the ``llama3`` metadata that tools/run_notebooks.py writes (``weights``, ``weights_description``,
``prompt``, ``standin_model``): a prompt other than the default is shown, and the home page has a banner when any
notebook ran on real weights. A notebook without that metadata is a warning, which the site's build makes an error.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from tools import interface
import plumbing
from tools.book.editions import language

logger = logging.getLogger(__name__)

#: kind of banner -> (headline, text); Chinese: interface.po, ``banner.<kind>[i]``.
BANNERS = interface.Words(
    "banner",
    {
        "standin": (
            "Run on the synthetic stand-in:",
            "random weights with {model}'s names, shapes and dtype, not Meta's weights. The values "
            "differ from the real model's; shapes, dtypes and every check do not. The sections on "
            "SmolLM2-135M-Instruct run a small trained model (not Llama 3).",
        ),
        "real": (
            "Run on real weights:",
            "{description}. The outputs on this page come from a real Llama 3 checkpoint, not from the synthetic "
            "stand-in; Meta's Llama 3 Community License applies to them.",
        ),
        "site": (
            "Built from runs on real weights:",
            "{n} of {total} notebooks ran on a real Llama 3 checkpoint, not on the synthetic stand-in; "
            "each page says which weights it used.",
        ),
        "prompt": ("Prompt:", "(the text describes the default prompt's tokens)."),
    },
)


def run_of(source: str) -> dict | None:
    """The ``llama3`` metadata of the notebook at ``source`` (``None`` for a page that is no notebook)."""
    if not source.endswith(".ipynb"):
        return None
    return json.loads(Path(source).read_text(encoding="utf-8")).get("metadata", {}).get("llama3") or {}


def banner(kind: str, headline: str, text: str, prompt: str | None = None, lang: str = "en") -> str:
    """The banner's HTML; ``kind`` is ``standin``, ``meta``, ``hf`` or ``site``."""
    extra = ""
    if prompt is not None and prompt != plumbing.DEFAULT_PROMPT:
        before, after = BANNERS[lang]["prompt"]
        extra = f' <span class="llama3-banner-prompt">{escape(before)} <code>{escape(repr(prompt))}</code> {escape(after)}</span>'
    css = "standin" if kind == "standin" else "real"
    return (
        f'<div class="llama3-banner llama3-banner-{css}" data-weights="{escape(kind)}" role="note">'
        f"<strong>{escape(headline)}</strong> {escape(text)}{extra}</div>\n"
    )


def add_banner(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    env = app.builder.env
    words = BANNERS.get(language(app), BANNERS["en"])
    lang = language(app) if language(app) in BANNERS else "en"
    if pagename not in env.found_docs:
        return  # search page, genindex
    run = run_of(str(env.doc2path(pagename)))
    if run is None:  # the home page
        runs = [run_of(str(env.doc2path(d))) for d in sorted(env.found_docs)]
        runs = [r for r in runs if r is not None]
        real = [r for r in runs if r.get("weights") not in (None, "standin")]
        if real:
            headline, text = words["site"]
            context["body"] = banner("site", headline, text.format(n=len(real), total=len(runs)), lang=lang) + context["body"]
        return
    if not run.get("weights"):
        logger.warning(
            f"{pagename}.ipynb has no 'llama3' metadata (which weights it ran on): execute it with tools/run_notebooks.py (`make run`)",
            type="llama3",
            subtype="banner",
        )
        return
    headline, text = words["standin" if run["weights"] == "standin" else "real"]
    text = text.format(description=run.get("weights_description") or run["weights"], model=run.get("standin_model", "Meta-Llama-3-8B"))
    context["body"] = banner(run["weights"], headline, text, run.get("prompt"), lang) + context["body"]


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", add_banner)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
