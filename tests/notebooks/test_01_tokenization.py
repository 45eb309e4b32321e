"""Notebook 01 (tokenization): its exported token ids against Meta's reference tokenizer; plumbing's tokenizer pieces.

Notebook runs. ``notebooks/01_tokenization.ipynb`` is executed on the stand-in (fixture ``run_notebook``,
one fresh kernel per prompt, about 5 s each) for the five prompts of ``NOTEBOOK_PROMPTS``: the default
prompt, the empty prompt, Chinese with emoji, code with digits and whitespace runs, and special-token
text followed by a 30,000-space run that Meta's ``encode`` cuts. Its export ``tokens`` (int64, [n]) must
equal ``references.meta_tokenizer().encode(prompt, bos=True, eos=False)`` (Meta's ``llama-models``).

Further prompts. Running the notebook for every prompt would take over a minute, so the eleven prompts
of ``PLUMBING_PROMPTS`` (more languages, contractions, digits, emoji sequences, whitespace, the Llama 3.1
and 3.2 special names, control characters, a lone surrogate, inputs above Meta's 25,000- and 400,000-character
limits) go through ``plumbing.encode_prompt``, the function the notebook's setup uses, that its section
6 calls for prompts that Meta's rule 3 cuts, and that its deep dive on rule 3 self-checks its own
``encode_with_cuts`` against; they are compared with Meta's tokenizer. The short ones
also go through a pure-Python copy of the notebook's algorithm (Meta's regex with the ``regex``
package, then tiktoken's whole-piece lookup and byte-pair merges), so what the notebook teaches is
checked on more than its own prompt.

Unit tests check plumbing's tokenizer pieces against Meta's: special-token names and ids (the
installed ``llama-models`` 0.3.0 carries the Llama 3.2 list: 12 named tokens, ``<|image|>`` at 128011;
Llama 3.1's list has 11, and 128011 is ``<|reserved_special_token_2|>`` there; Meta-Llama-3-8B's
April 2024 list, which ``plumbing.llama3_special_tokens()`` returns, has 10), the pattern and which of
its alternatives takes which whitespace, the length limits, the ranks, and the splitting of long runs.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import regex
import torch

import plumbing
import references

NOTEBOOK_PROMPTS = {
    "default": None,  # plumbing.DEFAULT_PROMPT: the 17 ids below
    "empty": "",  # just <|begin_of_text|>
    "chinese and emoji": "生命、宇宙以及任何事情的终极答案是什么？饕餮 🦙 👩‍👩‍👧 🇫🇷",  # partial UTF-8 tokens
    "code, digits, whitespace": "def f(x):\n\treturn x**2  # 3.14159265\n\n\n    \t  print(f(1234567))   \r\n\r\n",
    "special text and a long run": ("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>" + " " * 30_000 + "end"),
}

PLUMBING_PROMPTS = {
    "many scripts": "Привет, мир! Γειά σου Κόσμε! مرحبا بالعالم. こんにちは世界 안녕하세요 नमस्ते दुनिया",
    "words only the lookup finds": " Việt Nam, jeho dům, yapılmaktadır, nhiều người",
    "contractions and case": "I'M sure it's THEY'LL we'd You've, don't ain't O'Neil's 'tis",
    "digits": "3.14159265358979 + 1234567 = 1234570.14159265358979; 2024-04-18; 1,000,000; ١٢٣٤٥ ⅞ ²",
    "emoji sequences": "👍🏽 🏳️‍🌈 🇯🇵 ❤️ 🧑‍💻 ⌚🦙🦙🦙",
    "whitespace": "a  b   c\n\n\n   \t\t d" + " " * 30 + "end\r\n\r\n\u00a0\u2003nbsp\u3000x \n ",
    "llama 3.1 and 3.2 special names": "<|eom_id|><|python_tag|><|image|><|finetune_right_pad_id|><|reserved_special_token_250|>",
    "control characters": "\x00\x07\x1b[31mred\x1b[0m\u200b\ufeff tab\tend\x7f",
    "lone surrogate": "a \ud800 b",
    "runs over 25,000 characters": "a" * 30_000 + " b" + "\n" * 26_000 + "c",
    "over 400,000 characters": "Hello world. " * 32_000,
}

DEFAULT_IDS = [128000, 1820, 4320, 311, 279, 17139, 3488, 315, 2324, 11, 279, 15861, 11, 323, 4395, 374, 220]


def prompt_text(prompt: str | None) -> str:
    """The text a notebook run with ``prompt`` tokenizes (``None``: the default prompt)."""
    return plumbing.DEFAULT_PROMPT if prompt is None else prompt


@pytest.fixture(scope="module")
def meta():
    """Meta's reference ``Tokenizer`` (llama-models 0.3.0: Llama 3.2 special-token names)."""
    return references.meta_tokenizer()


@pytest.fixture(scope="module")
def enc():
    """plumbing's ``tiktoken.Encoding`` for the packaged ``tokenizer.model``."""
    return plumbing.load_tokenizer(plumbing.default_tokenizer_path())


def hand_encode(text: str, ranks: dict[bytes, int]) -> list[int]:
    """Token ids of ``text`` (no BOS) by the notebook's pure-Python algorithm.

    Meta's pattern with the ``regex`` package, then per piece tiktoken's whole-piece lookup and the
    byte-pair merge loop (lowest-rank adjacent pair first, leftmost on a tie). A lone surrogate has
    no UTF-8 encoding; like tiktoken's ``encode``, this helper first replaces it with U+FFFD.
    """
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")  # as tiktoken's encode does
    ids = []
    for piece in regex.findall(plumbing.PAT_STR, text):
        data = piece.encode("utf-8")
        if data in ranks:
            ids.append(ranks[data])
            continue
        parts = [bytes([b]) for b in data]
        while len(parts) > 1:
            candidates = [(ranks[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in ranks]
            if not candidates:
                break
            _, i = min(candidates)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids.extend(ranks[p] for p in parts)
    return ids


# --------------------------------------------------------------------------- the notebook's export


@pytest.mark.parametrize("name", list(NOTEBOOK_PROMPTS))
def test_notebook_tokens_equal_metas_tokenizer(name, run_notebook, meta):
    """The exported ``tokens`` (int64, [n]) equal Meta's ``encode(prompt, bos=True, eos=False)``."""
    prompt = NOTEBOOK_PROMPTS[name]
    exported = run_notebook("01", prompt=prompt)
    assert set(exported) == {"tokens"}
    tokens = exported["tokens"]
    assert tokens.dtype == torch.int64 and tokens.dim() == 1
    expected = meta.encode(prompt_text(prompt), bos=True, eos=False)
    assert tokens.tolist() == expected
    if prompt is None:
        assert expected == DEFAULT_IDS
    if prompt == "":
        assert expected == [128000]


# --------------------------------------------------------------------------- plumbing.encode_prompt on more prompts


@pytest.mark.parametrize("name", list(PLUMBING_PROMPTS))
def test_encode_prompt_equals_metas_tokenizer(name, enc, meta):
    """``plumbing.encode_prompt`` (what the notebook checks itself against) agrees with Meta's ``encode``."""
    text = PLUMBING_PROMPTS[name]
    assert plumbing.encode_prompt(enc, text) == meta.encode(text, bos=True, eos=False)
    assert plumbing.encode_prompt(enc, text, bos=False) == meta.encode(text, bos=False, eos=False)


@pytest.mark.parametrize("name", [n for n, t in PLUMBING_PROMPTS.items() if len(t) < 2_000] + ["default"])
def test_notebooks_pure_python_bpe_equals_metas_tokenizer(name, enc, meta):
    """The notebook's algorithm (regex pieces, whole-piece lookup, merges) gives Meta's ids."""
    text = plumbing.DEFAULT_PROMPT if name == "default" else PLUMBING_PROMPTS[name]
    assert hand_encode(text, enc._mergeable_ranks) == meta.encode(text, bos=False, eos=False)


def test_merges_without_the_whole_piece_lookup_differ(enc):
    """The notebook's "common mistake": " jeho" is one token (101503) that merges alone never build."""
    ranks = enc._mergeable_ranks
    assert hand_encode(" jeho", ranks) == [101503] == enc.encode(" jeho")
    parts = [bytes([b]) for b in b" jeho"]
    while True:
        candidates = [(ranks[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in ranks]
        if not candidates:
            break
        _, i = min(candidates)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    assert parts == [b" j", b"eh", b"o"]


# --------------------------------------------------------------------------- plumbing's tokenizer pieces


@pytest.mark.parametrize(
    "token_id, name",
    [
        (128000, "<|begin_of_text|>"),
        (128001, "<|end_of_text|>"),
        (128006, "<|start_header_id|>"),
        (128007, "<|end_header_id|>"),
        (128009, "<|eot_id|>"),
        (128255, "<|reserved_special_token_250|>"),
    ],
)
def test_special_token_names_and_ids(token_id, name, enc, meta):
    """Meta-Llama-3-8B's special tokens: plumbing's list, its Encoding, and Meta's ids where the names are shared."""
    names = plumbing.llama3_special_tokens()
    assert len(names) == 256 and len(set(names)) == 256
    assert names[token_id - 128000] == name
    assert enc.encode_single_token(name) == token_id
    assert enc.decode_single_token_bytes(token_id) == name.encode("ascii")
    if token_id != 128255:  # Llama 3.1 and 3.2 renumber the reserved tokens (see the tests below)
        assert meta.special_tokens[name] == token_id


#: Llama 3.1's named special tokens, ids 128000-128010 in order: ``models/llama3_1/api/tokenizer.py`` in Meta's
#: llama-models repository (July 2024). The reserved tokens follow, numbered from 2 (128011 is
#: <|reserved_special_token_2|>). Llama 3.2 (the installed llama-models) appends <|image|> at 128011.
LLAMA31_NAMED = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>",
    "<|step_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
]


def llama_models_file(*parts: str) -> str:
    """Text of a file of the installed ``llama_models`` package."""
    import llama_models

    return Path(llama_models.__file__).parent.joinpath(*parts).read_text(encoding="utf-8")


def test_installed_llama_models_carries_the_llama32_list(meta):
    """llama-models 0.3.0 names 12 special tokens, <|image|> (Llama 3.2 vision) at 128011: the Llama 3.2 list."""
    named = [
        n
        for n, i in sorted(meta.special_tokens.items(), key=lambda item: item[1])
        if not (n.startswith("<|reserved_special_token_") and i > 128003)
    ]
    assert len(named) == 12 and named == LLAMA31_NAMED + ["<|image|>"]
    assert meta.special_tokens["<|image|>"] == 128011
    assert meta.special_tokens["<|reserved_special_token_2|>"] == 128012
    # The package's own prompt-format notes: <|image|> belongs to Llama 3.2, not to Llama 3.1's token list.
    assert "<|image|>" in llama_models_file("llama3_2", "vision_prompt_format.md")
    notes_31 = llama_models_file("llama3_1", "prompt_format.md")
    assert "<|image|>" not in notes_31
    assert all(f"`{n}`" in notes_31 for n in ["<|finetune_right_pad_id|>", "<|eom_id|>", "<|python_tag|>"])


def test_llama31_list_has_11_named_tokens_and_128011_is_reserved():
    """Llama 3.1: 11 named tokens; 128011 is <|reserved_special_token_2|>, 3.0's <|reserved_special_token_k|> is 3.1's k-4."""
    names_31 = LLAMA31_NAMED + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(LLAMA31_NAMED))]
    names_30 = plumbing.llama3_special_tokens()
    assert len(LLAMA31_NAMED) == 11 and len(names_31) == 256 == len(set(names_31))
    assert names_31[128011 - 128000] == "<|reserved_special_token_2|>"
    for token_id in range(128011, 128256):
        k = int(names_30[token_id - 128000].removeprefix("<|reserved_special_token_").removesuffix("|>"))
        assert names_31[token_id - 128000] == f"<|reserved_special_token_{k - 4}|>"


@pytest.mark.parametrize(
    "token_id, name_32",
    [
        (128004, "<|finetune_right_pad_id|>"),
        (128005, "<|step_id|>"),
        (128008, "<|eom_id|>"),
        (128010, "<|python_tag|>"),
        (128011, "<|image|>"),
    ],
)
def test_llama32_names_differ_for_the_same_ids(token_id, name_32, meta):
    """llama-models' Tokenizer carries Llama 3.2 names; plumbing carries Meta-Llama-3-8B's for the same ids."""
    names_32 = {i: n for n, i in meta.special_tokens.items()}
    names_30 = plumbing.llama3_special_tokens()
    assert names_32[token_id] == name_32
    assert names_30[token_id - 128000].startswith("<|reserved_special_token_")
    assert names_30[token_id - 128000] != name_32


def test_reserved_tokens_are_renumbered_by_five_from_128012(meta):
    """From id 128012 on, 3.0's <|reserved_special_token_k|> is 3.2's <|reserved_special_token_{k-5}|>."""
    names_32 = {i: n for n, i in meta.special_tokens.items()}
    names_30 = plumbing.llama3_special_tokens()
    assert len(names_32) == 256 and min(names_32) == 128000 and max(names_32) == 128255
    for token_id in range(128012, 128256):
        k = int(names_30[token_id - 128000].removeprefix("<|reserved_special_token_").removesuffix("|>"))
        assert names_32[token_id] == f"<|reserved_special_token_{k - 5}|>"


# --------------------------------------------------------------------------- the pattern's alternatives

#: Meta's pattern, one alternative per entry (the notebook's section 3).
ALTERNATIVES = [
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"[^\r\n\p{L}\p{N}]?\p{L}+",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
]


def which_alternative(text: str) -> list[tuple[str, int]]:
    """(piece, 1-based number of the alternative of Meta's pattern that took it) for every piece."""
    numbered = regex.compile("|".join(f"({a})" for a in ALTERNATIVES))
    return [(m.group(), m.lastindex) for m in numbered.finditer(text)]


def test_alternatives_join_to_metas_pattern(meta):
    assert "|".join(ALTERNATIVES) == plumbing.PAT_STR == meta.pat_str


def test_trailing_space_is_taken_by_the_lookahead_alternative():
    """The prompt's trailing space: ``\\s+(?!\\S)`` (6); a space before a digit, as in "is 42": the last ``\\s+`` (7)."""
    assert which_alternative(plumbing.DEFAULT_PROMPT)[-1] == (" ", 6)
    assert which_alternative("everything is 42") == [("everything", 2), (" is", 2), (" ", 7), ("42", 3)]
    assert which_alternative("a  b") == [("a", 2), (" ", 6), (" b", 2)]  # all but the last space of a run


def test_p_n_is_any_number_character_not_only_digits():
    """``\\p{N}`` takes Unicode number characters that are not decimal digits (½, ², Ⅻ), but not 五, which Unicode counts as a letter."""
    for char in ["7", "\u0663", "½", "²", "Ⅻ"]:
        assert regex.fullmatch(r"\p{N}", char), char
    assert not regex.fullmatch(r"\p{N}", "五")
    assert which_alternative("½Ⅻ²") == [("½Ⅻ²", 3)]


def test_pattern_limits_and_ranks_are_metas(enc, meta):
    """PAT_STR, the two length limits and the 128,000 ranks are those of Meta's tokenizer module."""
    from llama_models.llama3 import tokenizer as meta_module

    assert plumbing.PAT_STR == meta.pat_str
    assert plumbing.TIKTOKEN_MAX_ENCODE_CHARS == meta_module.TIKTOKEN_MAX_ENCODE_CHARS == 400_000
    assert plumbing.MAX_NO_WHITESPACES_CHARS == meta_module.MAX_NO_WHITESPACES_CHARS == 25_000
    ranks = plumbing.read_bpe_ranks(plumbing.default_tokenizer_path())
    assert len(ranks) == 128_000 and ranks == meta.model._mergeable_ranks
    assert enc.n_vocab == meta.n_words == 128_256


def test_split_long_runs_equals_metas(meta):
    """plumbing's run splitter cuts exactly where Meta's ``_split_whitespaces_or_nonwhitespaces`` cuts."""
    rng = random.Random(20240418)
    for _ in range(300):
        text = "".join(rng.choice(" a\n\t好b") * rng.randint(1, 9) for _ in range(rng.randint(0, 12)))
        limit = rng.randint(1, 12)
        ours = list(plumbing.tokenizer.split_long_runs(text, limit))
        assert ours == list(meta._split_whitespaces_or_nonwhitespaces(text, limit)), (text, limit)
        assert "".join(ours) == text


def test_rule3_chunks_are_the_texts_metas_encode_hands_to_tiktoken(meta):
    """``plumbing.tokenizer.rule3_chunks`` (the notebook's guard for rule 3): Meta's 400,000-character windows, each
    cut by ``_split_whitespaces_or_nonwhitespaces``; one chunk for any text of at most 25,000 characters."""
    from llama_models.llama3 import tokenizer as meta_module

    def metas(text):
        step = meta_module.TIKTOKEN_MAX_ENCODE_CHARS
        return [
            chunk
            for i in range(0, len(text), step)
            for chunk in meta._split_whitespaces_or_nonwhitespaces(text[i : i + step], meta_module.MAX_NO_WHITESPACES_CHARS)
        ]

    for text in ["a b", " " * 25_000 + "x", "a" * 25_001, "a" * 30_000 + " b" + "\n" * 26_000 + "c", "Hello world. " * 32_000]:
        assert plumbing.tokenizer.rule3_chunks(text) == metas(text), len(text)
    assert plumbing.tokenizer.rule3_chunks("") == [""]
    assert len(plumbing.tokenizer.rule3_chunks("ab " * 8_333)) == 1


def test_reference_tokenizer_is_metas_for_llama3(meta):
    """Section 1's ``meta``: Meta's own ``Tokenizer`` for Llama 3's file, with its 256 special tokens."""
    ours = plumbing.tokenizer.reference_tokenizer(plumbing.default_tokenizer_path())
    assert ours is meta or type(ours) is type(meta)
    assert len(ours.special_tokens) == 256 and ours.n_words == 128_256 and ours.pat_str == plumbing.PAT_STR


def test_cuts_change_the_ids_of_long_runs(enc, meta):
    """Without Meta's cuts a 30,000-space run tokenizes differently: the notebook's last common mistake."""
    text = " " * 30_000 + "x"
    assert len(enc.encode_ordinary(text)) == 236
    assert plumbing.encode_prompt(enc, text, bos=False) == meta.encode(text, bos=False, eos=False)
    assert len(meta.encode(text, bos=False, eos=False)) == 237


def test_special_text_is_plain_text_but_raw_tiktoken_refuses_it(enc):
    """encode_prompt encodes "<|eot_id|>" typed in a prompt as plain text; tiktoken's default raises."""
    ids = plumbing.encode_prompt(enc, "hi <|eot_id|>")
    assert 128009 not in ids and ids[0] == 128000
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode("hi <|eot_id|>")


def test_encode_prompt_rejects_a_non_string(enc):
    with pytest.raises(plumbing.Llama3Error, match="must be a str"):
        plumbing.encode_prompt(enc, b"bytes are not a prompt")
