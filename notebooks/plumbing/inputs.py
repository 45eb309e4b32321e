"""What a notebook's setup cell needs, in one call: :func:`setup` returns the :class:`Inputs`."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable

from .checkpoint import Checkpoint, CheckpointAs, open_checkpoint
from .params import ModelParams
from .paths import REPO_ROOT, display_path
from .tokenizer import tokenizer_path
from .tokenizer_child import tokenize_out_of_process
from .weights import resolve_dir

DEFAULT_PROMPT = "the answer to the ultimate question of life, the universe, and everything is "


def clean_environ(*prefixes: str, **extra: str) -> dict[str, str]:
    """This process's environment without the series' variables (``LLAMA3_*``) nor any starting with ``prefixes``,
    plus ``extra``: for a child process (a notebook kernel, a test's run) that must see the defaults."""
    drop = ("LLAMA3_", *prefixes)
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, **extra}


def prompt() -> str:
    """The prompt: ``LLAMA3_PROMPT`` when set (even to the empty string), else :data:`DEFAULT_PROMPT`."""
    return os.environ.get("LLAMA3_PROMPT", DEFAULT_PROMPT)


@dataclass(frozen=True)
class Inputs:
    """What every notebook starts from: the weights, their params, the prompt and its token ids.

    Attributes:
        checkpoint: the opened weights (:class:`~plumbing.checkpoint.Checkpoint`, memory-mapped).
        params: ``params.json`` with derived values (:class:`~plumbing.params.ModelParams`).
        prompt: the prompt (:func:`prompt`).
        tokens: token ids, ``<|begin_of_text|>`` (128000) first, as Meta's ``Tokenizer.encode(bos=True)``
            (SmolLM2's tokenizer has no begin-of-text token: its ids start with the text's).
        pieces: the text of each token (bytes decoded as UTF-8; part of a character shows as U+FFFD).
    """

    checkpoint: Checkpoint | CheckpointAs
    params: ModelParams
    prompt: str
    tokens: list[int]
    pieces: list[str]

    def report(self, keys: Iterable[str] = (), weights: bool = True) -> str:
        """Lines to print at the top of a notebook: the weights and RoPE scaling (unless ``weights`` is false, where
        no value of the weights matters), the prompt, the params in ``keys``."""
        n = len(self.tokens)
        shown = repr(self.prompt) if len(self.prompt) <= 200 else f"{self.prompt[:200]!r}... ({len(self.prompt):,} characters)"
        bos = " with <|begin_of_text|>" if self.pieces[:1] == ["<|begin_of_text|>"] else "; this tokenizer adds no begin-of-text token"
        lines = [f"prompt: {shown} ({n} token{'s' if n != 1 else ''}{bos})"]
        if weights:
            lines = [f"weights: {self.checkpoint.description}", *lines, self.params.rope_scaling_line()]
        if os.environ.get("LLAMA3_PROMPT") == self.prompt != DEFAULT_PROMPT:
            lines.append("note: LLAMA3_PROMPT is set; the text describes the default prompt (17 tokens), the outputs are for yours")
        lines += [f"{k}: {getattr(self.params, k)!r}" for k in keys]
        return "\n".join(lines)


def setup() -> Inputs:
    """Open the weights (``LLAMA3_DIR`` or the stand-in), read params and tokenize :func:`prompt`.

    The one place that builds the synthetic stand-in when it is missing (a fresh clone opened in
    Jupyter without ``make run``): it says "building the synthetic stand-in ..." and shows progress; likewise
    ``LLAMA3_DIR=data/smollm2`` builds SmolLM2 there when it is missing.
    Tokenizing runs in a child process (:func:`~plumbing.tokenizer.tokenize_out_of_process`).

    Raises:
        Llama3Error: any setup problem, with what to do about it.
    """
    from .smollm2 import SMOLLM2_DIR, ensure_smollm2
    from .standin import build_standin, standin_complete

    value = os.environ.get("LLAMA3_DIR", "").strip()
    if value and SMOLLM2_DIR.resolve() in {Path(value).expanduser().resolve(), (REPO_ROOT / value).resolve()}:
        ensure_smollm2()
    folder = resolve_dir()
    if folder is None and not standin_complete():
        from .paths import STANDIN_DIR

        print(
            f"building the synthetic stand-in checkpoint in {display_path(STANDIN_DIR)} "
            "(once, about 20 s and 2.1 GB; `make run` does this too) ...",
            file=sys.stderr,
        )
        build_standin(progress=True)
    return _inputs(folder, prompt())


def _inputs(folder, text: str) -> Inputs:
    ckpt = open_checkpoint(folder)
    tokens, pieces = tokenize_out_of_process(tokenizer_path(ckpt.source), text)
    return Inputs(ckpt, ckpt.params, text, tokens, pieces)


def real_model(text: str | None = None) -> Inputs:
    """SmolLM2-135M-Instruct (``data/smollm2/``, built once when missing), its weights read in float32, with ``text``
    (default :data:`~plumbing.smollm2.REAL_PROMPT`, "The capital of France is"): the notebooks' real-model cells.

    It is a real trained model with the Llama architecture, not Llama 3 (:mod:`plumbing.smollm2`). float32
    (:class:`~plumbing.checkpoint.CheckpointAs`) makes every printed digit the same on every CPU.

    Raises:
        Llama3Error: the download or the conversion fails (the message says what to do).
    """
    import torch

    from .smollm2 import REAL_PROMPT, ensure_smollm2

    found = _inputs(ensure_smollm2(), REAL_PROMPT if text is None else text)
    assert isinstance(found.checkpoint, Checkpoint)  # _inputs opens it with open_checkpoint
    return Inputs(found.checkpoint.to(torch.float32), found.params, found.prompt, found.tokens, found.pieces)
