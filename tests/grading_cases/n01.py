"""Notebook 01 (tokenization): a learner's mistakes and shortcuts."""

MISTAKES = {
    # the line number (1-based, as the table of section 2 prints it) taken for the rank
    "01-mergeable-ranks": ("= int(rank_text)", "= int(rank_text) + 1"),
    # the leftmost mergeable pair instead of the pair of lowest rank
    "01-bpe-merge": ("rank, j = min(candidates)", "rank, j = candidates[0]"),
    # raw tiktoken's allowed_special="all": a user's "<|eot_id|>" becomes the real end-of-turn token
    "01-encode": ("allowed_special=set()", 'allowed_special="all"'),
}

SHORTCUTS = [
    (
        "01-mergeable-ranks",
        "mergeable_ranks = {}\nfor line in lines:\n    token_b64, rank_text = line.split()\n"
        "    mergeable_ranks[base64.b64decode(token_b64)] = int(rank_text)",
        "mergeable_ranks = plumbing.read_bpe_ranks(tokenizer_model)",
    ),
    (
        "01-bpe-merge",
        "    if lookup_whole and piece in ranks:    # tiktoken's rule: the whole piece is a token\n        return [ranks[piece]]",
        "    if lookup_whole:    # tiktoken's own merges\n"
        '        encoding = tiktoken.Encoding("x", pat_str=plumbing.PAT_STR, mergeable_ranks=ranks, special_tokens={})\n'
        "        return encoding._encode_single_piece(piece)",
    ),
]
