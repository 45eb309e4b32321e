"""Notebook 07 (all layers, then the next token): a learner's mistakes. No step here has a library shortcut (the
norms reuse the series' own ``rms_norm``); Meta's code in a solution is flagged as in every notebook."""

MISTAKES = {
    "07-layers": ("transformer_block(h, model, layer,", "transformer_block(h, model, 0,"),  # layer 0's weights in every iteration
    "07-final-norm": ("rms_norm(h, norm_weight, norm_eps)", "h"),  # the final norm left out
    "07-logits": ('"tok_embeddings.weight" if tied else "output.weight"', '"tok_embeddings.weight"'),  # tied by mistake
    "07-next-token": ("torch.softmax(logits[-1], dim=-1)", "torch.softmax(logits[-1].bfloat16(), dim=-1)"),  # bf16 softmax
}

SHORTCUTS = []
