"""Notebook 02 (embedding lookup): a learner's mistakes and a shortcut."""

MISTAKES = {
    "02-lookup": ("tok_embeddings_weight[tokens]", "tok_embeddings_weight[tokens - 1]"),  # ids counted from 1
    # the column-vector convention, E^T O^T: the result comes out transposed ([4, 4], so it still runs)
    "02-one-hot": ("toy_one_hot @ toy_table", "toy_table.T @ toy_one_hot.T"),
}

SHORTCUTS = [
    ("02-lookup", "tok_embeddings_weight[tokens]", "F.embedding(tokens, tok_embeddings_weight)"),
]
