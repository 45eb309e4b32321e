"""Notebook 03 (RMSNorm): a learner's mistakes and a shortcut."""

MISTAKES = {
    "03-mean-square": ("mean(-1, keepdim=True)", "mean(0, keepdim=True)"),  # the axis of the tokens
    "03-inv-rms": ("mean_square + inputs.params.norm_eps", "mean_square + 1e-6"),  # the classes' default eps
    "03-gain": ("normed * attention_norm_weight", "normed * attention_norm_weight.float()"),  # a float32 gain
}

SHORTCUTS = [
    ("03-gain", "token_embeddings = normed * attention_norm_weight",
     "token_embeddings = F.rms_norm(token_embeddings_unnormalized.float(), (4096,), eps=1e-5).type_as(normed)"
     " * attention_norm_weight"),
]
