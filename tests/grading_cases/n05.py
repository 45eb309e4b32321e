"""Notebook 05 (attention): a learner's mistakes, and PyTorch's fused attention as a shortcut."""

MISTAKES = {
    # the key/value heads tiled (0, 1, .., 7, 0, 1, ..) instead of each repeated in place
    "05-repeat-kv": (
        "x[:, :, None, :].expand(slen, n_kv_heads, n_rep, head_dim)",
        "x[:, None, :, :].expand(slen, n_rep, n_kv_heads, head_dim)",
    ),
    "05-scores": ("/ math.sqrt(head_dim)", "/ head_dim"),  # divided by head_dim, not its square root
    "05-causal-mask": ("torch.triu(mask, diagonal=1)", "torch.tril(mask, diagonal=-1)"),  # the past hidden, not the future
    "05-softmax": ("dim=-1", "dim=-2"),  # the softmax over the queries m
    "05-weighted-sum": (
        "torch.matmul(attention_weights, values_heads)",
        "torch.matmul(attention_weights.transpose(1, 2), values_heads)",
    ),  # the weights transposed
    "05-output-projection": ("output.transpose(0, 1).contiguous()", "output.contiguous()"),  # heads not moved last
}

SHORTCUTS = [
    (
        "05-weighted-sum",
        "output = torch.matmul(attention_weights, values_heads)",
        "output = F.scaled_dot_product_attention(xq_heads, keys_heads, values_heads, is_causal=True)",
    ),
]

VALID = [
    (
        "05-scores",
        "torch.matmul(xq_heads, keys_heads.transpose(1, 2))",  # another order of the sums
        "torch.einsum('hmd,hnd->hmn', xq_heads, keys_heads)",
    ),
    ("05-weighted-sum", "torch.matmul(attention_weights, values_heads)", "attention_weights @ values_heads"),
]

TAMPERED = [  # the scores clamped inside the softmax's cell: the weights follow them, the scores are not the step's
    (
        "05-softmax",
        "attention_weights = F.softmax(scores.float(), dim=-1)",
        "scores = scores.clamp_max(0); attention_weights = F.softmax(scores.float(), dim=-1)",
    ),
]
