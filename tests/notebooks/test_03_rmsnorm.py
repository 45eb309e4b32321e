"""Notebook 03 (RMSNorm): its export against Meta's ``RMSNorm`` class and Hugging Face's ``LlamaRMSNorm``.

Each prompt runs the notebook once in a fresh kernel (``run_notebook`` caches the export). The
input rows are read from the checkpoint for the token ids of Meta's own tokenizer, so the
tokenization and the lookup are checked independently of the notebook too.

Both references are expected to agree **bitwise**: they run the same operations in the same order
as Meta's code (to float32, square, mean over the last axis, add eps, rsqrt, multiply, cast back to
bf16, multiply by the bf16 weight; bf16 x bf16 multiplication is commutative, so Hugging Face's
``weight * hidden`` equals Meta's ``output * weight``).
"""

from __future__ import annotations

import pytest
import torch

import plumbing
import references

PROMPTS = {
    "default": None,
    "empty": "",
    "long": "The quick brown fox jumps over the lazy dog, again and again. " * 30,
    "special-token text": "<|begin_of_text|>Hello<|eot_id|> <|start_header_id|>user<|end_header_id|>",
}


@pytest.fixture(scope="module")
def checkpoint():
    """The stand-in checkpoint, memory-mapped (Meta's names and layout)."""
    return plumbing.open_checkpoint()


def meta_ids(prompt: str | None) -> list[int]:
    """Token ids of ``prompt`` (``None``: the default prompt) from Meta's reference tokenizer, with BOS."""
    text = plumbing.DEFAULT_PROMPT if prompt is None else prompt
    return references.meta_tokenizer().encode(text, bos=True, eos=False)


def inputs(checkpoint, prompt):
    """(rows of tok_embeddings for Meta's ids [n, dim] bf16, attention_norm weight [dim] bf16, params)."""
    ids = meta_ids(prompt)
    rows = checkpoint.get("tok_embeddings.weight")[torch.tensor(ids)]
    return rows, checkpoint.get("layers.0.attention_norm.weight"), checkpoint.params


def meta_rmsnorm(weight: torch.Tensor, eps: float) -> torch.nn.Module:
    """Meta's ``RMSNorm`` (llama-models ``llama3/model.py``) holding ``weight``, in the weight's dtype.

    ``Llama3.build`` (``llama_models/llama3/generation.py``) sets the default dtype to bf16 only on a CUDA
    or XPU device with bf16 support (float16 on one without it) and leaves float32 on the CPU. The series
    reproduces the bf16 path, so the module is kept in the checkpoint's bf16; a module left in float32 would
    promote the output to float32 (``test_meta_cpu_path_is_float32``). ``eps`` must be passed: the class
    default is 1e-6, Llama 3 8B's ``norm_eps`` is 1e-5.
    """
    norm = references.meta_llama3_model().RMSNorm(weight.shape[0], eps=eps).to(weight.dtype)
    norm.load_state_dict({"weight": weight})
    return norm


def hf_rmsnorm(weight: torch.Tensor, eps: float) -> torch.nn.Module:
    """Hugging Face's ``LlamaRMSNorm`` (transformers ``modeling_llama.py``) holding ``weight``, in its dtype."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    norm = LlamaRMSNorm(weight.shape[0], eps=eps).to(weight.dtype)
    norm.load_state_dict({"weight": weight})
    return norm


@pytest.mark.parametrize("prompt", list(PROMPTS.values()), ids=list(PROMPTS))
def test_export_shape_and_dtype(run_notebook, prompt):
    out = run_notebook("03", prompt=prompt)
    assert set(out) == {"token_embeddings"}
    t = out["token_embeddings"]
    assert t.dtype == torch.bfloat16
    assert list(t.shape) == [len(meta_ids(prompt)), plumbing.LLAMA3_8B_PARAMS["dim"]]


@pytest.mark.parametrize("reference", [meta_rmsnorm, hf_rmsnorm], ids=["meta_RMSNorm", "hf_LlamaRMSNorm"])
@pytest.mark.parametrize("prompt", list(PROMPTS.values()), ids=list(PROMPTS))
def test_export_matches_reference_rmsnorm_bitwise(run_notebook, checkpoint, prompt, reference):
    """Meta's RMSNorm class and Hugging Face's LlamaRMSNorm both give the notebook's export, bit for bit."""
    rows, weight, params = inputs(checkpoint, prompt)
    with torch.no_grad():
        expected = reference(weight, params.norm_eps)(rows)
    got = run_notebook("03", prompt=prompt)["token_embeddings"]
    assert expected.dtype == torch.bfloat16
    assert torch.equal(got, expected)


def test_each_token_is_normalised_on_its_own(run_notebook):
    """<|begin_of_text|> alone (empty prompt) gives bitwise the same row as at the start of any prompt."""
    alone = run_notebook("03", prompt="")["token_embeddings"]
    assert alone.shape[0] == 1
    for prompt in (None, PROMPTS["long"]):
        assert torch.equal(run_notebook("03", prompt=prompt)["token_embeddings"][:1], alone)


def test_the_reference_setup_is_not_vacuous(checkpoint):
    """The references detect what the notebook warns about: the wrong eps, a float32 weight."""
    rows, weight, params = inputs(checkpoint, None)
    with torch.no_grad():
        right = meta_rmsnorm(weight, params.norm_eps)(rows)
        class_default_eps = meta_rmsnorm(weight, 1e-6)(rows)
        float32_weight = meta_rmsnorm(weight.float(), params.norm_eps)(rows)
    assert not torch.equal(right, class_default_eps)
    assert float32_weight.dtype == torch.float32


def test_generation_picks_bf16_only_on_accelerators_with_bf16():
    """The dtype choice the notebook describes is the installed ``Llama3.build``'s (llama-models 0.3.0).

    bf16 when ``torch.cuda``/``torch.xpu`` report bf16 support, float16 (``torch.half``) otherwise on those
    devices, and no ``set_default_dtype`` for any other device (the CPU keeps float32).
    """
    import importlib.util
    from pathlib import Path

    # Read, not imported: generation.py imports fairscale at module level.
    path = Path(importlib.util.find_spec("llama_models").origin).parent / "llama3" / "generation.py"
    source = path.read_text(encoding="utf-8")
    source = source[source.index("    def build(") :]
    source = source[: source.index("\n    def ", 10)]  # Llama3.build only
    dense = source[source.index('print(f"Setting default device') :]  # the non-quantized branch
    for device in ("cuda", "xpu"):
        block = dense[dense.index(f'device.type == "{device}"') :]
        block = block[: block.index("build_model()")]
        assert f"torch.{device}.is_bf16_supported()" in block
        assert "torch.set_default_dtype(torch.bfloat16)" in block and "torch.set_default_dtype(torch.half)" in block
    assert dense.count("set_default_dtype(") == 4  # two per accelerator, none for the CPU


def test_meta_cpu_path_is_float32(run_notebook, checkpoint):
    """Meta's CPU path (float32 model: float32 rows and gain) gives float32 values, not the export's bf16 path."""
    rows, weight, params = inputs(checkpoint, None)
    with torch.no_grad():
        cpu = meta_rmsnorm(weight.float(), params.norm_eps)(rows.float())
    got = run_notebook("03")["token_embeddings"]
    assert cpu.dtype == torch.float32
    assert not torch.equal(cpu.to(torch.bfloat16), got)  # one rounding at the end vs the bf16 path's two
    assert torch.allclose(cpu, got.float(), rtol=2.0**-7, atol=0)  # within one bf16 spacing
