"""Notebook 07 (all layers, then the next token): a learner's mistakes. No step here has a library shortcut (the
norms reuse the series' own ``rms_norm``); Meta's code in a solution is flagged as in every notebook."""

MISTAKES = {
    "07-layers": ("transformer_block(h, model, layer,", "transformer_block(h, model, 0,"),  # layer 0's weights in every iteration
    "07-final-norm": ("rms_norm(h, norm_weight, norm_eps)", "h"),  # the final norm left out
    "07-logits": ('"tok_embeddings.weight" if tied else "output.weight"', '"tok_embeddings.weight"'),  # tied by mistake
    "07-next-token": ("torch.softmax(logits[-1], dim=-1)", "torch.softmax(logits[-1].bfloat16(), dim=-1)"),  # bf16 softmax
}

SHORTCUTS = [  # Meta's forward pass, through the series' package bound to another name
    (
        "07-layers",
        ("residual_stream = [h]", "transformer_block(h, model, layer, freqs_cis, mask)"),
        (
            "from plumbing import reference as R; meta = R.run(inputs.checkpoint, tokens, "
            "[f'layers.{i}' for i in range(n_layers)]); residual_stream = [h]",
            "meta[f'layers.{layer}']",
        ),
    ),
]

VALID = [
    ("07-next-token", "logits[-1].argmax()", "torch.argmax(logits[-1], dim=-1)"),
]
