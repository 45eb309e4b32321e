"""Notebook 06 (feed-forward): its exports against Meta's llama-models and Hugging Face transformers.

Every test executes ``notebooks/06_feed_forward.ipynb`` through the ``run_notebook`` fixture (a fresh kernel,
``LLAMA3_EXPORT_DIR`` set) and compares ``06_feed_forward.safetensors`` (``ffn_input``, ``ffn_output``,
``layer_output``, all [seqlen, dim] bf16) with independent implementations:

* Meta's reference code (``llama_models/llama3/model.py``: ``TransformerBlock`` of layer 0 and ``FeedForward``,
  see ``references.py``) on the memory-mapped checkpoint, fed with the embedding rows of the ids of Meta's own
  ``Tokenizer``, with ``freqs_cis`` from ``precompute_freqs_cis`` and Meta's causal mask in bf16. The notebook
  performs Meta's operations in Meta's order and precision, so every comparison is bitwise.
* Hugging Face's ``LlamaRMSNorm`` and ``LlamaMLP`` (bitwise: the same operations as Meta's) and the whole
  ``LlamaDecoderLayer`` (eager attention, bf16) on the Hugging Face copy of the stand-in, within a tolerance:
  Hugging Face rotates queries and keys in bf16 and multiplies the scores by ``head_dim**-0.5``, so its
  attention output, and everything after it, differs slightly (see ``check_against_hugging_face``).

Three kinds of weights: the stand-in (Meta's format), its Hugging Face safetensors copy, and small random
Meta-format checkpoints of other shapes built here (other ``dim``, heads and hidden size; Llama 3.1's scaled
RoPE in one of them).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import plumbing
import references
from references import meta_state, prompt_tokens

pytestmark = pytest.mark.notebook

PROMPTS = {
    "default": None,  # the series' prompt, 17 tokens
    "empty": "",  # just <|begin_of_text|>: one position, no mask
    "long": "The feed-forward network widens every row, gates it with SiLU and narrows it again. " * 7,
    "non_english": "La réponse à la grande question sur la vie, l'univers et le reste est 42. "
    "生命、宇宙以及一切的终极答案是四十二。 Ответ на главный вопрос жизни — 42.",
}
EXPORTS = ("ffn_input", "ffn_output", "layer_output")


# --------------------------------------------------------------------------- helpers


def meta_reference(state: dict, params, tokens: list[int]) -> dict:
    """Layer 0 by Meta's modules: ``h``, ``ffn_input``, ``ffn_output`` and ``layer_output``, each [n, dim] bf16.

    ``ffn_input`` is the block's ``ffn_norm(h)``; ``ffn_output`` is Meta's ``FeedForward`` (built on its own by
    ``references.meta_feed_forward``) applied to it; ``layer_output`` is the whole ``TransformerBlock.forward``.
    The input is the embedding rows of ``tokens`` with a batch axis of 1, as Meta's ``Transformer`` passes them.
    """
    n = len(tokens)
    block = references.meta_block(state, params, layer=0, max_seq_len=n)
    feed_forward = references.meta_feed_forward(state, params, layer=0)
    x = state["tok_embeddings.weight"][torch.tensor(tokens)][None]  # [1, n, dim] bf16
    freqs_cis = references.meta_freqs_cis(params, n)
    mask = references.meta_mask(n, dtype=torch.bfloat16)
    with torch.inference_mode():
        h = x + block.attention(block.attention_norm(x), 0, freqs_cis, mask)
        ffn_input = block.ffn_norm(h)
        ffn_output = feed_forward(ffn_input)
        assert torch.equal(block.feed_forward(ffn_input), ffn_output)  # the block's copy is the same module
        layer_output = block(x, 0, freqs_cis, mask)
    return {"h": h[0], "ffn_input": ffn_input[0], "ffn_output": ffn_output[0], "layer_output": layer_output[0]}


def check_against_meta(export: dict, reference: dict, n: int, dim: int) -> None:
    """Names, shapes, dtypes, and every exported tensor bitwise equal to Meta's (AssertionError otherwise)."""
    assert set(export) == set(EXPORTS)
    for name in EXPORTS:
        assert export[name].shape == (n, dim) and export[name].dtype == torch.bfloat16, name
        assert plumbing.same_bits(export[name], reference[name]), name


def hf_tensors(folder: Path, token_ids: list[int]) -> tuple[dict, torch.Tensor]:
    """Layer 0's tensors (Hugging Face's names, without the ``model.layers.0.`` prefix) and the embedding rows.

    The embedding rows are read one by one with ``safe_open(...).get_slice``, so the 1 GB table is not loaded.
    """
    from safetensors import safe_open

    layer, rows = {}, {}
    for shard in sorted(folder.glob("*.safetensors")):
        with safe_open(str(shard), framework="pt") as f:
            for name in f.keys():
                if name.startswith("model.layers.0."):
                    layer[name.removeprefix("model.layers.0.")] = f.get_tensor(name)
                elif name == "model.embed_tokens.weight":
                    table = f.get_slice(name)
                    rows = {i: table[i : i + 1] for i in set(token_ids)}
    return layer, torch.cat([rows[i] for i in token_ids])


def hf_decoder_layer(layer_tensors: dict, params):
    """Hugging Face's ``LlamaDecoderLayer`` of layer 0 (eager attention), its tensors assigned without copies."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    config = LlamaConfig(**references.hf_config(params))
    config._attn_implementation = "eager"
    with torch.device("meta"):
        layer = LlamaDecoderLayer(config, layer_idx=0)
    layer.load_state_dict(layer_tensors, strict=True, assign=True)
    return layer.eval(), config


def row_rms(t: torch.Tensor) -> torch.Tensor:
    """Root mean square of each row, float32 [n, 1]."""
    return t.float().pow(2).mean(-1, keepdim=True).sqrt()


#: Hugging Face's whole decoder layer against Meta's, per number: this fraction of the scale of the two
#: sub-layers' outputs in its row, plus one bf16 spacing of the result (see check_against_hugging_face).
HF_LAYER_TOLERANCE = 2.0**-4


def check_against_hugging_face(export: dict, meta: dict, folder: Path, tokens: list[int], params) -> None:
    """The export against Hugging Face's modules on the Hugging Face copy in ``folder``.

    Checks (AssertionError on failure):
        1. ``post_attention_layernorm`` (``LlamaRMSNorm``) of Meta's ``h`` equals ``ffn_input`` bitwise: the same
           float32 normalisation, one rounding to bf16, and the gain multiplied on the left (``weight * x``),
           which gives the same bits as Meta's ``x * weight``.
        2. ``mlp`` (``LlamaMLP``: ``down_proj(act_fn(gate_proj(x)) * up_proj(x))``, SiLU) of the exported
           ``ffn_input`` equals ``ffn_output`` bitwise: the same operations in the same order and precision.
        3. The whole ``LlamaDecoderLayer`` on the embedding rows (``LlamaRotaryEmbedding``, Meta's causal mask)
           against ``layer_output``. Its second half is Meta's operations (1 and 2; and the layer's output is
           bitwise ``h + mlp(post_attention_layernorm(h))`` of its own ``h``), but its attention differs: it rounds
           RoPE's cos, sin and each product to bf16 (about 4 roundings of 2**-8 of a pair's length, against one in
           Meta's float32 rotation) and multiplies the scores by head_dim**-0.5 instead of dividing by
           sqrt(head_dim). The residual stream's input ``x`` is the same, so the difference comes from the two
           sub-layers' outputs (attention's, then the feed-forward network's response to it) plus the final
           rounding, which may now go the other way (one bf16 spacing, at most 2**-7 of the value). How far the
           perturbed scores move the softmax weights depends on the weights, so the fraction is set from a
           measurement: on the stand-in, for these prompts, at most 1.6% of the scale
           ``rms(attention output row) + rms(ffn_output row)``. We allow 2**-4 = 6.25% of it, and check that this
           still catches real mistakes: a missing causal mask, or ``gate_proj`` and ``up_proj`` swapped, exceed it.
           With one token the rotation is the identity (cos 1, sin 0, exact in bf16) and the softmax of one score
           is 1, so there the layer must be bitwise equal.
    """
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    layer_tensors, x = hf_tensors(folder, tokens)
    layer, config = hf_decoder_layer(layer_tensors, params)
    n = len(tokens)
    want = export["layer_output"].float()
    scale = row_rms(meta["h"].float() - x.float()) + row_rms(export["ffn_output"])  # [n, 1]

    def within_tolerance(out):
        return ((out.float() - want).abs() <= 2.0**-7 * want.abs() + HF_LAYER_TOLERANCE * scale).all()

    with torch.inference_mode():
        assert plumbing.same_bits(layer.post_attention_layernorm(meta["h"]), export["ffn_input"])
        assert plumbing.same_bits(layer.mlp(export["ffn_input"]), export["ffn_output"])

        x = x[None]  # [1, n, dim]
        position_ids = torch.arange(n)[None]
        cos_sin = LlamaRotaryEmbedding(config)(x, position_ids)
        mask = references.meta_mask(n, dtype=torch.bfloat16)
        mask = None if mask is None else mask[None, None]  # [1, 1, n, n], added to the scores
        out = layer(x, attention_mask=mask, position_ids=position_ids, position_embeddings=cos_sin)[0]
        assert out.shape == want.shape and out.dtype == torch.bfloat16
        if n == 1:
            assert plumbing.same_bits(out, export["layer_output"])
        assert within_tolerance(out)

        # The layer from its parts: its own h, then Meta's second half, bitwise.
        h = x + layer.self_attn(layer.input_layernorm(x), position_embeddings=cos_sin, attention_mask=mask)[0]
        normed = layer.post_attention_layernorm(h)
        assert plumbing.same_bits((h + layer.mlp(normed))[0], out)
        if n > 1:  # mistakes the tolerance must catch (with one token, the bitwise check above does)
            mlp = layer.mlp
            assert not within_tolerance((h + mlp.down_proj(mlp.act_fn(mlp.up_proj(normed)) * mlp.gate_proj(normed)))[0])
            assert not within_tolerance(layer(x, attention_mask=None, position_embeddings=cos_sin)[0])


# --------------------------------------------------------------------------- small checkpoints


SMALL = {
    # hidden: int(2 * 1024 / 3) = 682, int(1.3 * 682) = 886, rounded up to a multiple of 64: 896 (not 4 * dim);
    # grouped-query attention with n_rep 4; Llama 3.1's scaled RoPE.
    "gqa_scaled_rope": {
        "dim": 256,
        "n_layers": 2,
        "n_heads": 8,
        "n_kv_heads": 2,
        "vocab_size": 128256,
        "multiple_of": 64,
        "ffn_dim_multiplier": 1.3,
        "norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "use_scaled_rope": True,
    },
    # hidden: int(2 * 1536 / 3) = 1024 rounded up to a multiple of 96: 1056; no ffn_dim_multiplier; n_kv_heads absent (= n_heads,
    # n_rep 1); head_dim 48; Llama 2's rope_theta.
    "mha_no_multiplier": {
        "dim": 384,
        "n_layers": 2,
        "n_heads": 8,
        "vocab_size": 128256,
        "multiple_of": 96,
        "norm_eps": 1e-06,
        "rope_theta": 10000.0,
    },
}
SMALL_HIDDEN = {"gqa_scaled_rope": 896, "mha_no_multiplier": 1056}


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("prompt", PROMPTS.values(), ids=PROMPTS.keys())
def test_matches_meta_reference(run_notebook, standin_dir, prompt):
    """The stand-in, four prompts: every export bitwise equal to Meta's TransformerBlock and FeedForward."""
    export, tokens = run_notebook("06", prompt=prompt), prompt_tokens(prompt)
    params = plumbing.ModelParams.from_json(standin_dir / "params.json")
    reference = meta_reference(meta_state(standin_dir), params, tokens)
    check_against_meta(export, reference, len(tokens), params.dim)


@pytest.mark.parametrize("prompt", [PROMPTS["default"], PROMPTS["empty"], PROMPTS["non_english"]], ids=["default", "empty", "non_english"])
def test_matches_hugging_face(run_notebook, standin_dir, hf_standin_dir, prompt):
    """Hugging Face's RMSNorm and MLP bitwise, its whole decoder layer within the tolerance of the docstring above."""
    export, tokens = run_notebook("06", prompt=prompt), prompt_tokens(prompt)
    params = plumbing.ModelParams.from_json(standin_dir / "params.json")
    meta = meta_reference(meta_state(standin_dir), params, tokens)
    check_against_hugging_face(export, meta, hf_standin_dir, tokens, params)


def test_hugging_face_folder_gives_the_same_exports(run_notebook, hf_standin_dir):
    """The Hugging Face copy (intermediate_size from config.json instead of Meta's formula) gives Meta's bits."""
    from_hf, from_meta = run_notebook("06", llama3_dir=hf_standin_dir), run_notebook("06")
    assert set(from_hf) == set(from_meta) == set(EXPORTS)
    for name in EXPORTS:
        assert plumbing.same_bits(from_hf[name], from_meta[name]), name


@pytest.mark.parametrize("name", SMALL, ids=SMALL.keys())
def test_small_checkpoint_of_other_shapes(run_notebook, standin_dir, tmp_path, name):
    """A random Meta-format checkpoint of other shapes: the notebook follows params.json, bitwise Meta's."""
    references.write_small_checkpoint(tmp_path, SMALL[name], seed=6, embedding_std=0.02, gain_std=0.2)
    params = plumbing.ModelParams.from_json(tmp_path / "params.json")
    state = meta_state(tmp_path)
    assert state["layers.0.feed_forward.w1.weight"].shape == (SMALL_HIDDEN[name], params.dim)
    assert SMALL_HIDDEN[name] != 4 * params.dim
    export, tokens = run_notebook("06", llama3_dir=tmp_path), prompt_tokens(None)
    check_against_meta(export, meta_reference(state, params, tokens), len(tokens), params.dim)
