"""params.json parsing and derived values; tokenizer.model validation."""

from __future__ import annotations

import base64
import hashlib
import struct
import warnings

import pytest

import plumbing
from plumbing import Llama3Error, ModelParams
from references import meta_llama3_model, meta_tokenizer


def test_llama3_8b_derived_values_follow_metas_formulas():
    p = ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS)
    assert (p.head_dim, p.n_rep, p.ffn_hidden_dim) == (128, 4, 14336)
    assert p.parameter_count() == 8_030_261_248
    assert p.context_length == 8192 and not p.use_scaled_rope


def test_ffn_hidden_dim_equals_metas_feedforward():
    """Meta's FeedForward.__init__ computes the hidden size; ours must agree for several configs."""
    import inspect

    src = inspect.getsource(meta_llama3_model().FeedForward.__init__)
    assert "ffn_dim_multiplier" in src and "multiple_of" in src

    def meta_hidden(dim, multiple_of, mult):  # the lines of Meta's FeedForward.__init__
        hidden_dim = int(2 * (4 * dim) / 3)
        if mult is not None:
            hidden_dim = int(mult * hidden_dim)
        return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)

    for dim, multiple_of, mult in [(4096, 1024, 1.3), (8192, 4096, 1.3), (2048, 256, 1.5), (3072, 256, 1.0), (4096, 256, None)]:
        raw = {**plumbing.LLAMA3_8B_PARAMS, "dim": dim, "multiple_of": multiple_of, "ffn_dim_multiplier": mult}
        assert ModelParams.from_dict(raw).ffn_hidden_dim == meta_hidden(dim, multiple_of, mult)


def test_unknown_keys_are_tolerated_and_use_scaled_rope_accepted():
    raw = {**plumbing.LLAMA3_8B_PARAMS, "use_scaled_rope": True, "some_future_key": [1, 2]}
    p = ModelParams.from_dict(raw)
    assert p.use_scaled_rope and p.context_length == 131072
    assert p.extra == {"some_future_key": [1, 2]}


def test_n_kv_heads_defaults_to_n_heads():
    raw = {k: v for k, v in plumbing.LLAMA3_8B_PARAMS.items() if k != "n_kv_heads"}
    params = ModelParams.from_dict(raw)
    assert params.n_kv_heads == params.n_heads == 32 and params.n_rep == 1  # resolved once, when params are read


@pytest.mark.parametrize("change, message", [
    ({"dim": None}, "lacks the key"),
    ({"n_heads": 0}, "n_heads must be a positive integer"),
    ({"n_kv_heads": 5}, "not divisible by n_kv_heads"),
    ({"dim": 4100}, "not divisible by n_heads"),
    ({"dim": 4000}, "head_dim 125 must be even"),
    ({"norm_eps": -1}, "norm_eps must be a positive number"),
    ({"rope_theta": "big"}, "rope_theta must be a positive number"),
])
def test_bad_params_get_clear_errors(change, message):
    raw = dict(plumbing.LLAMA3_8B_PARAMS)
    for k, v in change.items():
        if v is None:
            raw.pop(k)
        else:
            raw[k] = v
    with pytest.raises(Llama3Error, match=message):
        ModelParams.from_dict(raw)


# --------------------------------------------------------------------------- tokenizer.model


def test_packaged_tokenizer_is_metas_file():
    data = plumbing.default_tokenizer_path().read_bytes()
    assert hashlib.sha256(data).hexdigest() == plumbing.TOKENIZER_SHA256


def test_special_tokens_are_llama3_8b_names():
    names = plumbing.llama3_special_tokens()
    assert len(names) == 256 and len(set(names)) == 256
    enc = plumbing.load_tokenizer(plumbing.default_tokenizer_path())
    ids = {n: enc.encode_single_token(n) for n in names}
    assert ids["<|begin_of_text|>"] == 128000 and ids["<|end_of_text|>"] == 128001
    assert ids["<|start_header_id|>"] == 128006 and ids["<|end_header_id|>"] == 128007
    assert ids["<|eot_id|>"] == 128009 and ids["<|reserved_special_token_250|>"] == 128255
    assert enc.n_vocab == 128256
    # Meta's llama-models tokenizer (0.3.0: the Llama 3.2 names) agrees on the shared names' ids.
    ref = meta_tokenizer().special_tokens
    for n in ("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"):
        assert ref[n] == ids[n]


def test_encode_prompt_matches_meta_including_long_runs():
    enc = plumbing.load_tokenizer(plumbing.default_tokenizer_path())
    ref = meta_tokenizer()
    for text in [plumbing.DEFAULT_PROMPT, "", "a" * 30_000 + " b", " " * 26_000 + "x", "<|eot_id|> hi"]:
        assert plumbing.encode_prompt(enc, text) == ref.encode(text, bos=True, eos=False)


def sentencepiece_bytes() -> bytes:
    """A minimal SentencePiece ModelProto (protobuf): pieces '<unk>', '▁the' with scores (Llama 2's format)."""
    def piece(text: str, score: float) -> bytes:
        t = text.encode()
        body = b"\x0a" + bytes([len(t)]) + t + b"\x15" + struct.pack("<f", score)
        return b"\x0a" + bytes([len(body)]) + body

    return piece("<unk>", 0.0) + piece("\u2581the", -1.0) + b"\x12\x04\x08\x01\x10\x00" + b"\x00" * 8


def test_sentencepiece_model_is_rejected(tmp_path):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(sentencepiece_bytes())
    with pytest.raises(Llama3Error, match="SentencePiece model.*not a tiktoken"):
        plumbing.load_tokenizer(path)


def test_corrupted_tokenizer_is_rejected(tmp_path):
    lines = plumbing.default_tokenizer_path().read_text().splitlines()
    lines[500] = "!!not-base64!! 500"
    path = tmp_path / "tokenizer.model"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(Llama3Error, match="line 501 is not 'base64-token rank'"):
        plumbing.load_tokenizer(path)


def test_truncated_tokenizer_is_rejected(tmp_path):
    data = plumbing.default_tokenizer_path().read_bytes()
    path = tmp_path / "tokenizer.model"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(Llama3Error, match="tokenizer"):
        plumbing.load_tokenizer(path)


def test_other_valid_bpe_file_warns(tmp_path):
    ranks = [bytes([i]) for i in range(256)] + [b"th", b"the"]
    path = tmp_path / "tokenizer.model"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(ranks)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc = plumbing.load_tokenizer(path)
    assert any("sha256 differs" in str(w.message) for w in caught)
    assert enc.encode("the") == [257]


def test_missing_tokenizer(tmp_path):
    with pytest.raises(Llama3Error, match="No tokenizer.model"):
        plumbing.load_tokenizer(tmp_path / "tokenizer.model")


def test_tokenizer_cut_mid_file_is_rejected_not_a_panic(tmp_path):
    """A download cut at 1 MB ends in a partial line that repeats an earlier rank: a clear error, not tiktoken's panic."""
    data = plumbing.default_tokenizer_path().read_bytes()[:1_000_000]
    path = tmp_path / "tokenizer.model"
    path.write_bytes(data)
    with pytest.raises(Llama3Error, match="corrupted or truncated"):
        plumbing.load_tokenizer(path)


def test_tokenize_out_of_process_matches_encode_prompt():
    enc = plumbing.load_tokenizer(plumbing.default_tokenizer_path())
    for text in [plumbing.DEFAULT_PROMPT, "", "饕餮🦙 <|eot_id|>", "bad \udcff surrogate"]:
        ids, pieces = plumbing.tokenize_out_of_process(plumbing.default_tokenizer_path(), text)
        assert ids == plumbing.encode_prompt(enc, text)
        assert pieces == [enc.decode([t]) for t in ids]


def test_tokenize_out_of_process_passes_errors_on(tmp_path):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(sentencepiece_bytes())
    with pytest.raises(Llama3Error, match="SentencePiece"):
        plumbing.tokenize_out_of_process(path, "hello")


def test_check_compares_bits_not_values(capsys):
    """``check`` says "bitwise equal" only for equal bits: -0.0 against +0.0 has equal values but other bits."""
    import torch

    zeros = torch.zeros(3, dtype=torch.bfloat16)
    plumbing.check("zeros", zeros, zeros.clone())
    assert capsys.readouterr().out.strip() == "zeros: bitwise equal"
    assert torch.equal(-zeros, zeros)  # the value comparison that check no longer relies on
    with pytest.raises(AssertionError, match="equal values but not bitwise equal"):
        plumbing.check("signed zeros", -zeros, zeros)
    assert plumbing.same_bits(torch.tensor([float("nan")]), torch.tensor([float("nan")]))  # same NaN bits
    with pytest.raises(AssertionError, match="dtypes differ"):
        plumbing.check("dtypes", zeros, zeros.float())
