"""The tokenizer in a child process: the notebooks' token ids without the tokenizer's 50 MB in their kernels.

:func:`tokenize_out_of_process` sends the text to ``python -m plumbing tokenize`` (:func:`tokenize_command`), which
reads the ``tokenizer.model`` with :func:`plumbing.tokenizer.load_tokenizer` and encodes it with
:func:`plumbing.tokenizer.encode_prompt`.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

from .errors import Llama3Error
from .tokenizer import encode_prompt, load_tokenizer


def tokenize_out_of_process(path: Path, text: str) -> tuple[list[int], list[str]]:
    """Token ids of ``text`` (with the begin-of-text token, when the tokenizer has one) and each token's text,
    computed in a child process.

    Building the tokenizer costs about 50 MB of memory (128,000 ranks held both as a Python dict
    and in tiktoken's own tables); a child process keeps that out of the notebook kernel, which
    needs only the ids. Same result as :func:`encode_prompt` (checked by the tests).

    Raises:
        Llama3Error: the tokenizer file is unusable (the child's message is passed on).
    """
    import subprocess

    request = json.dumps({"path": str(Path(path).resolve()), "text": text.encode("utf-8", "surrogatepass").decode("latin-1")})
    out = subprocess.run(
        [sys.executable, "-m", "plumbing", "tokenize"],
        input=request,
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
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
