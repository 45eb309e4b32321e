"""Notebook 02 (embedding lookup): a learner's mistakes, a shortcut, and correct work in other forms."""

MISTAKES = {
    "02-lookup": ("tok_embeddings_weight[tokens]", "tok_embeddings_weight[tokens - 1]"),  # ids counted from 1
    # the column-vector convention, E^T O^T: the result comes out transposed ([4, 4], so it still runs)
    "02-one-hot": ("toy_one_hot @ toy_table", "toy_table.T @ toy_one_hot.T"),
}

SHORTCUTS = [
    ("02-lookup", "tok_embeddings_weight[tokens]", "F.embedding(tokens, tok_embeddings_weight)"),
]

VALID = [  # the one-hot rows by indexing an identity matrix; the product as a broadcast sum
    ("02-one-hot", "F.one_hot(toy_tokens, num_classes=6).float()", "torch.eye(6)[toy_tokens]"),
    ("02-one-hot", "toy_one_hot @ toy_table", "(toy_one_hot[:, :, None] * toy_table).sum(1)"),
]

#: toy_x read from the table by index: the right values, but not the product the step asks for
LOOKUP_FOR_THE_PRODUCT = ("02-one-hot", "toy_one_hot @ toy_table", "toy_table[toy_tokens]")
