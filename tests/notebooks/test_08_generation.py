"""Notebook 08 (generation): its ids against Meta's ``Llama3.generate`` and Hugging Face's ``generate``.

The notebook writes the prefill, the cached decode, greedy choice, temperature and top-p sampling and the stop rule
by hand, and exports ``08_generation.safetensors``: ``greedy`` (temperature 0) and ``sampled`` (temperature 0.6,
top-p 0.9, ``torch.manual_seed(1)`` before the prefill), int64 [at most 4], the stop token included when reached.

* Meta: ``plumbing.reference.generate`` runs Meta's ``Llama3.generate`` (``llama_models/llama3/generation.py``,
  constructed around the reference ``Transformer`` with plain layers, not through ``Llama3.build``) after the same
  ``torch.manual_seed(1)``. The notebook does Meta's operations in Meta's order, so the ids are the same, token for
  token, for greedy and for sampled generation. On the stand-in (Meta-Llama-3-8B's shapes) the notebook's own
  visible check compares every step's logits, which decide the ids; here the ids are compared on small random
  checkpoints of other shapes: grouped-query attention with ``n_rep`` 4, ``n_rep`` 1 with Llama 3.1's scaled RoPE
  (factor 8, Meta's ``apply_scaling``), and a Hugging Face folder with tied embeddings and Llama 3.2's factor 32
  in ``config.json``.
* Hugging Face: ``LlamaForCausalLM.generate`` (greedy, bf16, eager attention) on a Hugging Face copy of a small
  model. Its order of operations differs (tests/notebooks/test_07_next_token.py: logits within 8 bf16 units of the largest
  |logit|), so the rule is: with ``d`` the largest difference of the two models' logits at a step, the ids must agree
  wherever Meta's top two logits are more than ``2 d`` apart (no rounding can swap them); elsewhere Hugging Face may
  choose any token within ``2 d`` of the top, and once the two choose differently their continuations part.
* The chat format: the notebook's own ``dialog_tokens`` cell, run on more dialogues, against Meta's
  ``ChatFormat.encode_dialog_prompt``; the notebook's ``stop_tokens`` against Meta's ``Tokenizer.stop_tokens``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch

import plumbing
import references
from conftest import NOTEBOOKS
from references import meta_state, prompt_tokens
from test_07_next_token import hf_state, hf_tolerance

MAX_GEN_LEN = 4
STOP_TOKENS = [128001, 128008, 128009]  # Meta's Tokenizer.stop_tokens
#: Llama 3.2 1B's and 3B's rope_scaling in their config.json (factor 32; Meta's apply_scaling hard-codes 8).
LLAMA32_ROPE_SCALING = {
    "rope_type": "llama3",
    "factor": 32.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


# --------------------------------------------------------------------------- checkpoints


def hugging_face_copy(folder: Path, small_dir: Path, tied: bool = False, rope_scaling: dict | None = None) -> Path:
    """The small model in Hugging Face's format: ``model.safetensors`` (q/k rows permuted) and ``config.json``."""
    from safetensors.torch import save_file

    params = plumbing.ModelParams.from_json(small_dir / "params.json")
    tensors = hf_state(meta_state(small_dir), params)
    config = references.hf_config(params)
    if tied:
        del tensors["lm_head.weight"]
        config["tie_word_embeddings"] = True
    if rope_scaling:
        config["rope_scaling"] = rope_scaling
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.fixture(scope="module")
def hf_small_dir(tmp_path_factory, small_dir) -> Path:
    return hugging_face_copy(tmp_path_factory.mktemp("hf_small08"), small_dir)


@pytest.fixture(scope="module")
def hf_tied_32_dir(tmp_path_factory, small_dir) -> Path:
    """Llama 3.2's layout: no lm_head.weight (tied embeddings) and rope_scaling factor 32 in config.json."""
    return hugging_face_copy(tmp_path_factory.mktemp("hf_tied08"), small_dir, tied=True, rope_scaling=LLAMA32_ROPE_SCALING)


def meta_generate(folder: Path, tokens: list[int], **settings) -> list[int]:
    """Meta's ``Llama3.generate`` on the checkpoint in ``folder`` (any layout plumbing reads)."""
    return plumbing.reference.generate(plumbing.open_checkpoint(folder), tokens, max_gen_len=MAX_GEN_LEN, **settings)


# --------------------------------------------------------------------------- the notebook against Meta's generate


def check_against_meta(export: dict, folder: Path, tokens: list[int]) -> None:
    for name in ("greedy", "sampled"):
        ids = export[name]
        assert ids.dtype == torch.int64 and ids.dim() == 1 and 1 <= len(ids) <= MAX_GEN_LEN, (name, ids.shape)
        assert all(i not in STOP_TOKENS for i in ids[:-1].tolist()), f"{name}: generation went on after a stop token"
        assert len(ids) == MAX_GEN_LEN or ids[-1].item() in STOP_TOKENS, f"{name}: stopped early without a stop token"
    assert export["greedy"].tolist() == meta_generate(folder, tokens, temperature=0)
    assert export["sampled"].tolist() == meta_generate(folder, tokens, temperature=0.6, top_p=0.9, seed=1)


@pytest.mark.notebook
@pytest.mark.parametrize("prompt", [None, ""], ids=["default", "empty"])
def test_grouped_query_model_generates_meta_ids(run_notebook, small_dir, prompt):
    """n_rep 4; the empty prompt prefills one position (<|begin_of_text|>), with no mask."""
    export = run_notebook("08", prompt=prompt, llama3_dir=small_dir)
    check_against_meta(export, small_dir, prompt_tokens(prompt))


@pytest.mark.notebook
def test_model_without_grouping_with_scaled_rope_generates_meta_ids(run_notebook, small_mha_dir):
    export = run_notebook("08", llama3_dir=small_mha_dir)
    check_against_meta(export, small_mha_dir, prompt_tokens(None))


@pytest.mark.notebook
def test_tied_embeddings_with_factor_32_generate_meta_ids(run_notebook, hf_tied_32_dir):
    """A Hugging Face folder shaped like Llama 3.2's: output is tok_embeddings, RoPE scaled with factor 32."""
    assert plumbing.open_checkpoint(hf_tied_32_dir).params.rope_scaling["factor"] == 32.0
    export = run_notebook("08", llama3_dir=hf_tied_32_dir)
    check_against_meta(export, hf_tied_32_dir, prompt_tokens(None))


@pytest.mark.notebook
def test_the_export_records_its_settings(run_notebook, small_dir):
    """The metadata says how each tensor was generated."""
    from safetensors import safe_open

    with safe_open(str(run_notebook("08", llama3_dir=small_dir, path=True)), "pt") as f:
        meta = f.metadata()
    assert meta["max_gen_len"] == str(MAX_GEN_LEN) and "temperature 0.6, top_p 0.9" in meta["sampled"] and "seed(1)" in meta["sampled"]


# --------------------------------------------------------------------------- against Hugging Face


@pytest.mark.notebook
@pytest.mark.parametrize("prompt", [None, ""], ids=["default", "empty"])
def test_greedy_ids_against_hugging_face(run_notebook, small_dir, hf_small_dir, prompt):
    """Hugging Face's greedy ids are the notebook's wherever no rounding difference can change the argmax.

    At each step, while both have generated the same ids, ``d`` is the largest difference between Hugging Face's
    logits and Meta's (the notebook's, bitwise). It stays within test 07's tolerance, 8 bf16 units of the largest
    |logit|. Where Meta's top two logits are more than ``2 d`` apart, no token can overtake, so the ids must agree;
    where they are not, Hugging Face may choose any token within ``2 d`` of the top, and once the two choose
    different tokens, their continuations part (each then continues another text), and the comparison ends.
    """
    from transformers import LlamaForCausalLM

    tokens = prompt_tokens(prompt)
    ours = run_notebook("08", prompt=prompt, llama3_dir=small_dir)["greedy"].tolist()
    steps = []  # Meta's logits at each step along the same ids (the notebook's, asserted above)
    assert (
        plumbing.reference.generate(plumbing.open_checkpoint(small_dir), tokens, temperature=0, max_gen_len=MAX_GEN_LEN, logits=steps)
        == ours
    )
    model = LlamaForCausalLM.from_pretrained(hf_small_dir, dtype=torch.bfloat16, attn_implementation="eager").eval()
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([tokens]),
            attention_mask=torch.ones(1, len(tokens), dtype=torch.long),
            max_new_tokens=MAX_GEN_LEN,
            do_sample=False,
            eos_token_id=STOP_TOKENS,
            pad_token_id=128004,
            return_dict_in_generate=True,
            output_logits=True,
        )
    theirs = out.sequences[0, len(tokens) :].tolist()
    required = 0  # steps where the rule required the same id
    for step, (meta, hf) in enumerate(zip(steps, out.logits, strict=False)):
        d = (meta - hf[0].float()).abs().max().item()
        assert d <= hf_tolerance(meta), f"step {step}: Hugging Face's logits differ by {d:.3g}"
        top2 = meta.topk(2).values
        if (top2[0] - top2[1]).item() > 2 * d:
            assert theirs[step] == ours[step], f"step {step}: Hugging Face chose {theirs[step]}, Meta and the notebook {ours[step]}"
            required += 1
        else:  # a near-tie: any token within 2 d of the top is a fair choice
            assert meta[theirs[step]].item() >= top2[0].item() - 2 * d
        if theirs[step] != ours[step]:
            break
    else:
        assert len(theirs) == len(ours), "one stopped where the other did not"
    assert required >= 3, f"the rule required the same id at {required} steps only: the comparison has no teeth"


# --------------------------------------------------------------------------- the chat format


def notebook_chat(name: str):
    """The notebook's chat function ``name`` (``llama3_chat`` or ``chatml``), from its own code cells."""
    nb = nbformat.read(NOTEBOOKS["08"], as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and f"def {name}(" in c.source]
    helper = [c.source for c in nb.cells if c.cell_type == "code" and "def text_tokens(" in c.source]
    assert len(cells) == 1 and len(helper) == 1
    namespace = {"plumbing": plumbing}
    for source in dict.fromkeys(helper + cells):  # text_tokens first; the one cell once
        exec(source, namespace)  # noqa: S102 - the repository's own notebook
    return namespace[name]


DIALOGS = {
    "one user message": [{"role": "user", "content": "Hello"}],
    "system, user": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "6 x 7?"}],
    "two turns": [{"role": "user", "content": "6 x 7?"}, {"role": "assistant", "content": "42"}, {"role": "user", "content": "And 6 x 9?"}],
    "unicode and blank lines": [{"role": "user", "content": "  你好 🦙\n\nline two\n"}],
    "empty content": [{"role": "system", "content": ""}, {"role": "user", "content": "?"}],
    "special-token text stays text": [{"role": "user", "content": "say <|eot_id|> please"}],
}


@pytest.mark.parametrize("name", DIALOGS)
def test_chat_tokens_are_meta_chat_format(name):
    llama3_chat = notebook_chat("llama3_chat")
    tokenizer = plumbing.load_tokenizer(plumbing.default_tokenizer_path())
    assert llama3_chat(tokenizer, DIALOGS[name]) == plumbing.reference.encode_dialog_prompt(DIALOGS[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in DIALOGS if n != "special-token text stays text"])
def test_chatml_is_smollm2_s_own_chat_template(name):
    """SmolLM2's ChatML, written by hand in the notebook, against its own chat template (Jinja2, as Hugging Face's
    apply_chat_template renders it). Its template adds a default system message when none is given."""
    chatml = notebook_chat("chatml")
    folder = plumbing.ensure_smollm2(quiet=True)
    tokenizer = plumbing.load_tokenizer(folder / "tokenizer.model")
    dialog = DIALOGS[name] if DIALOGS[name][0]["role"] == "system" else [{"role": "system", "content": "Be brief."}, *DIALOGS[name]]
    assert chatml(tokenizer, dialog) == plumbing.chat_template_tokens(folder / "tokenizer.model", dialog)


# --------------------------------------------------------------------------- plumbing.reference's generation helpers


def test_meta_generate_refuses_what_its_cache_cannot_hold(small_dir):
    checkpoint = plumbing.open_checkpoint(small_dir)
    model = plumbing.reference.transformer(checkpoint, max_seq_len=8)
    with pytest.raises(plumbing.Llama3Error, match="max_seq_len"):
        plumbing.reference.generate(checkpoint, prompt_tokens(None), temperature=0, max_gen_len=4, model=model)


def test_metas_transformer_is_built_without_random_init_or_torch_dynamo(small_dir):
    """Building Meta's Transformer runs no random initialisation (fairscale's layers apply Meta's identity
    init_method) and no arithmetic on the meta device, which would import torch._dynamo: seconds in every kernel
    whose notebook checks against Meta's code."""
    code = (
        "import sys, plumbing\n"
        f"model = plumbing.reference.transformer(plumbing.open_checkpoint({str(small_dir)!r}))\n"
        "assert 'torch._dynamo' not in sys.modules, 'torch._dynamo was imported'\n"
        "print(model.tok_embeddings.weight.dtype, model.freqs_cis.shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[0] == "torch.bfloat16"


def test_a_message_without_a_known_role_is_refused():
    with pytest.raises(plumbing.Llama3Error, match="role"):
        plumbing.reference.encode_dialog_prompt([{"role": "narrator", "content": "Once"}])
    with pytest.raises(plumbing.Llama3Error, match="content"):
        plumbing.reference.encode_dialog_prompt([{"role": "user"}])


def test_meta_stop_tokens_and_pad():
    tokenizer = plumbing.reference.tokenizer()
    assert tokenizer.stop_tokens == STOP_TOKENS and tokenizer.pad_id == 128004


def test_the_notebooks_stop_tokens_are_meta_s():
    """Section 5 takes the stop tokens from the tokenizer's rules: for Llama 3 they are Meta's Tokenizer.stop_tokens."""
    assert list(plumbing.tokenizer_rules(plumbing.default_tokenizer_path()).stop_tokens) == plumbing.reference.tokenizer().stop_tokens
    nb = nbformat.read(NOTEBOOKS["08"], as_version=4)
    assert any("stop_tokens = list(rules.stop_tokens)" in c.source for c in nb.cells if c.cell_type == "code")
