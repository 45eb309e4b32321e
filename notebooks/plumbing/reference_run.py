"""Meta's whole ``Transformer`` on a checkpoint: :func:`transformer` builds it, :func:`run` records its submodules.

:func:`run` records what Meta's submodules return during ``Transformer.forward`` with forward hooks, so a notebook
can compare an intermediate tensor (``layers.0.feed_forward.w1``'s output is the gate) with Meta's. Part of
:mod:`plumbing.reference`, which re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .errors import Llama3Error
from .reference_code import meta_model_code
from .reference_modules import assign_weights, model_args, precompute_freqs_cis

__all__ = ["transformer", "run"]


class _TiedOutput(Mapping):
    """``weights`` with ``output.weight`` read as ``tok_embeddings.weight`` when the checkpoint has none (tied)."""

    def __init__(self, weights):
        self.weights = weights
        self.names = list(weights.keys())

    def __getitem__(self, name):
        if name == "output.weight" and name not in self.names:
            return self.weights.get("tok_embeddings.weight")
        return self.weights.get(name)

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)


def transformer(checkpoint, max_seq_len: int = 64, n_layers: int | None = None):
    """Meta's ``Transformer``: every tensor from the checkpoint, ``freqs_cis`` by :func:`precompute_freqs_cis`.

    Call it as Meta's ``generate`` does: ``model(tokens[None], start_pos)`` -> logits [1, seqlen, vocab_size]
    float32; each call writes its keys and values into the layers' caches at ``start_pos``.
    ``n_layers`` builds only the first layers (the rest of the forward pass is unchanged); then ``norm`` and
    ``output`` are left unassigned when the checkpoint lacks them (a partial copy), and a forward pass that
    reaches them fails.
    """
    M = meta_model_code()
    args = model_args(checkpoint.params, max_seq_len, n_layers)
    weights = _TiedOutput(checkpoint)
    import torch

    # Transformer.__init__ computes freqs_cis, replaced below by the checkpoint's own; on the meta device that
    # arithmetic runs through torch._refs, whose first use imports torch._dynamo (seconds, in every fresh kernel).
    original, M.precompute_freqs_cis = M.precompute_freqs_cis, lambda *args, **kwargs: None
    try:
        with torch.device("meta"):
            module = M.Transformer(args)
    finally:
        M.precompute_freqs_cis = original
    names = list(module.state_dict().keys())
    if n_layers is not None:  # the first layers only (plumbing.reference.run stops there): norm and output may be absent
        present = set(weights)
        names = [n for n in names if n.startswith(("layers.", "tok_embeddings.")) or n in present]
    assign_weights(module, weights, "", names)
    module.freqs_cis = precompute_freqs_cis(checkpoint.params, 2 * max_seq_len)
    return module


class _Done(Exception):
    """Raised by the last hook :func:`run` needs: the rest of the forward pass is not computed."""


def run(checkpoint, tokens, outputs: Iterable[str], start_pos: int = 0, model=None) -> dict:
    """Run Meta's ``Transformer.forward`` on ``tokens`` and return what the named submodules returned.

    Args:
        checkpoint: an opened :class:`~plumbing.checkpoint.Checkpoint` (or a mapping of Meta's names).
        tokens: token ids, a list or a 1-D int64 tensor (a batch of one is added).
        outputs: names of Meta's submodules, as in ``Transformer.named_modules()``: ``"layers.0.attention_norm"``,
            ``"layers.0.attention.wq"`` (the queries before RoPE), ``"layers.0.attention"``,
            ``"layers.0.feed_forward.w1"`` (the gate), ``"layers.0"`` (the block), ``"norm"``, ``"output"``.
        start_pos: the position of the first token (Meta's ``start_pos``).
        model: a model from :func:`transformer` to reuse (its caches carry over); default: one built with just the
            layers the outputs need.

    Returns:
        ``{name: tensor}``, each the submodule's output without the batch axis (bf16, as Meta computes it). The
        forward pass stops once every requested output is recorded.

    Raises:
        Llama3Error: a name that is not one of Meta's submodules.
    """
    import torch

    wanted = list(outputs)
    if model is None:
        layers = [int(n.split(".")[1]) for n in wanted if n.startswith("layers.")]
        whole = any(not n.startswith("layers.") for n in wanted)
        n_layers = None if whole or not layers else max(layers) + 1
        model = transformer(checkpoint, max_seq_len=max(64, start_pos + len(tokens)), n_layers=n_layers)
    modules = dict(model.named_modules())
    unknown = [n for n in wanted if n not in modules or not n]
    if unknown:
        raise Llama3Error(
            f"not a submodule of Meta's Transformer: {', '.join(map(repr, unknown))} "
            "(names as in Transformer.named_modules(), e.g. 'layers.0.attention')"
        )
    seen = {}

    def record(name):
        def hook(_module, _inputs, output):
            seen[name] = output[0]
            if len(seen) == len(wanted):
                raise _Done

        return hook

    handles = [modules[n].register_forward_hook(record(n)) for n in wanted]
    try:
        model(torch.as_tensor(tokens, dtype=torch.int64)[None], start_pos)
    except _Done:
        pass
    finally:
        for h in handles:
            h.remove()
    return {n: seen[n] for n in wanted}
