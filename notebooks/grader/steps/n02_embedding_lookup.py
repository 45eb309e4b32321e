"""Notebook 02's graded steps: the embedding lookup of Meta's ``Transformer.forward`` (llama_models/llama3/model.py:
``h = self.tok_embeddings(tokens)``, a fairscale ``VocabParallelEmbedding``, which at model-parallel world size 1 is
``nn.Embedding``, whose forward is ``F.embedding(tokens, weight)``), checked with ``F.embedding`` on the student's
own ids: on the grader's ``tok_embeddings.weight`` for the lookup, on the notebook's constructed table for the
one-hot product (exact: each output number is 1 × one entry of the table plus exact zeros, so bitwise).

The full-size sparse product (cell f28d2264) is not graded: its visible check compares it with the lookup's result
in the same cell, so a mistaken lookup would make that cell raise and cost the next step too.
"""

from __future__ import annotations

from ..grading import Step, compare

SHORTCUTS = ("embedding", "Embedding", "from_pretrained")  # F.embedding, nn.Embedding(.from_pretrained)


def lookup(v, ctx):
    import torch.nn.functional as F

    expected = F.embedding(v["tokens"], ctx.weight("tok_embeddings.weight"))  # Meta: self.tok_embeddings(tokens)
    return compare("token_embeddings_unnormalized", v["token_embeddings_unnormalized"], expected)


def follows_one_hot(namespace, source: str):
    """In the student's kernel, after the graded cell ``source`` ran: its statements run again on a copy of
    ``namespace``, ``toy_one_hot`` replaced by weights that are not one-hot right after the statement that assigns
    it, up to the statement that then assigns ``toy_x``. Returns (those weights, that ``toy_x``), or ``None`` when
    the cell cannot be probed so. A product follows the weights; rows read from ``toy_table`` by index do not."""
    import ast

    import torch

    scope, weights = dict(namespace), None
    try:
        for node in ast.parse(source).body:
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            exec(compile(ast.Module([node], []), "<probe>", "exec"), scope)  # noqa: S102 (the student's own code)
            if weights is not None and "toy_x" in names:
                return weights, scope["toy_x"]
            one_hot = scope.get("toy_one_hot")
            if "toy_one_hot" in names and isinstance(one_hot, torch.Tensor) and one_hot.dim() == 2:
                # each row's 1 spread over three ids (1/2, 1/4, 1/4): exact in any float dtype and any order of sums
                weights = 0.5 * one_hot + 0.25 * one_hot.roll(1, dims=1) + 0.25 * one_hot.roll(2, dims=1)
                scope["toy_one_hot"] = weights
    except Exception:  # noqa: BLE001 (a cell that runs only as written is judged on its values alone)
        return None
    return None


def one_hot_product(v, ctx):
    import torch.nn.functional as F

    tokens, table = v["toy_tokens"], v["toy_table"]
    one_hot = F.one_hot(tokens, num_classes=table.shape[0]).to(table.dtype)  # o_t: a 1 at index t
    problems = compare("toy_one_hot", v["toy_one_hot"], one_hot) + compare(
        "toy_x", v["toy_x"], F.embedding(tokens, table)
    )  # O E = the rows: the lookup, bitwise
    if not problems and v.get("probe") is not None:
        weights, x = v["probe"]
        if compare("toy_x", x, weights @ table):
            problems.append(
                "toy_x does not follow toy_one_hot: with other weights in toy_one_hot (each row's 1 "
                "spread over three ids), toy_x stays rows of toy_table. Compute it as the product "
                "toy_one_hot @ toy_table, not by indexing the table."
            )
    return problems


STEPS = [
    Step(
        "02-lookup",
        "6bceaa50",
        "one row of the table per token",
        "token_embeddings_unnormalized: for each position m, row tokens[m] of tok_embeddings_weight;\n"
        "shape [seqlen, dim], dtype bf16 (the table's).",
        "{'tokens': tokens, 'token_embeddings_unnormalized': token_embeddings_unnormalized}",
        lookup,
        shortcuts=SHORTCUTS,
        inputs=("tokens",),
        given=lambda ctx: {"tokens": ctx.token_ids},
    ),
    Step(
        "02-one-hot",
        "166384c0",
        "the lookup as a one-hot product",
        "toy_one_hot: the one-hot rows of toy_tokens over the 6 ids of toy_table, float32, shape [4, 6].\n"
        "toy_x: toy_one_hot times toy_table as a matrix product, shape [4, 4].",
        "{'toy_tokens': toy_tokens, 'toy_table': toy_table, 'toy_one_hot': toy_one_hot, 'toy_x': toy_x, 'probe': "
        "__import__('grader.steps.n02_embedding_lookup', fromlist=['_']).follows_one_hot(globals(), _i)}",
        one_hot_product,
        shortcuts=SHORTCUTS,
    ),
]
