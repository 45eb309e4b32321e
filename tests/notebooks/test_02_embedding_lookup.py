"""Notebook 02 (embedding lookup): its export against the checkpoint's rows, for several prompts.

The notebook is run on the stand-in with ``LLAMA3_EXPORT_DIR`` set (fixture ``run_notebook``). Its
``token_embeddings_unnormalized`` must be, bit for bit, the rows of ``tok_embeddings.weight`` read
straight from the checkpoint at the ids that Meta's reference tokenizer (``llama-models``) gives
for the same prompt with ``bos=True, eos=False``.
"""

from __future__ import annotations

import pytest
import torch

import plumbing
import references

PROMPTS = {
    "default": None,  # plumbing.DEFAULT_PROMPT: 17 tokens, ' the' and ',' repeated
    "empty": "",  # just <|begin_of_text|>: one token
    "multilingual": (
        "Llama 3 reads many scripts: le modèle lit du français, 模型也能读中文, "
        "النموذج يقرأ العربية, модель читает по-русски, मॉडल हिंदी पढ़ता है, "
        "日本語も読みます, and emoji 🦙🚀🌍 split into bytes. "
    )
    * 6,  # several hundred tokens, some of them partial UTF-8 sequences
    "repeated words": "Buffalo buffalo Buffalo buffalo buffalo buffalo Buffalo buffalo, the the THE the.",
}


def prompt_text(prompt: str | None) -> str:
    """The text a notebook run with ``prompt`` tokenizes (``None``: the default prompt)."""
    return plumbing.DEFAULT_PROMPT if prompt is None else prompt


@pytest.fixture(scope="module")
def standin_checkpoint(standin_dir):
    """The stand-in checkpoint, which ``run_notebook`` uses (it clears every ``LLAMA3_*`` variable)."""
    return plumbing.open_checkpoint(standin_dir)


@pytest.fixture(scope="module")
def meta_tokenizer():
    """Meta's reference ``Tokenizer`` (llama-models)."""
    return references.meta_tokenizer()


@pytest.mark.parametrize("name", list(PROMPTS))
def test_export_is_the_checkpoint_rows_at_metas_ids(name, run_notebook, standin_checkpoint, meta_tokenizer):
    """The exported [n, dim] bf16 tensor equals ``tok_embeddings.weight[ids]`` bit for bit."""
    prompt = PROMPTS[name]
    ids = meta_tokenizer.encode(prompt_text(prompt), bos=True, eos=False)
    exported = run_notebook("02", prompt=prompt)
    assert set(exported) == {"token_embeddings_unnormalized"}
    x = exported["token_embeddings_unnormalized"]
    assert x.dtype == torch.bfloat16
    assert list(x.shape) == [len(ids), standin_checkpoint.params.dim]
    expected = standin_checkpoint.get("tok_embeddings.weight")[torch.tensor(ids)]
    # Compare the raw 16-bit patterns: stricter than torch.equal, which treats -0.0 and +0.0 as equal.
    assert torch.equal(x.view(torch.int16), expected.view(torch.int16))


def test_repeated_ids_have_identical_rows_and_different_ids_do_not(run_notebook, meta_tokenizer):
    """Context plays no part: equal ids give equal rows; 'the' and ' the' are different ids and rows."""
    prompt = PROMPTS["repeated words"]
    ids = meta_tokenizer.encode(prompt, bos=True, eos=False)
    x = run_notebook("02", prompt=prompt)["token_embeddings_unnormalized"]
    assert len(set(ids)) < len(ids)
    for i in range(len(ids)):
        for j in range(i + 1, len(ids)):
            assert torch.equal(x[i], x[j]) == (ids[i] == ids[j]), (i, j, ids[i], ids[j])


def test_default_prompt_the_tokens(meta_tokenizer):
    """The fact the notebook's errata rest on: position 1 is 'the' (1820), positions 4 and 10 are ' the' (279)."""
    ids = meta_tokenizer.encode(plumbing.DEFAULT_PROMPT, bos=True, eos=False)
    assert len(ids) == 17
    assert (ids[1], ids[4], ids[10]) == (1820, 279, 279)
    assert meta_tokenizer.decode([ids[1]]) == "the" and meta_tokenizer.decode([ids[4]]) == " the"


def test_the_sparse_check_holds_on_a_table_with_negative_zeros():
    """Section 3's check compares the sparse product with the lookup plus 0.0: a -0.0 in the table (possible in real
    weights) comes out +0.0 from the sum, so the plain lookup would stop the notebook; every other number keeps its bits."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "02_embedding_lookup.ipynb").read_text(encoding="utf-8"))
    cell = next("".join(c["source"]) for c in nb["cells"] if "sparse one-hot @ whole table vs indexing" in "".join(c["source"]))
    assert "embedded_by_matmul, token_embeddings_unnormalized + 0.0)" in cell
    table = torch.randn(50, 8).to(torch.bfloat16)
    table[7, 3], table[9, 0] = -0.0, 0.0
    tokens = torch.tensor([7, 9, 7, 1])
    one_hot = torch.sparse_coo_tensor(torch.stack([torch.arange(4), tokens]), torch.ones(4, dtype=torch.bfloat16), size=(4, 50))
    product = torch.sparse.mm(one_hot, table)
    assert plumbing.same_bits(product, table[tokens] + 0.0)
    assert not plumbing.same_bits(product, table[tokens])  # the -0.0 at [7, 3], twice
    assert torch.equal(product, table[tokens])
