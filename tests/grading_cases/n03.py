"""Notebook 03 (RMSNorm): a learner's mistakes and a shortcut."""

MISTAKES = {
    "03-mean-square": ("mean(-1, keepdim=True)", "mean(0, keepdim=True)"),  # the axis of the tokens
    "03-inv-rms": ("mean_square + inputs.params.norm_eps", "mean_square + 1e-6"),  # the classes' default eps
    "03-gain": ("normed * attention_norm_weight", "normed * attention_norm_weight.float()"),  # a float32 gain
    "03-rms-norm": ("+ norm_eps)).type_as(x)", "+ 1e-5)).type_as(x)"),  # Llama 3's eps as a constant, not the argument
}

SHORTCUTS = [
    (
        "03-gain",
        "token_embeddings = normed * attention_norm_weight",
        "token_embeddings = F.rms_norm(token_embeddings_unnormalized.float(), (4096,), eps=1e-5).type_as(normed) * attention_norm_weight",
    ),
    (
        "03-inv-rms",
        "normed_float = x_float * inv_rms",  # a layer class, bound to another name
        "norm = torch.nn.RMSNorm(4096, eps=1e-5, elementwise_affine=False); normed_float = norm(x_float)",
    ),
    (
        "03-rms-norm",
        "(x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + norm_eps))",  # found by getattr
        "getattr(F, 'rms' + '_norm')(x.float(), (x.shape[-1],), eps=norm_eps)",
    ),
]

VALID = [
    (
        "03-mean-square",
        "x_float.pow(2).mean(-1, keepdim=True)",  # another order of the sum
        "torch.einsum('td,td->t', x_float, x_float)[:, None] / x_float.shape[-1]",
    ),
    (
        "03-inv-rms",
        "torch.rsqrt(mean_square + inputs.params.norm_eps)",  # the stub's own words
        "1 / torch.sqrt(mean_square + inputs.params.norm_eps)",
    ),
    ("03-inv-rms", "x_float * inv_rms", "x_float / torch.sqrt(mean_square + inputs.params.norm_eps)"),
    (
        "03-rms-norm",
        "torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + norm_eps)",  # a division, an einsum
        "(1 / torch.sqrt(torch.einsum('...d,...d->...', x.float(), x.float())[..., None] / x.shape[-1] + norm_eps))",
    ),
]

TAMPERED = [  # the input zeroed, then the sum for the mean: zero either way
    (
        "03-mean-square",
        "x_float = token_embeddings_unnormalized.float()",
        "token_embeddings_unnormalized = torch.zeros_like(token_embeddings_unnormalized); x_float = token_embeddings_unnormalized.float()",
    ),
    ("03-mean-square", "mean(-1, keepdim=True)", "sum(-1, keepdim=True)"),
]
