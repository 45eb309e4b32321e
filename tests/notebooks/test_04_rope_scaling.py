"""Notebook 04 (RoPE) with scaled frequencies, against Meta's llama-models and Hugging Face transformers.

Two folders over the stand-in's weights: a Llama 3.1 ``params.json`` (``use_scaled_rope``: Meta's hard-coded
factor 8), and the Hugging Face copy with a Llama 3.2 1B/3B ``config.json`` (``rope_scaling`` factor 32, followed
as transformers follows it). The helpers and tolerances are tests/notebooks/test_04_rope.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import plumbing
import references
from references import meta_state, prompt_tokens
from test_04_rope import (
    LLAMA32_SMALL_ROPE_SCALING,
    PROMPTS,
    check_against_hugging_face,
    check_against_meta,
    hf_config_kwargs,
    hf_rotary,
    meta_projections,
)


@pytest.fixture(scope="session")
def hf_factor32_dir(tmp_path_factory, hf_standin_dir) -> Path:
    """The Hugging Face copy of the stand-in (shards symlinked) whose ``config.json`` scales RoPE as Llama 3.2 1B/3B do.

    ``rope_scaling`` is ``{"rope_type": "llama3", "factor": 32.0, ...}`` (low_freq_factor 1, high_freq_factor 4,
    original_max_position_embeddings 8192), and ``max_position_embeddings`` 131072, as in those models' files.
    """
    folder = tmp_path_factory.mktemp("hf_factor32")
    for path in hf_standin_dir.iterdir():
        if path.name != "config.json":
            (folder / path.name).symlink_to(path)
    config = json.loads((hf_standin_dir / "config.json").read_text())
    config["rope_scaling"] = {"rope_type": "llama3", **LLAMA32_SMALL_ROPE_SCALING}
    config["max_position_embeddings"] = 131072
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder


@pytest.fixture(scope="session")
def llama31_dir(tmp_path_factory, standin_dir) -> Path:
    """The stand-in's checkpoint and tokenizer (symlinks) with a Llama 3.1 ``params.json`` (``use_scaled_rope``).

    The stand-in marker is not copied, so the notebook treats the folder as a real Meta-format checkpoint.
    """
    folder = tmp_path_factory.mktemp("llama31")
    for name in ("consolidated.00.pth", "tokenizer.model"):
        (folder / name).symlink_to(standin_dir / name)
    (folder / "params.json").write_text(json.dumps({**plumbing.LLAMA3_8B_PARAMS, "use_scaled_rope": True}, indent=2))
    return folder


@pytest.mark.parametrize("prompt", [PROMPTS["default"], PROMPTS["long"]], ids=["default", "long"])
def test_llama31_params_scale_the_frequencies(run_notebook, llama31_dir, standin_dir, prompt):
    """With ``use_scaled_rope``: Meta's scaled ``precompute_freqs_cis`` bitwise, Hugging Face's llama3 RoPE within tolerance."""
    M = references.meta_llama3_model()
    p = plumbing.ModelParams.from_dict({**plumbing.LLAMA3_8B_PARAMS, "use_scaled_rope": True})
    export, tokens = run_notebook("04", prompt=prompt, llama3_dir=llama31_dir), prompt_tokens(prompt)
    check_against_meta(export, tokens, meta_state(standin_dir), p)
    unscaled = torch.view_as_real(M.precompute_freqs_cis(p.head_dim, len(tokens), p.rope_theta, False))
    assert not torch.equal(export["freqs_cis"], unscaled)  # the slow pairs' angles changed

    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    # Same operations on the same inputs as Meta's apply_scaling: bitwise.
    inv_freq = LlamaRotaryEmbedding(LlamaConfig(**hf_config_kwargs(p))).inv_freq
    base = 1.0 / (p.rope_theta ** (torch.arange(0, p.head_dim, 2)[: (p.head_dim // 2)].float() / p.head_dim))
    assert torch.equal(inv_freq, M.apply_scaling(base))
    # cos/sin from torch.cos/torch.sin vs torch.polar on the same float32 angles: a few float32 spacings
    # (at most 2**-24 for values below 1), so 2**-22 in absolute terms.
    cos, sin = hf_rotary(hf_config_kwargs(p), len(tokens), torch.float32)
    half = p.head_dim // 2
    assert torch.allclose(cos[0, :, :half], export["freqs_cis"][..., 0], rtol=0, atol=2.0**-22)
    assert torch.allclose(sin[0, :, :half], export["freqs_cis"][..., 1], rtol=0, atol=2.0**-22)
    sd = meta_state(standin_dir)
    x, _, _ = meta_projections(
        sd["tok_embeddings.weight"],
        sd["layers.0.attention_norm.weight"],
        sd["layers.0.attention.wq.weight"],
        sd["layers.0.attention.wk.weight"],
        tokens,
        p,
    )
    check_against_hugging_face(
        export,
        x,
        plumbing.hf_permute(sd["layers.0.attention.wq.weight"], p.n_heads),
        plumbing.hf_permute(sd["layers.0.attention.wk.weight"], p.n_kv_heads),
        p,
    )


def test_hf_config_factor_32_is_followed(run_notebook, hf_factor32_dir, standin_dir):
    """A Hugging Face folder whose config.json says factor 32 is rotated with 32, as transformers does, not Meta's 8.

    ``freqs_cis`` equals ``torch.polar`` of transformers' llama3 inverse frequencies for that config (the same
    operations as Meta's ``apply_scaling`` with factor 32, so bitwise); the rotations equal Meta's
    ``apply_rotary_emb`` with that table (bitwise) and Hugging Face's own rotation (within the tolerances of
    ``check_against_hugging_face``); and both differ from what factor 8 gives.
    """
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    M = references.meta_llama3_model()
    p = plumbing.ModelParams.from_dict({**plumbing.LLAMA3_8B_PARAMS, "use_scaled_rope": True})
    export, tokens = run_notebook("04", llama3_dir=hf_factor32_dir), prompt_tokens(None)
    n = len(tokens)

    inv_freq, _ = ROPE_INIT_FUNCTIONS["llama3"](LlamaConfig(**hf_config_kwargs(p, LLAMA32_SMALL_ROPE_SCALING)), "cpu")
    angles = torch.outer(torch.arange(n, dtype=torch.float32), inv_freq)
    freqs_cis_32 = torch.polar(torch.ones_like(angles), angles)
    assert torch.equal(export["freqs_cis"], torch.view_as_real(freqs_cis_32))
    freqs_cis_8 = M.precompute_freqs_cis(p.head_dim, n, p.rope_theta, True)  # Meta's hard-coded factor 8
    assert not torch.equal(export["freqs_cis"], torch.view_as_real(freqs_cis_8))

    sd = meta_state(standin_dir)
    x, xq, xk = meta_projections(
        sd["tok_embeddings.weight"],
        sd["layers.0.attention_norm.weight"],
        sd["layers.0.attention.wq.weight"],
        sd["layers.0.attention.wk.weight"],
        tokens,
        p,
    )
    assert torch.equal(export["xq"], xq) and torch.equal(export["xk"], xk)
    xq_32, xk_32 = M.apply_rotary_emb(xq[None], xk[None], freqs_cis_32)
    assert torch.equal(export["xq_rotated"], xq_32[0]) and torch.equal(export["xk_rotated"], xk_32[0])
    xq_8, _ = M.apply_rotary_emb(xq[None], xk[None], freqs_cis_8)
    assert not torch.equal(export["xq_rotated"], xq_8[0])
    check_against_hugging_face(
        export,
        x,
        plumbing.hf_permute(sd["layers.0.attention.wq.weight"], p.n_heads),
        plumbing.hf_permute(sd["layers.0.attention.wk.weight"], p.n_kv_heads),
        p,
        rope_scaling=LLAMA32_SMALL_ROPE_SCALING,
    )
