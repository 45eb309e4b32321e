"""Notebook 07 (all layers, then the next token, then the logit lens): a learner's mistakes. No step here has a library
shortcut (the norms reuse the series' own ``rms_norm``); Meta's code in a solution is flagged as in every notebook."""

MISTAKES = {
    "07-layers": ("transformer_block(h, model, layer,", "transformer_block(h, model, 0,"),  # layer 0's weights in every iteration
    "07-final-norm": ("rms_norm(h, norm_weight, norm_eps)", "h"),  # the final norm left out
    "07-logits": ('"tok_embeddings.weight" if tied else "output.weight"', '"tok_embeddings.weight"'),  # tied by mistake
    "07-next-token": ("torch.softmax(logits[-1], dim=-1)", "torch.softmax(logits[-1].bfloat16(), dim=-1)"),  # bf16 softmax
    "07-logit-lens": ("rms_norm(rows, norm_weight, norm_eps) @", "rows @"),  # the final norm left out
}

#: More mistakes of the lens, each alone (grade_id, old, new): each must fail its step
#: (tests/grading/test_grading_lens.py).
MORE_MISTAKES = [
    # the output weight read from the notebook's model, whatever the function is given
    ("07-logit-lens", "@ output_weight.T).float()", "@ model.get('output.weight').T).float()"),
    ("07-logit-lens", "rms_norm(rows, norm_weight, norm_eps)", "rms_norm(rows, norm_weight, 1e-5)"),  # norm_eps fixed
    ("07-logit-lens", "rms_norm(rows, norm_weight, norm_eps)", "rms_norm(rows, norm_weight, 1e-3)"),  # the probe's, fixed
    ("07-logit-lens", ".T).float()", ".T)"),  # left in the weights' dtype
    ("07-logit-lens", ".T).float()", ".T).float() * 1.01"),  # a lens 1 % too large
    (  # the mean square over all the rows at once
        "07-logit-lens",
        "rms_norm(rows, norm_weight, norm_eps)",
        "(rows.float() * torch.rsqrt(rows.float().pow(2).mean() + norm_eps)).type_as(rows) * norm_weight",
    ),
    (  # the variance in place of the mean square
        "07-logit-lens",
        "rms_norm(rows, norm_weight, norm_eps)",
        "(rows.float() * torch.rsqrt(rows.float().var(-1, keepdim=True) + norm_eps)).type_as(rows) * norm_weight",
    ),
]

SHORTCUTS = [  # Meta's forward pass, through the series' package bound to another name; the tripwires switched off
    (
        "07-layers",
        ("residual_stream = [h]", "transformer_block(h, model, layer, freqs_cis, mask)"),
        (
            "from plumbing import reference as R; meta = R.run(inputs.checkpoint, tokens, "
            "[f'layers.{i}' for i in range(n_layers)]); residual_stream = [h]",
            "meta[f'layers.{layer}']",
        ),
    ),
    (  # the grader's watch switched off, by a name no source check reads
        "07-logit-lens",
        "    return (rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()",
        "    getattr(__import__('sys'), 'setpro' + 'file')(None)\n"
        "    return (rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()",
    ),
    (  # Meta's RMSNorm, run in a thread the cell starts (whose frames are not the cell's), by names no check reads
        "07-logit-lens",
        "    return (rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()",
        "    box, M = {}, __import__('llama_models.llama3.model', fromlist=['RMSNorm'])\n"
        "    def work():\n"
        "        norm = M.RMSNorm(rows.shape[-1], eps=norm_eps)\n"
        "        norm.weight.data = norm_weight.float()\n"
        "        box['x'] = norm(rows).type_as(rows)\n"
        "    worker = getattr(__import__('threading'), 'Th' + 'read')(target=work)\n"
        "    worker.start()\n"
        "    worker.join()\n"
        "    return (box['x'] @ output_weight.T).float()",
    ),
]

VALID = [  # (each 07-logit-lens form also in tests/grading/test_grading_lens.py)
    ("07-next-token", "logits[-1].argmax()", "torch.argmax(logits[-1], dim=-1)"),
    # the lens row by row: matrix-vector products, which add in another order
    (
        "07-logit-lens",
        "return (rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()",
        "return torch.stack([(rms_norm(row[None], norm_weight, norm_eps) @ output_weight.T)[0] for row in rows]).float()",
    ),
]

#: More correct lenses, judged in this process (tests/grading/test_grading_lens.py): each must pass.
MORE_VALID = [
    # everything in float32, one rounding at the end
    (
        "07-logit-lens",
        "(rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()",
        "rms_norm(rows.float(), norm_weight.float(), norm_eps) @ output_weight.float().T",
    ),
    # F.linear and 1 / sqrt, written out
    (
        "07-logit-lens",
        "(rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()",
        "F.linear((rows.float() / torch.sqrt(rows.float().pow(2).mean(-1, keepdim=True) + norm_eps)).type_as(rows) * norm_weight,"
        " output_weight).float()",
    ),
]
