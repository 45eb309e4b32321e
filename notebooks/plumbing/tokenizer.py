"""Llama 3's tokenizer: Meta's ``tokenizer.model`` read into ``tiktoken``, and Meta's ``encode`` rules.

Notebook 01 rebuilds all of this by hand; the other notebooks get their token ids from
:func:`tokenize_out_of_process`, which keeps the tokenizer's 50 MB out of their kernels.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import sys
import warnings
from pathlib import Path
from collections.abc import Iterator

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
    names = [
        "<|begin_of_text|>", "<|end_of_text|>",
        "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
        "<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
        "<|start_header_id|>", "<|end_header_id|>",
        "<|reserved_special_token_4|>", "<|eot_id|>",
    ]
    return names + [f"<|reserved_special_token_{i}|>" for i in range(5, 256 - 5)]


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


def read_bpe_ranks(path: str | os.PathLike) -> dict[bytes, int]:
    """Parse a tiktoken BPE file (one ``base64-token rank`` pair a line) into ``{bytes: rank}``.

    Checks the sha256 against :data:`TOKENIZER_SHA256` (a mismatch warns) and the format
    (a SentencePiece model or a corrupted file raises).

    Raises:
        Llama3Error: missing file, SentencePiece model, or lines that are not ``base64 rank``.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise Llama3Error(f"No tokenizer.model at {display_path(path)}.") from None
    if hashlib.sha256(data).hexdigest() != TOKENIZER_SHA256:
        bad_format = _bpe_format_problem(data)
        if bad_format:
            raise Llama3Error(f"{display_path(path)} is not Llama 3's tokenizer: {bad_format}")
        warnings.warn(
            f"{display_path(path)} is a tiktoken BPE file but not Meta's Llama 3 tokenizer.model "
            "(sha256 differs); token ids may not match Meta-Llama-3-8B.",
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
    if not ranks or sorted(ranks) != list(range(len(ranks))) or len(tokens) != len(ranks):
        return ("its ranks are not 0..n-1 with one token each (a repeated or missing line); "
                "the file is corrupted or truncated: download it again.")
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
    """A ``tiktoken.Encoding`` for Llama 3 with Meta-Llama-3-8B's special tokens.

    Args:
        path: a ``tokenizer.model``; default: :func:`tokenizer_path` of ``LLAMA3_DIR``.

    Raises:
        Llama3Error: see :func:`read_bpe_ranks`.
    """
    import tiktoken

    if path is None:
        path = tokenizer_path()
    ranks = read_bpe_ranks(path)
    specials = {name: len(ranks) + i for i, name in enumerate(llama3_special_tokens())}
    try:
        return tiktoken.Encoding(name=Path(path).name, pat_str=PAT_STR, mergeable_ranks=ranks, special_tokens=specials)
    except BaseException as e:  # tiktoken's Rust core reports bad tables as a panic (not an Exception)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise Llama3Error(f"{display_path(Path(path))} could not be loaded by tiktoken ({str(e).splitlines()[0][:120]}); "
                          "the file is corrupted: download it again.") from None


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


def encode_prompt(enc, text: str, bos: bool = True) -> list[int]:
    """Token ids of ``text`` as Meta's ``Tokenizer.encode(text, bos=True, eos=False)`` gives them.

    Special-token text inside ``text`` is encoded as plain text (``disallowed_special=()``);
    long inputs are cut as Meta cuts them before calling tiktoken. Taught in notebook 01.
    """
    if not isinstance(text, str):
        raise Llama3Error(f"The prompt must be a str, found {type(text).__name__}.")
    ids = [enc.encode_single_token("<|begin_of_text|>")] if bos else []
    for i in range(0, len(text), TIKTOKEN_MAX_ENCODE_CHARS):
        for piece in split_long_runs(text[i : i + TIKTOKEN_MAX_ENCODE_CHARS], MAX_NO_WHITESPACES_CHARS):
            ids.extend(enc.encode(piece, allowed_special=set(), disallowed_special=()))
    return ids



def tokenize_out_of_process(path: Path, text: str) -> tuple[list[int], list[str]]:
    """Token ids of ``text`` (with ``<|begin_of_text|>``) and each token's text, computed in a child process.

    Building the tokenizer costs about 50 MB of memory (128,000 ranks held both as a Python dict
    and in tiktoken's own tables); a child process keeps that out of the notebook kernel, which
    needs only the ids. Same result as :func:`encode_prompt` (checked by the tests).

    Raises:
        Llama3Error: the tokenizer file is unusable (the child's message is passed on).
    """
    import subprocess

    request = json.dumps({"path": str(path), "text": text.encode("utf-8", "surrogatepass").decode("latin-1")})
    out = subprocess.run([sys.executable, "-m", "plumbing", "tokenize"], input=request, cwd=Path(__file__).resolve().parent.parent,
                         capture_output=True, text=True, encoding="utf-8")
    if out.returncode != 0:
        message = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "the tokenizer process failed"
        raise Llama3Error(message.removeprefix("error: "))
    for line in out.stderr.splitlines():
        if line.startswith("warning: "):
            warnings.warn(line.removeprefix("warning: "), stacklevel=3)
    result = json.loads(out.stdout)
    return result["ids"], result["pieces"]


def tokenize_command() -> None:
    """The child side of :func:`tokenize_out_of_process`: JSON request on stdin, JSON answer on stdout."""
    request = json.loads(sys.stdin.read())
    text = request["text"].encode("latin-1").decode("utf-8", "surrogatepass")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc = load_tokenizer(request["path"])
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    ids = encode_prompt(enc, text)
    pieces = [enc.decode_single_token_bytes(t).decode("utf-8", "replace") for t in ids]
    print(json.dumps({"ids": ids, "pieces": pieces}))
