"""Meta's generation and chat format on a checkpoint: ``Llama3.generate``, its ``Tokenizer``, ``ChatFormat``.

Meta's ``llama_models/llama3/generation.py`` (``Llama3.generate``, ``sample_top_p``) and ``chat_format.py``
(``ChatFormat``) run unmodified (imported by ``reference_code.meta_generation_code``). :func:`generate` runs
``Llama3.generate`` around ``reference_run.transformer``, as ``Llama3.build`` would without its process group and
default-device changes. Part of :mod:`plumbing.reference`, which re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .errors import Llama3Error
from .reference_code import meta_generation_code
from .reference_run import transformer

__all__ = ["generate", "tokenizer", "encode_dialog_prompt"]


def generate(
    checkpoint,
    tokens,
    *,
    temperature: float,
    top_p: float = 0.9,
    max_gen_len: int,
    seed: int | None = None,
    model=None,
    logits: list | None = None,
) -> list[int]:
    """The token ids Meta's ``Llama3.generate`` yields after the prompt ``tokens`` (``llama3/generation.py``).

    ``Llama3`` is constructed around :func:`transformer` (plain layers, the checkpoint's tensors) and Meta's own
    ``Tokenizer`` (its ``stop_tokens``: ``<|end_of_text|>``, ``<|eom_id|>``, ``<|eot_id|>``), not through
    ``Llama3.build``. Generation stops after a stop token (which is included) or after ``max_gen_len`` ids. For a
    checkpoint whose tokenizer is not Llama 3's (SmolLM2's, :func:`plumbing.tokenizer.tokenizer_rules`), ``Llama3``
    gets what ``generate`` reads of a tokenizer from that model's own: its stop tokens, decoding, and a pad id that
    no token has.

    Args:
        checkpoint: an opened :class:`~plumbing.checkpoint.Checkpoint` (or a mapping of Meta's names with ``params``).
        tokens: the prompt's token ids (a list of int), ``<|begin_of_text|>`` first as Meta encodes it.
        temperature: 0 for greedy decoding (argmax); otherwise the logits are divided by it before the softmax and
            ``sample_top_p`` draws the token.
        top_p: the nucleus of ``sample_top_p`` (used when ``temperature > 0``).
        max_gen_len: at most this many new ids.
        seed: when given, ``torch.manual_seed(seed)`` is called first (Meta's ``build`` calls it with 1).
        model: a model from :func:`transformer` to reuse, whose ``max_seq_len`` holds the prompt and the new ids.
        logits: a list to which each step's last-position logits ([vocab_size] float32, what the step chose from)
            are appended, as ``Transformer.forward`` returns them.

    Returns:
        The new ids, in order (int).

    Raises:
        Llama3Error: the prompt and ``max_gen_len`` do not fit in ``model``'s ``max_seq_len``.
    """
    import torch

    G = meta_generation_code()
    from llama_models.llama3.chat_format import LLMInput

    tokens = [int(t) for t in tokens]
    if model is None:
        model = transformer(checkpoint, max_seq_len=len(tokens) + max_gen_len)
    if len(tokens) + max_gen_len > model.params.max_seq_len:
        raise Llama3Error(
            f"{len(tokens)} prompt tokens and max_gen_len {max_gen_len} do not fit in "
            f"max_seq_len {model.params.max_seq_len}: build the model with a larger max_seq_len"
        )
    llama3 = G.Llama3(model, generation_tokenizer(checkpoint), model.params)
    if seed is not None:
        torch.manual_seed(seed)
    out = []
    hook = None
    if logits is not None:  # Transformer.forward ends with `self.output(h).float()`: record that, per step
        hook = model.output.register_forward_hook(lambda _module, _inputs, output: logits.append(output[0, -1].float()))
    try:
        for results in llama3.generate([LLMInput(tokens=tokens)], temperature=temperature, top_p=top_p, max_gen_len=max_gen_len):
            out.append(results[0].token)
    finally:
        if hook is not None:
            hook.remove()
    return out


class _ModelTokenizer:
    """What ``Llama3`` reads of its tokenizer (``stop_tokens``, ``pad_id``, ``decode``; ``ChatFormat``'s constructor
    reads ``special_tokens["<|image|>"]``), for a model whose tokenizer is not Llama 3's."""

    def __init__(self, encoding, rules):
        self.encoding, self.stop_tokens, self.pad_id = encoding, list(rules.stop_tokens), -1  # -1: no token's id
        self.special_tokens = {**rules.special_tokens, "<|image|>": -1}

    def decode(self, ids):
        return self.encoding.decode([i for i in ids if i >= 0])


def generation_tokenizer(checkpoint):
    """The tokenizer Meta's ``Llama3.generate`` is built with for ``checkpoint`` (its ``stop_tokens``): Meta's ``Tokenizer``
    for Llama 3's vocabulary; for a checkpoint with another tokenizer, :class:`_ModelTokenizer`."""
    from .tokenizer import load_tokenizer, tokenizer_path, tokenizer_rules

    source = getattr(checkpoint, "source", None)
    if source is not None and source.tokenizer_path is not None:
        rules = tokenizer_rules(source.tokenizer_path)
        if rules.special_tokens is not None:  # not Llama 3's 256 special tokens
            return _ModelTokenizer(load_tokenizer(tokenizer_path(source)), rules)
    return tokenizer()


def tokenizer():
    """Meta's ``Tokenizer`` of ``llama_models/llama3/tokenizer.py`` (the one ``Llama3.generate`` uses: ``stop_tokens``)."""
    meta_generation_code()
    from llama_models.llama3.tokenizer import Tokenizer

    return Tokenizer.get_instance()


def encode_dialog_prompt(messages: Iterable[Mapping]) -> list[int]:
    """Meta's ``ChatFormat.encode_dialog_prompt`` (``llama3/chat_format.py``) of ``[{"role": ..., "content": ...}]``.

    Returns the token ids: ``<|begin_of_text|>``, each message with its header and ``<|eot_id|>``, then the
    assistant's open header, which the model continues.

    Raises:
        Llama3Error: a message without a ``role`` of system, user, assistant or tool, or without ``content``.
    """
    meta_generation_code()
    from llama_models.datatypes import RawMessage
    from llama_models.llama3.chat_format import ChatFormat

    try:
        raw = [RawMessage(role=m["role"], content=m["content"]) for m in messages]
    except (KeyError, TypeError, ValueError) as e:
        raise Llama3Error(
            f"a message must be {{'role': 'system' | 'user' | 'assistant' | 'tool', 'content': str}} ({str(e).splitlines()[0]})"
        ) from None
    return list(ChatFormat(tokenizer()).encode_dialog_prompt(raw).tokens)
