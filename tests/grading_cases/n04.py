"""Notebook 04 (RoPE): a learner's mistakes, and Meta's code as a shortcut."""

MISTAKES = {
    "04-projections": ("token_embeddings @ wq.T", "token_embeddings @ wq"),  # nn.Linear's transpose forgotten
    "04-frequencies": ("torch.arange(0, head_dim, 2)", "torch.arange(0, head_dim // 2)"),  # exponent i, not 2i
    "04-freqs-cis": ("torch.arange(seqlen, dtype=torch.float32)",
                     "torch.arange(1, seqlen + 1, dtype=torch.float32)"),  # positions counted from 1
    "04-rotate-one-head": ("q_complex * freqs_cis", "q_complex * freqs_cis.conj()"),  # turned the wrong way
}

SHORTCUTS = [
    ("04-freqs-cis", "freqs_cis = torch.polar(torch.ones_like(angles), angles)",
     "freqs_cis = plumbing.reference.precompute_freqs_cis(inputs.params, seqlen)"),
]
