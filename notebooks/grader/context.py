"""What a graded step's check may use besides the student's values (:class:`Context`): the grader's checkpoint,
the default prompt's token ids and Meta's modules run on them. Used by :func:`grader.grading.grade`."""

from __future__ import annotations


class Context:
    """What a step's check may use besides the student's values: the grader's checkpoint and Meta's code."""

    def __init__(self, checkpoint):
        self.checkpoint = checkpoint
        self.params = checkpoint.params
        self._tokens, self._outputs = None, {}

    def weight(self, name: str):
        """A tensor of the checkpoint by Meta's name (``"layers.0.attention.wq.weight"``)."""
        return self.checkpoint.get(name)

    @property
    def tokens(self) -> list[int]:
        """The default prompt's token ids, as the notebooks' setup gives them (:func:`plumbing.inputs.setup`)."""
        if self._tokens is None:
            from plumbing.inputs import DEFAULT_PROMPT
            from plumbing.tokenizer import tokenizer_path
            from plumbing.tokenizer_child import tokenize_out_of_process

            self._tokens = tokenize_out_of_process(tokenizer_path(self.checkpoint.source), DEFAULT_PROMPT)[0]
        return self._tokens

    @property
    def token_ids(self):
        """:attr:`tokens` as the notebooks hold them: [seqlen] int64."""
        import torch

        return torch.tensor(self.tokens, dtype=torch.int64)

    def meta_output(self, name: str, *more: str):
        """What Meta's submodule ``name`` (``"layers.0.attention_norm"``) returns on :attr:`tokens`, without the batch
        axis (:func:`plumbing.reference.run`; the embedding rows for ``"tok_embeddings"``); with ``more`` names, a
        tuple of each's, from one forward pass."""
        import torch

        from plumbing.reference import run

        names = (name, *more)
        missing = [n for n in names if n not in self._outputs and n != "tok_embeddings"]
        if missing:
            with torch.inference_mode():
                self._outputs.update(run(self.checkpoint, self.tokens, missing))
        rows = self.weight("tok_embeddings.weight")[torch.as_tensor(self.tokens)]  # Meta's nn.Embedding: the rows
        found = tuple(rows if n == "tok_embeddings" else self._outputs[n] for n in names)
        return found if more else found[0]

    @property
    def meta(self):
        """Meta's ``llama_models/llama3/model.py`` (:func:`plumbing.reference.meta_model_code`)."""
        from plumbing.reference import meta_model_code

        return meta_model_code()
