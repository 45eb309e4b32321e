"""Hints for the mistakes made at each graded step: the "hint" column of docs/instructor.md §6, word for word.

``HINTS[grade_id]`` holds the hints of the §6 rows whose mistake is made in that step's solution lines (a ``|``
that the table escapes as ``\\|`` is a plain ``|`` here). A row whose mistake no graded step can make (it is made
in a cell the learner does not write, or in a deep dive) is left out. :data:`MATCHES` gives the hints that belong
to a mistake the grader's message names; :func:`grader.gradebook.hints_for` shows, for a failed step, the hints
whose message matched, or all the step's hints when none did; for a shortcut, :data:`SHORTCUT` (§6's opening).
"""

from __future__ import annotations

import re

#: The hint for a step taken by a shortcut (any step): docs/instructor.md §6, word for word.
SHORTCUT = '"Write the step by hand: the library function is what you are rebuilding"'

HINTS: dict[str, tuple[str, ...]] = {
    "01-bpe-merge": (  # textbook merge loop without tiktoken's whole-piece lookup
        '"Does tiktoken look the whole piece up first?" (deep dive "Tokens the merge loop alone never builds")',
    ),
    "01-encode": (
        # <|begin_of_text|> left out
        '"What does Meta\'s `encode` put first?" (deep dive "Forgetting `<|begin_of_text|>`")',
        # allowed_special="all" on a user's text
        '"Should a user be able to end the turn?" (deep dive "Letting a user\'s text become a special token")',
    ),
    "02-lookup": (
        # nn.Embedding, then weight.data.copy_(...)
        '"Can the layer use the table you already have?" (deep dive "Building `nn.Embedding`, then copying the weights in")',
        # expecting [batch, seq_len, dim] from 1-D ids
        '"The result\'s shape is the ids\' shape followed by `dim`" (deep dive "Batches")',
    ),
    "02-one-hot": (  # toy_x read from toy_table by index
        '"Does `toy_x` change when `toy_one_hot` does?"',
    ),
    "03-mean-square": (
        # the mean over the tokens (axis 0)
        '"Does one token\'s result depend on its neighbours?" (section 3)',
        # everything in bf16 (no .float())
        '"In which dtype does Meta square and average?" (deep dive "Which dtype Meta runs")',
        # mean without keepdim=True, or the sum instead of the mean
        'deep dive "Common mistakes in published RMSNorm code"',
    ),
    "03-inv-rms": (  # eps outside the square root
        '"Where does Meta add `eps`: to the mean or to the root?" (section 2)',
    ),
    "03-gain": (
        # the gain of another norm
        '"Which layer\'s norm comes before attention?"',
        # the gain applied in float32
        '"Follow Meta\'s order: divide, round to bf16, then the gain" (section 4)',
    ),
    "04-projections": ('"Which layer does this notebook compute?"',),  # layer 1's wq read for layer 0
    "04-frequencies": ('"Read `rope_theta` from `params.json`"',),  # Llama 2's rope_theta
    "04-freqs-cis": ('"Which position is never rotated?"',),  # positions counted from 1
    "04-rotate-one-head": (  # pairs j and j + head_dim/2 (Hugging Face's layout)
        '"Which numbers form a pair in Meta\'s layout?" (deep dive "Hugging Face\'s layout")',
    ),
    "04-rotate-all-heads": (  # pairs j and j + head_dim/2 (Hugging Face's layout)
        '"Which numbers form a pair in Meta\'s layout?" (deep dive "Hugging Face\'s layout")',
    ),
    "05-repeat-kv": ('"Which key head does query head 5 use?" (section 4)',),  # heads tiled, not repeated in place
    "05-scores": (
        '"What is the scale in the formula?" (section 5)',  # divided by head_dim, not its square root
        '"How many times is the score divided?"',  # scaled a second time
    ),
    "05-causal-mask": ('"May a token look at itself?"',),  # the mask also hides the diagonal
    "05-softmax": ('"Which weights must sum to 1?"',),  # the softmax over the query axis
    "05-output-projection": (  # heads concatenated without the transpose
        '"Which axis comes first before `view(seqlen, -1)`?" (section 9)',
    ),
    "06-ffn-norm": (
        '"Which norm comes before the feed-forward network?"',  # attention_norm's gain read for ffn_norm
        '"Is the input `h` or `attention_output`?" (errata 26)',  # the network run on attention's change only
    ),
    "06-gate-up": ('"Which matrix goes into SiLU?" (deep dive "`w1` and `w3` swapped")',),  # w1 and w3 swapped
    "06-layer-output": ('"What is added back to `h`?" (section 9)',),  # the residual connection left out
    "07-layers": ('"Does the block read the layer it is given?" (errata 28)',),  # layer 0's weights in every iteration
    "07-final-norm": ('"What comes between the last layer and `output`?" (section 4)',),  # the final norm left out
    "07-next-token": ('"Which row predicts the next token?" (section 6)',),  # the first row of the logits
    "07-logit-lens": ('"What comes between a row of the residual stream and `output`?" (section 7)',),  # the lens without the norm
    "08-kv-cache": ('"At which row does position `start_pos` go?"',),  # the cache written one row late
    "08-decode": ('"Which rows of `freqs_cis` does a decode step need?"',),  # the new token at the wrong position
    "08-generate": (
        '"Is each new id the one `choose` returned, once per id?" (section 5)',  # the choice ignored, or drawn twice
        '"Does Meta\'s `generate` return the stop token it reached?" (section 5)',  # the stop token dropped
        '"Where does Meta\'s `generate` stop?" (section 5; deep dive "Meta\'s stopping rules")',  # no stop rule
    ),
    "08-top-p": ('"Is the token that crosses p kept?" (section 6)',),  # top-p that drops the token whose running sum crosses p
    "08-temperature": ('"Should a low temperature sharpen or flatten?" (section 6)',),  # the temperature multiplied
}

#: Hint -> a pattern of the grader's message for the mistake the hint is about (``re.search``).
MATCHES: dict[str, re.Pattern] = {
    HINTS["08-generate"][0]: re.compile(r"choose was called"),
    HINTS["08-generate"][2]: re.compile(r"stop_tokens is "),
}
