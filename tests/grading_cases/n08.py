"""Notebook 08 (generation): a learner's mistakes. No step here has a library shortcut (``generate`` is the
learner's own loop); Meta's code in a solution is flagged as in every notebook."""

MISTAKES = {
    # the cache written one row late: the prompt's keys land in rows 1 ... seqlen, row 0 stays zero
    "08-kv-cache": ("cache_k[layer, start_pos : start_pos + seqlen] = xk",
                    "cache_k[layer, start_pos + 1 : start_pos + seqlen + 1] = xk"),
    # the new token placed on the prompt's last position (positions counted as if from 1)
    "08-decode": ("forward(model, [next_token], seqlen, cache)", "forward(model, [next_token], seqlen - 1, cache)"),
    # prev_pos never advanced: every step feeds the whole sequence from position 0 again
    "08-generate": ("\n        prev_pos = cur_pos", ""),
}

SHORTCUTS = []
