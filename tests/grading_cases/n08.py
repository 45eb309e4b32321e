"""Notebook 08 (generation): a learner's mistakes, a shortcut, and loops written another way.

``generate`` is the learner's own loop; it takes its choice (``choose``) and its stop set (``stop_tokens``) as
arguments, as Meta's ``Llama3.generate`` takes ``temperature``, ``top_p`` and its tokenizer's ``stop_tokens``: the
grader's probes test the loop with Meta's choice, greedy and seeded, and Meta's stop set. ``sample_top_p`` and
``sampled_choice`` (the temperature, then top-p) are graded by the ids they draw (tests/grading/test_grading_sampling.py).
"""

MISTAKES = {
    # the cache written one row late: the prompt's keys land in rows 1 ... seqlen, row 0 stays zero
    "08-kv-cache": ("cache_k[layer, start_pos : start_pos + seqlen] = xk", "cache_k[layer, start_pos + 1 : start_pos + seqlen + 1] = xk"),
    # the new token placed on the prompt's last position (positions counted as if from 1)
    "08-decode": ("forward(model, [next_token], seqlen, cache)", "forward(model, [next_token], seqlen - 1, cache)"),
    # prev_pos never advanced: every step feeds the whole sequence from position 0 again
    "08-generate": ("\n        prev_pos = cur_pos", ""),
    # the id whose running sum crosses p dropped (the sum including it compared with p)
    "08-top-p": ("mask = probs_sum - probs_sort > p", "mask = probs_sum > p"),
    # the temperature multiplied: Meta divides
    "08-temperature": ("last_logits / temperature", "last_logits * temperature"),
}

#: More mistakes of the loop, each alone (grade_id, old, new): each must fail its step. The first two give the
#: greedy probes' ids (the seeded probes' ids and choose's calls tell them); the next three pass a probe that
#: stops at one of the other stop tokens (each of Meta's three is forced by a probe in turn).
MORE_MISTAKES = [
    # the choice ignored: always the argmax, whatever choose does (the seeded probes sample)
    ("08-generate", "next_token = choose(last_logits)", "next_token = last_logits.argmax().item()"),
    # choose called twice per id: the id kept is another draw than the id tested for a stop
    ("08-generate", "tokens.append(next_token)", "tokens.append(choose(last_logits))"),
    # Meta's first Llama 3 release: <|end_of_text|> and <|eot_id|> only, no <|eom_id|>
    ("08-generate", "if next_token in stop_tokens:", "if next_token in (128001, 128009):"),
    # the stop set without its first token, <|end_of_text|>
    ("08-generate", "if next_token in stop_tokens:", "if next_token in stop_tokens[1:]:"),
    # the stop set without its last token, <|eot_id|>
    ("08-generate", "if next_token in stop_tokens:", "if next_token == stop_tokens[0] or next_token == stop_tokens[1]:"),
    # the stop token dropped: tested before it is kept
    (
        "08-generate",
        "        next_token = choose(last_logits)\n",
        "        next_token = choose(last_logits)\n        if next_token in stop_tokens:\n            break\n",
    ),
    # max_gen_len 0 taken literally: no new ids (Meta: max_seq_len - 1)
    ("08-generate", "max_gen_len is None or max_gen_len == 0 or ", "max_gen_len is None or "),
    # the cache's length ignored: max_gen_len ids even past max_seq_len
    ("08-generate", "min(len(prompt_tokens) + max_gen_len, max_seq_len)", "len(prompt_tokens) + max_gen_len"),
]

#: The graded cell's own stop set edited (above its solution lines, so not an edit of them): the original release's,
#: without <|eom_id|>. The grader's probes give the loop Meta's set; the cell's ``stop_tokens`` is judged too.
STOP_SET_MISTAKES = [[128001, 128009], [128001, 128008, 128009, 128000], "128001, 128008, 128009"]

#: Mistakes of the choice the grader gives the loop (where, old, new): in its ``sampled_choice`` or in Meta's
#: ``sample_top_p`` it compiles (grader/steps/n08_sampling.py): the seeded probes must tell each from Meta's
#: ``generate``.
CHOICE_MISTAKES = [
    ("sampled_choice", "last_logits[None] / temperature", "last_logits[None] * temperature"),  # temperature multiplied
    ("sample_top_p", "mask = probs_sum - probs_sort > p", "mask = probs_sum > p"),  # the token that crosses p dropped
    (
        "sample_top_p",
        "mask = probs_sum - probs_sort > p",  # the token after it kept too
        "mask = torch.nn.functional.pad(probs_sum - probs_sort > p, (1, 0))[..., :-1]",
    ),
    ("sample_top_p", "probs_sort[mask] = 0.0", "pass"),  # top-p ignored: every token may be drawn
    ("sample_top_p", "descending=True", "descending=False"),  # the least probable tokens kept
    ("sample_top_p", "torch.multinomial(probs_sort, num_samples=1)", "probs_sort.argmax(dim=-1, keepdim=True)"),  # argmax
]

SHORTCUTS = [
    # Meta's sample_top_p in the loop, reached through an alias of plumbing.reference: the tripwire sees it
    (
        "08-generate",
        "next_token = choose(last_logits)",
        "meta = vars(plumbing)['refer' + 'ence'].meta_generation_code()\n"
        "        next_token = int(meta.sample_top_p(torch.softmax(last_logits[None], dim=-1), 0.9))",
    ),
]

VALID = [
    # Meta's rule for max_gen_len in one test: None and 0 are both false
    (
        "08-generate",
        "if max_gen_len is None or max_gen_len == 0 or max_gen_len >= max_seq_len:",
        "if not max_gen_len or max_gen_len >= max_seq_len:",
    ),
    # every token from prev_pos: the same tokens, as len(tokens) is cur_pos
    ("08-generate", "step(tokens[prev_pos:cur_pos], prev_pos)", "step(tokens[prev_pos:], prev_pos)"),
    # the stop rule as Meta writes it, torch.isin, on the stop set in another order
    (
        "08-generate",
        "if next_token in stop_tokens:",
        "if torch.isin(torch.tensor(next_token), torch.tensor(sorted(stop_tokens, reverse=True))):",
    ),
    ("08-generate", "next_token = choose(last_logits)", "next_token = int(choose(last_logits))"),
]

#: More mistakes of sample_top_p (old, new) in its solution lines: each must fail 08-top-p.
TOP_P_MISTAKES = [
    ("mask = probs_sum - probs_sort > p", "mask = probs_sum > p"),
    # one id more kept: the mask shifted by one
    ("mask = probs_sum - probs_sort > p", "mask = torch.cat([torch.zeros(1, dtype=torch.bool), (probs_sum - probs_sort > p)[:-1]])"),
    ("probs_sort[mask] = 0.0", "pass"),  # top-p ignored: every id may be drawn
    ("descending=True", "descending=False"),  # the least probable ids kept
    ("return probs_idx[next_token].item()", "return next_token.item()"),  # the position in the sorted row, not the id
    ("torch.multinomial(probs_sort, num_samples=1)", "probs_sort.argmax()"),  # no draw: always the most probable
]

#: sample_top_p written another way (old, new): each must pass 08-top-p.
TOP_P_VALID = [
    ("    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))\n", ""),  # torch.multinomial normalises by itself
    ("torch.multinomial(probs_sort, num_samples=1)", "torch.distributions.Categorical(probs=probs_sort).sample()"),
    ("return probs_idx[next_token].item()", "return probs_idx[next_token]"),  # a one-element tensor
]

#: More mistakes of sampled_choice (old, new): each must fail 08-temperature.
TEMPERATURE_MISTAKES = [
    ("last_logits / temperature", "last_logits * temperature"),
    ("last_logits / temperature", "last_logits"),  # no temperature
    ("torch.softmax(last_logits / temperature, dim=-1)", "torch.softmax(last_logits, dim=-1) / temperature"),
    ("sample_top_p(probs, top_p)", "sample_top_p(probs, 0.9)"),  # top_p ignored
]

#: sampled_choice written another way (old, new): each must pass 08-temperature.
TEMPERATURE_VALID = [
    (
        "torch.softmax(last_logits / temperature, dim=-1)",
        "torch.exp(last_logits / temperature) / torch.exp(last_logits / temperature).sum()",
    ),
    ("last_logits / temperature", "last_logits * (1 / temperature)"),
]
