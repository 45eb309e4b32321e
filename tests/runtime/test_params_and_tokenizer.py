"""params.json parsing and derived values; tokenizer.model validation."""

from __future__ import annotations

import base64
import hashlib
import math
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


@pytest.mark.parametrize(
    "change, message",
    [
        ({"dim": None}, "lacks the key"),
        ({"n_heads": 0}, "n_heads must be a positive integer"),
        ({"n_kv_heads": 5}, "not divisible by n_kv_heads"),
        ({"dim": 4100}, "not divisible by n_heads"),
        ({"dim": 4000}, "head_dim 125 must be even"),
        ({"norm_eps": -1}, "norm_eps must be a positive number"),
        ({"rope_theta": "big"}, "rope_theta must be a positive number"),
    ],
)
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


def test_models_are_metas_params_json():
    """plumbing.MODELS holds Meta's own params.json for each model (llama_models' sku_list, base and Instruct)."""
    from llama_models import sku_list

    arch = {m.descriptor(): m.arch_args for m in sku_list.all_registered_models()}
    for name, descriptor in {
        "Meta-Llama-3-8B": "Llama-3-8B",
        "Llama-3.1-8B": "Llama3.1-8B",
        "Llama-3.2-1B": "Llama3.2-1B",
        "Llama-3.2-3B": "Llama3.2-3B",
    }.items():
        for variant in (descriptor, f"{descriptor}-Instruct"):
            meta = {k: v for k, v in arch[variant].items() if k in ModelParams.__dataclass_fields__}
            assert ModelParams.from_dict(meta) == ModelParams.from_dict(plumbing.MODELS[name]), variant
            assert ModelParams.from_dict(meta).model_shape == name, variant


@pytest.mark.parametrize(
    "name, n_layers, factor, tied",
    [
        ("Meta-Llama-3-8B", None, None, False),
        ("Llama-3.1-8B", None, 8.0, False),
        ("Llama-3.2-1B", None, 32.0, True),
        ("Llama-3.2-1B", 2, 32.0, True),
        ("Llama-3.2-3B", 3, 32.0, True),
    ],
)
def test_rope_factor_and_tied_embeddings_follow_the_models_shape(name, n_layers, factor, tied):
    """A Meta folder has no factor in params.json: Llama 3.2 1B's and 3B's shapes get their config.json's 32, whatever
    n_layers; Llama 3.1 gets Meta's hard-coded 8; Llama 3 is not scaled."""
    p = ModelParams.from_dict(plumbing.standin_params(name, n_layers))
    assert p.tied_embeddings is tied and p.model_shape == name
    line = p.rope_scaling_line()
    if factor is None:
        assert not p.use_scaled_rope and line.startswith("RoPE scaling: none")
    else:
        assert p.rope_scaling["factor"] == factor and f"factor {factor:g}, from " in line
    other = ModelParams.from_dict({**plumbing.MODELS["Llama-3.2-1B"], "dim": 2048 + 64, "n_heads": 33, "n_kv_heads": 11})
    assert other.model_shape is None and other.rope_scaling["factor"] == 8.0  # an unknown shape: Meta's 8


def test_parameter_count_counts_a_tied_table_once():
    p1b = ModelParams.from_dict(plumbing.MODELS["Llama-3.2-1B"])
    assert p1b.parameter_count() == sum(math.prod(s) for n, s in p1b.expected_shapes().items() if n != "output.weight")
    hf = plumbing.params_from_hf_config(
        {
            "hidden_size": 2048,
            "num_hidden_layers": 16,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 128256,
            "intermediate_size": 8192,
            "tie_word_embeddings": False,
        }
    )
    assert not hf.tied_embeddings  # config.json's word wins over the shape
    assert hf.parameter_count() == p1b.parameter_count() + 128256 * 2048


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "Llama-2-7B", "--out", "x"], "No stand-in for 'Llama-2-7B'"),
        (["--model", "Llama-3.2-1B", "--out", "x", "--layers", "0"], "--layers must be a whole number from 1 to 16"),
        (["--model", "Llama-3.2-1B", "--out", "data/standin"], "--out must not be data/standin/"),
        (["--model", "Llama-3.2-1B"], "usage: build-standin --model"),
    ],
)
def test_build_standin_of_another_model_refuses_bad_arguments(args, message, capsys, tmp_path, monkeypatch):
    from plumbing.cli import main

    monkeypatch.chdir(plumbing.REPO_ROOT if "data/standin" in args else tmp_path)
    assert main(["build-standin", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert not (tmp_path / "x").exists()


def test_check_weights_refuses_arguments(capsys):
    """check-weights reads LLAMA3_DIR; an argument (say, a model name) is an error, not silently ignored."""
    from plumbing.cli import main

    assert main(["check-weights", "--model", "Llama-3.2-1B"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: check-weights takes no arguments") and "LLAMA3_DIR=" in err


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
