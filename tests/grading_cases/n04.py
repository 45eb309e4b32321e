"""Notebook 04 (RoPE): a learner's mistakes, and Meta's code as a shortcut."""

MISTAKES = {
    "04-projections": ("token_embeddings @ wq.T", "token_embeddings @ wq"),  # nn.Linear's transpose forgotten
    "04-frequencies": ("torch.arange(0, head_dim, 2)", "torch.arange(0, head_dim // 2)"),  # exponent i, not 2i
    "04-freqs-cis": (
        "torch.arange(seqlen, dtype=torch.float32)",
        "torch.arange(1, seqlen + 1, dtype=torch.float32)",
    ),  # positions counted from 1
    "04-rotate-one-head": ("q_complex * freqs_cis", "q_complex * freqs_cis.conj()"),  # turned the wrong way
    "04-rotate-all-heads": (
        "x.float().reshape(*x.shape[:-1], -1, 2)",  # pairs j and j + head_dim/2 (HF's layout)
        "x.float().reshape(*x.shape[:-1], 2, -1).transpose(-1, -2).contiguous()",
    ),
}

SHORTCUTS = [
    (
        "04-freqs-cis",
        "freqs_cis = torch.polar(torch.ones_like(angles), angles)",
        "freqs_cis = plumbing.reference.precompute_freqs_cis(inputs.params, seqlen)",
    ),
]

VALID = [
    (
        "04-frequencies",
        "1.0 / (theta ** (torch.arange(0, head_dim, 2)[: (head_dim // 2)].float() / head_dim))",
        "theta ** (-torch.arange(0, head_dim, 2)[: (head_dim // 2)].float() / head_dim)",
    ),  # no reciprocal
    ("04-freqs-cis", "torch.outer(t, freqs)", "t[:, None] * freqs"),
    ("04-freqs-cis", "torch.polar(torch.ones_like(angles), angles)", "torch.complex(torch.cos(angles), torch.sin(angles))"),
    (
        "04-rotate-one-head",
        "q_complex * freqs_cis",  # the rotation in real pairs
        "torch.complex(q_complex.real * freqs_cis.real - q_complex.imag * freqs_cis.imag, "
        "q_complex.real * freqs_cis.imag + q_complex.imag * freqs_cis.real)",
    ),
]

TAMPERED = [  # the tokens reversed before the projections: consistent, but not the prompt's order
    ("04-projections", "xq = (token_embeddings @ wq.T)", "token_embeddings = token_embeddings.flip(0); xq = (token_embeddings @ wq.T)"),
]
