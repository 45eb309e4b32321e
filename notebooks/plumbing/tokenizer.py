"""The tokenizer: a ``tokenizer.model`` (tiktoken's BPE format) read into ``tiktoken``, with its rules.

Llama 3's file is Meta's, with Meta's pattern, 256 special tokens and ``encode`` rules. SmolLM2's
(``python -m plumbing build-smollm2``) is a byte-level BPE in the same format, beside a ``tokenizer_rules.json``
that gives its pattern, special tokens, begin-of-text token (none), stop tokens and chat format
(:class:`TokenizerRules`). Notebook 01 rebuilds all of this by hand; the other notebooks get their token ids
from :func:`plumbing.tokenizer_child.tokenize_out_of_process`, which keeps the tokenizer's 50 MB out of their kernels.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import Llama3Error
from .paths import display_path
from .weights import WeightsSource, find_weights, resolve_dir

#: sha256 of Meta's Llama 3 ``tokenizer.model`` (the one shipped in ``llama-models``).
TOKENIZER_SHA256 = "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"

#: Meta's pre-tokenizer regex for Llama 3 (``llama/tokenizer.py`` in meta-llama/llama3).
PAT_STR = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Meta's ``Tokenizer.stop_tokens`` in ``llama-models`` 0.3.0: ``<|end_of_text|>``, ``<|eom_id|>``, ``<|eot_id|>``.
LLAMA3_STOP_TOKENS = (128001, 128008, 128009)
#: The file beside a ``tokenizer.model`` that gives the rules of a tokenizer other than Llama 3's.
RULES_FILE = "tokenizer_rules.json"
#: Meta's limits on what one tiktoken call receives (``llama/tokenizer.py``).
TIKTOKEN_MAX_ENCODE_CHARS = 400_000
MAX_NO_WHITESPACES_CHARS = 25_000


def llama3_special_tokens() -> list[str]:
    """Meta-Llama-3-8B's 256 special tokens, ids 128000-128255 in order.

    From ``llama/tokenizer.py`` in meta-llama/llama3 (April 2024): 10 named tokens, the rest
    ``<|reserved_special_token_N|>``. Later releases keep the ids and rename some of them: the
    ``Tokenizer`` of ``llama-models`` 0.3.0 gives the Llama 3.2 list (12 named tokens, ``<|image|>`` at
    128011, ``<|finetune_right_pad_id|>`` at 128004), while Llama 3.1's list has 11 named tokens
    (128011 is ``<|reserved_special_token_2|>`` there). The BPE ranks and every id are the same.
    """
    # fmt: off
    names = [  # ids 128000 ... 128009, two per line
        "<|begin_of_text|>", "<|end_of_text|>",
        "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
        "<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
        "<|start_header_id|>", "<|end_header_id|>",
        "<|reserved_special_token_4|>", "<|eot_id|>",
    ]
    # fmt: on
    return names + [f"<|reserved_special_token_{i}|>" for i in range(5, 256 - 5)]


@dataclass(frozen=True)
class TokenizerRules:
    """What a tokenizer needs besides its BPE ranks.

    Attributes:
        model: whose tokenizer (``"Llama 3"``, ``"SmolLM2-135M-Instruct"``).
        pat_str: the pre-tokenizer's regular expression.
        special_tokens: name -> id (``None``: Llama 3's 256 names, numbered on from the BPE tokens).
        bos_token: the begin-of-text token put in front of a prompt, or ``None`` (SmolLM2 has none).
        stop_tokens: ids that end generation (Llama 3: 128001, 128008, 128009; SmolLM2: 2, 0).
        chat_format: ``"llama3"`` (header tokens) or ``"chatml"`` (``<|im_start|>role\\n ... <|im_end|>\\n``).
        sha256: the ``tokenizer.model`` these rules belong to.
        chat_template: the model's own Jinja2 chat template (SmolLM2's, from its GGUF), or ``None``.
    """

    model: str
    pat_str: str
    special_tokens: dict | None
    bos_token: str | None
    stop_tokens: tuple[int, ...]
    chat_format: str
    sha256: str
    chat_template: str | None = None


LLAMA3_RULES = TokenizerRules("Llama 3", PAT_STR, None, "<|begin_of_text|>", LLAMA3_STOP_TOKENS, "llama3", TOKENIZER_SHA256)


def tokenizer_rules(path: str | os.PathLike) -> TokenizerRules:
    """The rules of the tokenizer ``path``: from the ``tokenizer_rules.json`` beside it, else Llama 3's.

    Raises:
        Llama3Error: a rules file that is not valid JSON or lacks a key.
    """
    rules = Path(path).with_name(RULES_FILE)
    if not rules.is_file():
        return LLAMA3_RULES
    try:
        raw = json.loads(rules.read_text(encoding="utf-8"))
        special = {str(k): int(v) for k, v in raw["special_tokens"].items()}
        return TokenizerRules(
            str(raw["model"]),
            str(raw["pat_str"]),
            special,
            raw["bos_token"],
            tuple(special[name] for name in raw["stop_tokens"]),
            str(raw["chat_format"]),
            str(raw["tokenizer_model_sha256"]),
            raw.get("chat_template"),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise Llama3Error(
            f"{display_path(rules)} is not a tokenizer rules file ({type(e).__name__}: {e}); "
            "build the model's folder again (python -m plumbing build-smollm2)."
        ) from None


def default_tokenizer_path() -> Path:
    """``tokenizer.model`` shipped in the ``llama-models`` package (Meta's Llama 3 file)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("llama_models")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise Llama3Error("Package llama-models is not installed; run `make run` (or pip install -r requirements.txt).")
    return Path(list(spec.submodule_search_locations)[0]) / "llama3" / "tokenizer.model"


def read_bpe_ranks(path: str | os.PathLike, sha256: str = TOKENIZER_SHA256) -> dict[bytes, int]:
    """Parse a tiktoken BPE file (one ``base64-token rank`` pair a line) into ``{bytes: rank}``.

    Checks the sha256 against ``sha256`` (Meta's Llama 3 file by default; a mismatch warns) and the format
    (a SentencePiece model or a corrupted file raises).

    Raises:
        Llama3Error: missing file, SentencePiece model, or lines that are not ``base64 rank``.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise Llama3Error(f"No tokenizer.model at {display_path(path)}.") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        bad_format = _bpe_format_problem(data)
        if bad_format:
            raise Llama3Error(f"{display_path(path)} is not a usable tokenizer: {bad_format}")
        expected = "Meta's Llama 3 tokenizer.model" if sha256 == TOKENIZER_SHA256 else f"the file its {RULES_FILE} describes"
        warnings.warn(
            f"{display_path(path)} is a tiktoken BPE file but not {expected} (sha256 differs); token ids may not match the model's.",
            stacklevel=2,
        )
    ranks = {}
    for line in data.decode("ascii").splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _bpe_format_problem(data: bytes) -> str | None:
    """Why ``data`` is not a tiktoken BPE file, or ``None`` if it is one."""
    if data[:1] == b"\x0a" and b"\x00" in data[:4096] or b"\xe2\x96\x81" in data[:65536]:
        return (
            "it is a SentencePiece model (the Llama 1/2 tokenizer format, binary protobuf), not a tiktoken "
            "BPE file. Use the tokenizer.model from Meta's Llama 3 download or from the llama-models package."
        )
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return "it is a binary file, not a tiktoken BPE file (lines of 'base64-token rank'); download it again."
    ranks, tokens = [], set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            tokens.add(base64.b64decode(parts[0], validate=True))
            ranks.append(int(parts[1]))
        except (ValueError, binascii.Error):
            return f"line {n} is not 'base64-token rank' ({line[:40]!r}); the file is corrupted: download it again."
    if not ranks or len(set(ranks)) != len(ranks) or len(tokens) != len(ranks) or min(ranks) < 0:
        return (
            "its ranks are not distinct with one token each (a repeated or missing line); "
            "the file is corrupted or truncated: download it again."
        )
    return None


def tokenizer_path(source: WeightsSource | None = None) -> Path:
    """The weights folder's ``tokenizer.model`` when it has one, else the one from ``llama-models``.

    ``source=None`` looks at ``LLAMA3_DIR`` (unset: the stand-in, whose ``tokenizer.model`` is a copy of
    the one in ``llama-models``). Builds nothing.
    """
    if source is None and resolve_dir() is not None:
        source = find_weights()
    if source is not None and source.tokenizer_path is not None:
        return source.tokenizer_path
    return default_tokenizer_path()


def load_tokenizer(path: str | os.PathLike | None = None):
    """A ``tiktoken.Encoding`` of ``path`` with its rules (:func:`tokenizer_rules`): Llama 3's pattern and
    Meta-Llama-3-8B's special tokens, or those of its ``tokenizer_rules.json`` (SmolLM2's).

    Args:
        path: a ``tokenizer.model``; default: :func:`tokenizer_path` of ``LLAMA3_DIR``.

    Raises:
        Llama3Error: see :func:`read_bpe_ranks` and :func:`tokenizer_rules`.
    """
    import tiktoken

    if path is None:
        path = tokenizer_path()
    rules = tokenizer_rules(path)
    ranks = read_bpe_ranks(path, rules.sha256)
    specials = rules.special_tokens or {name: len(ranks) + i for i, name in enumerate(llama3_special_tokens())}
    try:
        return tiktoken.Encoding(name=Path(path).name, pat_str=rules.pat_str, mergeable_ranks=ranks, special_tokens=specials)
    except BaseException as e:  # tiktoken's Rust core reports bad tables as a panic (not an Exception)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise Llama3Error(
            f"{display_path(Path(path))} could not be loaded by tiktoken ({str(e).splitlines()[0][:120]}); "
            "the file is corrupted: download it again."
        ) from None


def split_long_runs(s: str, limit: int) -> Iterator[str]:
    """Meta's ``_split_whitespaces_or_nonwhitespaces``: no piece has more than ``limit`` same-kind characters in a row."""
    run, is_space, start = 0, s[:1].isspace(), 0
    for i, ch in enumerate(s):
        if ch.isspace() != is_space:
            run, is_space = 1, ch.isspace()
        else:
            run += 1
            if run > limit:
                yield s[start:i]
                start, run = i, 1
    yield s[start:]


def rule3_chunks(text: str) -> list[str]:
    """The texts Meta's ``Tokenizer.encode`` hands to tiktoken one by one (its "rule 3", taught in notebook 01):
    windows of at most ``TIKTOKEN_MAX_ENCODE_CHARS`` (400,000) characters, each cut by :func:`split_long_runs` so
    that no chunk holds a run of more than ``MAX_NO_WHITESPACES_CHARS`` (25,000) whitespace or non-whitespace
    characters. One chunk, ``[text]``, for any text of at most 25,000 characters."""
    return [
        chunk
        for i in range(0, max(len(text), 1), TIKTOKEN_MAX_ENCODE_CHARS)
        for chunk in split_long_runs(text[i : i + TIKTOKEN_MAX_ENCODE_CHARS], MAX_NO_WHITESPACES_CHARS)
    ]


@dataclass(frozen=True)
class RulesTokenizer:
    """Another model's tokenizer (SmolLM2's), with the attributes of Meta's ``Tokenizer`` that notebook 01 checks
    against: ``special_tokens`` (name -> id), ``pat_str``, ``n_words`` and ``encode(s, *, bos, eos)``, from its
    ``tokenizer_rules.json`` and :func:`encode_prompt` (tested against Hugging Face's ``tokenizers``)."""

    path: Path
    rules: TokenizerRules

    @property
    def special_tokens(self) -> dict:
        assert self.rules.special_tokens is not None  # reference_tokenizer builds one only when the rules name their special tokens
        return dict(self.rules.special_tokens)

    @property
    def pat_str(self) -> str:
        return self.rules.pat_str

    @property
    def n_words(self) -> int:
        return _load_cached(self.path).n_vocab

    def encode(self, s: str, *, bos: bool, eos: bool) -> list[int]:
        if eos:
            raise Llama3Error(f"{self.rules.model}'s tokenizer has no end-of-text token to append (eos=False).")
        return encode_prompt(_load_cached(self.path), s, bos=bos)


@lru_cache(maxsize=2)
def _load_cached(path: Path):
    return load_tokenizer(path)


def reference_tokenizer(path: str | os.PathLike):
    """The model's own tokenizer, for notebook 01's checks: Meta's ``Tokenizer`` (``llama_models/llama3/tokenizer.py``,
    :func:`plumbing.reference.tokenizer`) for Llama 3's ``tokenizer.model``; for a file with a ``tokenizer_rules.json``
    beside it (SmolLM2's), a :class:`RulesTokenizer` with the same attributes.

    Raises:
        Llama3Error: see :func:`tokenizer_rules`.
    """
    rules = tokenizer_rules(path)
    if rules.special_tokens is None:
        from .reference_generate import tokenizer

        return tokenizer()
    return RulesTokenizer(Path(path), rules)


def bytes_without_token(enc, text: str) -> set[int]:
    """The bytes of ``text``'s UTF-8 that are no token of ``enc`` (always none for Llama 3; SmolLM2 drops them)."""
    return set(text.encode("utf-8", "surrogatepass")) & absent_bytes(enc)


@lru_cache(maxsize=8)
def absent_bytes(enc) -> frozenset[int]:
    """The byte values that are no token of ``enc`` (none in Llama 3's; 21 in SmolLM2's, such as 0x04)."""
    absent = set()
    for b in range(256):
        try:
            enc.encode_single_token(bytes([b]))
        except KeyError:
            absent.add(b)
    return frozenset(absent)


def encode_prompt(enc, text: str, bos: bool = True) -> list[int]:
    """Token ids of ``text``: Meta's ``Tokenizer.encode(text, bos=bos, eos=False)`` for Llama 3's tokenizer, and
    for another (SmolLM2's) what Hugging Face's ``tokenizers`` give for its ``tokenizer.json``.

    Special-token text inside ``text`` is encoded as plain text (``disallowed_special=()``), as Meta's rule is.
    Llama 3 (a tokenizer with ``<|begin_of_text|>``): that token first when ``bos``, and long inputs cut as Meta
    cuts them before calling tiktoken (taught in notebook 01). Another tokenizer: no begin-of-text token (SmolLM2
    has none), the text whole, and bytes that are no token of the vocabulary dropped, as Hugging Face's BPE
    drops characters it has no token for.

    Raises:
        Llama3Error: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise Llama3Error(f"The prompt must be a str, found {type(text).__name__}.")
    if "<|begin_of_text|>" not in enc.special_tokens_set:
        return _encode_dropping_absent_bytes(enc, text)
    ids = [enc.encode_single_token("<|begin_of_text|>")] if bos else []
    for i in range(0, len(text), TIKTOKEN_MAX_ENCODE_CHARS):
        for piece in split_long_runs(text[i : i + TIKTOKEN_MAX_ENCODE_CHARS], MAX_NO_WHITESPACES_CHARS):
            ids.extend(enc.encode(piece, allowed_special=set(), disallowed_special=()))
    return ids


def _encode_dropping_absent_bytes(enc, text: str) -> list[int]:
    """``enc``'s ids of ``text`` as plain text, bytes that are no token dropped from each piece before merging."""
    absent = absent_bytes(enc)
    data = text.encode("utf-8", "surrogatepass")
    if not absent or not absent.intersection(data):
        return enc.encode(text, allowed_special=set(), disallowed_special=())
    import regex

    ids = []
    for piece in regex.findall(enc._pat_str, text):
        kept = bytes(b for b in piece.encode("utf-8", "surrogatepass") if b not in absent)
        if kept:
            ids.extend(enc._encode_single_piece(kept))
    return ids


def chat_template_tokens(path: str | os.PathLike, messages) -> list[int]:
    """Token ids of ``messages`` (``[{"role": ..., "content": ...}]``) through the model's own chat template, as
    Hugging Face's ``apply_chat_template(..., add_generation_prompt=True)`` renders it (Jinja2) and tokenizes it:
    special-token text in the template becomes the special token. For SmolLM2's ChatML; Llama 3's format is Meta's
    ``ChatFormat`` (:func:`plumbing.reference.encode_dialog_prompt`).

    Raises:
        Llama3Error: the tokenizer at ``path`` has no chat template.
    """
    import jinja2

    rules = tokenizer_rules(path)
    if not rules.chat_template:
        raise Llama3Error(f"{display_path(Path(path))} has no chat template of its own (Llama 3's format is Meta's ChatFormat).")
    text = jinja2.Environment().from_string(rules.chat_template).render(messages=list(messages), add_generation_prompt=True)
    enc = load_tokenizer(path)
    assert rules.special_tokens is not None  # a rules file's (Llama 3's rules have no chat template)
    ids: list[int] = []
    for piece in regex_split_special(text, rules.special_tokens):
        ids += [rules.special_tokens[piece]] if piece in rules.special_tokens else encode_prompt(enc, piece, bos=False)
    return ids


def regex_split_special(text: str, special: dict) -> list[str]:
    """``text`` cut into special-token texts and the plain text between them (Hugging Face's added-token split)."""
    import regex

    pattern = "(" + "|".join(regex.escape(name) for name in sorted(special, key=len, reverse=True)) + ")"
    return [piece for piece in regex.split(pattern, text) if piece]
