"""Sphinx extension: a banner on each page saying which weights its outputs come from.

The banner is read from the executed notebook's metadata, which tools/run_notebooks.py writes:
``metadata["llama3"] = {"weights": "standin" | "meta" | "hf", "weights_description": ..., "prompt": ...}``, and
``standin_model`` for a stand-in of another model's shapes (the banner names that model instead of Meta-Llama-3-8B).
A page run on real weights says so in a banner of its own colour; a prompt other than the default
is shown, since the text describes the default prompt's tokens. The home page carries a banner when
any notebook of the site ran on real weights. A notebook without that metadata (never run by
tools/run_notebooks.py) is a warning, which tools/build_site.py turns into an error. The banner's words
are in the build's language (``BANNERS``, keyed like editions.LABELS).
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

import plumbing
from editions import language

logger = logging.getLogger(__name__)

#: language -> kind of banner -> (headline, text); ``prompt`` is the line shown for a prompt other than the default.
BANNERS = {
    "en": {
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
    "zh_CN": {
        "standin": (
            "本页在合成替身权重（synthetic stand-in）上运行：",
            "随机权重，张量名称、形状和数据类型与 {model} 相同，但不是 Meta 的权重。数值与真实模型不同；"
            "形状、数据类型和每一项检查都相同。讲 SmolLM2-135M-Instruct 的小节运行的是一个训练过的小模型（不是 Llama 3）。",
        ),
        "real": (
            "本页在真实权重上运行：",
            "{description}。本页的输出来自真实的 Llama 3 检查点，而不是合成替身权重；"
            "这些输出受 Meta 的 Llama 3 社区许可协议（Llama 3 Community License）约束。",
        ),
        "site": (
            "本站由真实权重的运行结果构建：",
            "{total} 个笔记本中有 {n} 个在真实的 Llama 3 检查点上运行，而不是在合成替身权重上；每一页都注明了所用的权重。",
        ),
        "prompt": ("提示词：", "（正文描述的是默认提示词的词元）。"),
    },
}
STANDIN, REAL, SITE_REAL = (BANNERS["en"][k] for k in ("standin", "real", "site"))


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
