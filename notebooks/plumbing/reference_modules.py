"""Meta's modules one at a time (``RMSNorm``, ``Attention``, ``FeedForward``, ``TransformerBlock``) on a checkpoint.

Each is built on PyTorch's ``meta`` device (no memory) and then given the checkpoint's tensors with
``load_state_dict(..., assign=True)`` (:func:`assign_weights`): its parameters *are* the memory-mapped tensors,
nothing is copied. Also Meta's ``ModelArgs`` for a checkpoint's parameters, ``precompute_freqs_cis`` (with the
checkpoint's own RoPE scaling constants where they differ from Meta's hard-coded ones) and the causal mask.
Part of :mod:`plumbing.reference`, which re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .errors import Llama3Error
from .reference_code import meta_model_code

__all__ = [
    "META_APPLY_SCALING",
    "model_args",
    "precompute_freqs_cis",
    "assign_weights",
    "rms_norm",
    "attention",
    "feed_forward",
    "transformer_block",
    "mask",
]

#: The constants Meta's ``apply_scaling`` hard-codes (``llama_models/llama3/model.py``).
META_APPLY_SCALING = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}


def model_args(params, max_seq_len: int = 64, n_layers: int | None = None):
    """Meta's ``ModelArgs`` for :class:`~plumbing.params.ModelParams` ``params``, batch size 1.

    ``max_seq_len`` sizes each ``Attention``'s key/value cache (Meta's default would allocate gigabytes): it must
    be at least the number of positions run. ``n_layers`` builds only the first layers (default: all).
    """
    from llama_models.llama3.args import ModelArgs

    meta_model_code()
    multiple_of, ffn_dim_multiplier = params.multiple_of, params.ffn_dim_multiplier
    if params.intermediate_size is not None:  # a Hugging Face config.json stores the hidden size itself:
        # Meta's FeedForward rounds int(ffn_dim_multiplier * int(8 * dim / 3)) up to a multiple of multiple_of,
        # which gives exactly intermediate_size with these two values.
        multiple_of = params.intermediate_size
        ffn_dim_multiplier = params.intermediate_size / int(2 * (4 * params.dim) / 3)
    return ModelArgs(
        dim=params.dim,
        n_layers=params.n_layers if n_layers is None else n_layers,
        n_heads=params.n_heads,
        n_kv_heads=params.n_kv_heads,
        vocab_size=params.vocab_size,
        multiple_of=multiple_of,
        ffn_dim_multiplier=ffn_dim_multiplier,
        norm_eps=params.norm_eps,
        rope_theta=params.rope_theta,
        use_scaled_rope=params.use_scaled_rope,
        max_batch_size=1,
        max_seq_len=max_seq_len,
    )


def precompute_freqs_cis(params, end: int):
    """Meta's ``precompute_freqs_cis(head_dim, end, rope_theta, use_scaled_rope)``: [end, head_dim/2] complex64.

    When ``params.rope_scaling`` differs from the constants Meta's ``apply_scaling`` hard-codes
    (:data:`META_APPLY_SCALING`), Meta's formula runs with the checkpoint's constants instead.
    """
    M = meta_model_code()
    constants = {k: v for k, v in params.rope_scaling.items() if k != "source"}
    if not params.use_scaled_rope or constants == META_APPLY_SCALING:
        return M.precompute_freqs_cis(params.head_dim, end, params.rope_theta, params.use_scaled_rope)
    original = M.apply_scaling
    M.apply_scaling = lambda freqs: _apply_scaling(freqs, **constants)
    try:
        return M.precompute_freqs_cis(params.head_dim, end, params.rope_theta, True)
    finally:
        M.apply_scaling = original


def _apply_scaling(freqs, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings):
    """Meta's ``apply_scaling``, line for line, with its four constants as arguments."""
    import torch

    old_context_len = original_max_position_embeddings
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * torch.pi / freqs
    new_freqs = torch.where(wavelen > low_freq_wavelen, freqs / factor, freqs)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    return torch.where(
        (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen), (1 - smooth) * new_freqs / factor + smooth * new_freqs, new_freqs
    )


def assign_weights(module, weights: Mapping, prefix: str, names: Iterable[str]):
    """Give ``module`` (built on the meta device) the tensors ``prefix + name`` of ``weights``, without copies."""
    import torch

    M = meta_model_code()
    names = list(names)
    state = {name: weights.get(prefix + name) for name in names}
    expected_missing = set(module.state_dict()) - set(names)  # left on the meta device on purpose (never used)
    result = module.load_state_dict(state, strict=False, assign=True)
    if result.unexpected_keys or set(result.missing_keys) != expected_missing:
        raise Llama3Error(
            f"Meta's module does not take the tensors {sorted(result.unexpected_keys)[:5]} "
            f"or lacks {sorted(set(result.missing_keys) - expected_missing)[:5]}"
        )
    for m in module.modules():  # Meta's key/value caches are plain attributes, not parameters: make them real, in the
        if isinstance(m, M.Attention):  # weights' dtype (Meta's build sets the default dtype to the checkpoint's, bf16)
            m.cache_k = torch.zeros(m.cache_k.shape, dtype=m.wk.weight.dtype)
            m.cache_v = torch.zeros(m.cache_v.shape, dtype=m.wk.weight.dtype)
    return module.eval()


def _build(make, weights: Mapping, prefix: str):
    import torch

    with torch.device("meta"):
        module = make()
    return assign_weights(module, weights, prefix, module.state_dict().keys())


def rms_norm(checkpoint, name: str):
    """Meta's ``RMSNorm(dim, eps=norm_eps)`` with the gain ``name + ".weight"`` (e.g. ``"layers.0.attention_norm"``)."""
    M, p = meta_model_code(), checkpoint.params
    return _build(lambda: M.RMSNorm(p.dim, eps=p.norm_eps), checkpoint, name + ".")


def attention(checkpoint, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``Attention`` with layer ``layer``'s ``wq wk wv wo``; its cache holds ``max_seq_len`` positions."""
    M = meta_model_code()
    return _build(lambda: M.Attention(model_args(checkpoint.params, max_seq_len)), checkpoint, f"layers.{layer}.attention.")


def feed_forward(checkpoint, layer: int = 0):
    """Meta's ``FeedForward`` with layer ``layer``'s ``w1 w2 w3`` (``hidden_dim`` from Meta's own formula)."""
    M, p = meta_model_code(), checkpoint.params
    return _build(
        lambda: M.FeedForward(dim=p.dim, hidden_dim=4 * p.dim, multiple_of=p.multiple_of, ffn_dim_multiplier=p.ffn_dim_multiplier),
        checkpoint,
        f"layers.{layer}.feed_forward.",
    )


def transformer_block(checkpoint, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``TransformerBlock`` of layer ``layer``, every tensor from the checkpoint."""
    M = meta_model_code()
    return _build(lambda: M.TransformerBlock(layer, model_args(checkpoint.params, max_seq_len)), checkpoint, f"layers.{layer}.")


def mask(seqlen: int, start_pos: int = 0):
    """The causal mask as Meta's ``Transformer.forward`` builds it: [seqlen, start_pos + seqlen] bf16, ``None`` for one token."""
    import torch

    if seqlen <= 1:
        return None
    m = torch.triu(torch.full((seqlen, seqlen), float("-inf")), diagonal=1)
    return torch.hstack([torch.zeros((seqlen, start_pos)), m]).to(torch.bfloat16)
