"""Notebook 08's graded steps: generation as Meta's ``Llama3.generate`` does it (llama_models/llama3/generation.py),
around ``Transformer.forward`` with the key/value caches of ``Attention`` (llama_models/llama3/model.py).

- the key/value cache: the student's ``forward`` (the notebook's, calling the student's ``attention``) at
  ``start_pos`` 0 on the prompt, then at ``start_pos`` ``seqlen`` on one token, against Meta's ``Transformer``
  (:func:`plumbing.reference.transformer`) called the same way: the logits of both calls, and every layer's
  ``cache_k`` and ``cache_v`` after the prompt;
- the decode step: ``Llama3.generate``'s greedy choice ``torch.argmax(logits[:, -1], dim=-1)`` on the student's own
  prefill logits, and its call ``self.model.forward(tokens[:, prev_pos:cur_pos], prev_pos)`` for the new token:
  the student's ``step_logits`` must be the student's own ``forward`` on that one token at position ``seqlen``
  (their ``forward`` and ``attention`` are the previous step's, so a mistake there costs that step only);
- the loop: the student's ``generate`` and Meta's ``Llama3.generate`` (:func:`plumbing.reference.generate`) around
  the same constructed model, whose logits are a fixed function of the tokens and positions it is fed, for each
  of :data:`PROBES`: the same calls of the model (``self.model.forward(tokens[:, prev_pos:cur_pos], prev_pos)``),
  the same logits chosen from, one call of ``choose`` per new id on the last row of the model's output, and the
  same ids. Meta's rules, each probed:

  - ``max_gen_len`` None or 0 (or at least ``max_seq_len``) means ``max_seq_len - 1``, and
    ``total_len = min(max_gen_len + max_prompt_len, params.max_seq_len)`` bounds the positions;
  - the choice: ``torch.argmax(logits[:, -1], dim=-1)`` for ``temperature`` 0; for ``temperature > 0``,
    ``torch.softmax(logits[:, -1] / temperature, dim=-1)`` then ``sample_top_p(probs, top_p)``, which draws with
    ``torch.multinomial`` after ``torch.manual_seed(seed)`` (``Llama3.build``). The grader's ``choose`` does the
    same for the one row (:func:`sampled_choice`, Meta's lines) and the seed is set just before the student's
    ``generate``, as Meta's is just before its own: a loop that does not take each id from ``choose``, or calls it
    more than once per id, draws other ids. The sampled rows give five ids clear margins (no near-ties: the student's run
    and Meta's draw alike on any CPU), chosen so that the temperature divided or multiplied, and top-p keeping one token more or
    less, draw other ids;
  - the stop rule: ``stop_tokens = torch.tensor(self.tokenizer.stop_tokens)`` (Meta's ``Tokenizer``:
    ``<|end_of_text|>`` 128001, ``<|eom_id|>`` 128008, ``<|eot_id|>`` 128009) and ``torch.isin(next_token,
    stop_tokens)``: the stop token is yielded, then the loop ends. Each stop token is forced, in turn, by a probe;
    the probes give the loop Meta's set, so the notebook's own ``stop_tokens`` (set in the graded cell) is compared
    with the checkpoint's ``Tokenizer.stop_tokens`` too.

- top-p: the student's ``sample_top_p(probs, p)`` drawn :data:`DRAWS` times on each of :data:`TOP_P_CASES`, seeded:
  the ids drawn must be those Meta's ``sample_top_p`` keeps (``mask = probs_sum - probs_sort > p``), each about as
  often as its probability among them (:data:`SHARE_TOLERANCE`). The draws, not the code, are judged: another
  correct way to draw (``torch.distributions.Categorical``, no renormalisation before ``torch.multinomial``) passes.
- temperature: the student's ``sampled_choice(last_logits)`` on each of :data:`TEMPERATURE_CASES`, with the notebook's
  ``temperature`` and ``top_p`` set to the case's and Meta's ``sample_top_p`` (:func:`top_p_choice`) in place of the
  student's, so that a mistake in top-p costs that step only: the ids drawn must be those of
  ``torch.softmax(logits[:, -1] / temperature, dim=-1)`` then ``sample_top_p(probs, top_p)``.

The greedy and sampled runs on the model and Meta's checks of them (minutes on a CPU) are needed by no step: the
series marks them (``llama3.grading = "skip"``) and the grader leaves them out.
"""

from __future__ import annotations

from typing import NamedTuple

from ..grading import Step, compare
from .n08_sampling import meta_sample_top_p, sampled_choice, temperature, top_p

#: The constructed model's vocabulary: Meta's, so that the stop tokens (128001, 128008, 128009) are ids of it.
VOCAB = 128256
#: Meta's ``Tokenizer.stop_tokens``, given to the student's ``generate`` as the notebook gives it Llama 3's.
STOP_TOKENS = [128001, 128008, 128009]
#: The logits of every id a row does not favour: far enough below that the softmax gives them exactly 0.
FAR = -1e4
#: The logit of a stop token where a probe forces it: every other id of that row is at :data:`FAR`, so that even a
#: draw takes it (probability exactly 1).
FORCED = 10.0


class Probe(NamedTuple):
    """One run of ``generate`` on the constructed model (:func:`toy_logits`)."""

    prompt: list[int]
    max_gen_len: int
    max_seq_len: int
    stop_at: int | None  # the position whose id is forced to be stop_token, or None
    stop_token: int | None
    ladder: tuple[float, ...] = (2.0, 1.0)  # the logits of the ids a row favours, in order
    temperature: float = 0.0  # 0: greedy, Meta's torch.argmax
    top_p: float = 0.9
    seed: int | None = None  # torch.manual_seed(seed) just before the run

    def name(self) -> str:
        how = f"temperature {self.temperature}, top_p {self.top_p}, seed {self.seed}" if self.temperature > 0 else "greedy"
        return f"prompt {self.prompt}, max_gen_len {self.max_gen_len}, max_seq_len {self.max_seq_len}, {how}"


#: Greedy: a stop at each of Meta's three stop tokens in turn (after 4 new ids, after 3, as the very first), none
#: within max_gen_len, and max_gen_len 0 (Meta: max_seq_len - 1, then total_len caps it at max_seq_len: 4 ids).
#: Sampled (seeded): 20 draws at temperature 0.6 (logits divided: the first two ids kept by top_p 0.7, the second
#: the one whose running sum crosses p; multiplied, three), and 14 draws at temperature 1.5 (flatter: three of five
#: ids kept by top_p 0.6) before a forced <|eom_id|>. Per draw, a choice with the temperature multiplied, top-p
#: dropping the token that crosses p, keeping one more, or none dropped, or the argmax, takes another id with a
#: probability of 0.18 to 0.6.
PROBES = [
    Probe([128000, 791, 4320, 374], 8, 12, 7, 128009),
    Probe([128000, 40, 1093], 6, 9, 5, 128008),
    Probe([128000], 5, 6, 1, 128001),
    Probe([128000, 9906], 3, 8, None, None),
    Probe([128000, 9906], 0, 6, None, None),
    Probe([128000, 791], 20, 22, None, None, (4.0, 3.6, 3.5, 2.0, 1.0), 0.6, 0.7, 1),
    Probe([128000, 9906, 11], 16, 19, 17, 128008, (2.0, 1.8, 1.5, 1.2, 0.8), 1.5, 0.6, 2),
]


def toy_logits(probe: Probe, tokens, start_pos: int):
    """The constructed model: logits [len(tokens), VOCAB] float32. The row of position p favours the ids b, b + 1, ...
    (b depends on p and on the token at p) with ``probe.ladder``, the rest at :data:`FAR`; or, when p + 1 is
    ``probe.stop_at`` (the next position), ``probe.stop_token`` alone."""
    import torch

    ids = [int(t) for t in tokens]
    out = torch.full((len(ids), VOCAB), FAR)
    for i, t in enumerate(ids):
        p = start_pos + i
        if probe.stop_at is not None and p + 1 == probe.stop_at:
            out[i, probe.stop_token] = FORCED
            continue
        favoured = 10 + (31 * t + 7 * p) % 1000
        for k, logit in enumerate(probe.ladder):
            out[i, favoured + k] = logit
    return out


def _caches(ns):
    return list(ns["cache"])


def kv_cache_values(ns) -> dict:
    """08-kv-cache's capture, in the student's kernel after the prefill: the prompt's logits, the caches' first
    ``seqlen`` rows, and the logits of one more call of the student's ``forward`` for one token (the argmax) at
    position ``seqlen``. The caches are restored afterwards: the notebook's own cells see them as they were."""
    prompt = [int(t) for t in ns["prompt_tokens"]]
    seqlen = len(prompt)
    forward = lambda tokens, start_pos: ns["forward"](ns["model"], tokens, start_pos, ns["cache"])  # noqa: E731
    # Without the prefill's logits (its cell raised), call forward again: the stub raises NotImplementedError.
    logits = ns["logits"] if "logits" in ns else forward(prompt, 0)
    saved = [c.clone() for c in _caches(ns)]
    values = {"prompt_tokens": prompt, "logits": logits, "cache_k": saved[0][:, :seqlen].clone(), "cache_v": saved[1][:, :seqlen].clone()}
    values["token"] = int(logits[-1].argmax())
    try:
        values["step_logits"] = forward([values["token"]], seqlen)
    finally:
        for cache, old in zip(_caches(ns), saved):
            cache.copy_(old)
    return values


def decode_values(ns) -> dict:
    """08-decode's capture, in the student's kernel after the decode cell: the values of the step, and the student's
    own ``forward`` called as Meta's generate calls it (the argmax, alone, at position ``seqlen``); the caches are
    restored afterwards."""
    prompt, logits = ns["prompt_tokens"], ns["logits"]
    saved = [c.clone() for c in _caches(ns)]
    try:
        again = ns["forward"](ns["model"], [int(logits[-1].argmax())], len(prompt), ns["cache"])
    finally:
        for cache, old in zip(_caches(ns), saved):
            cache.copy_(old)
    return {"logits": logits, "next_token": ns["next_token"], "step_logits": ns["step_logits"], "again": again}


def generate_values(generate, stop_tokens=None) -> dict:
    """08-generate's capture, in the student's kernel: the student's ``generate`` around the constructed model for each
    of :data:`PROBES` (sampled ones just after ``torch.manual_seed(probe.seed)``): the ids, the logits chosen from,
    the calls of the model and what each call of ``choose`` was given; and the notebook's ``stop_tokens`` (the cell
    sets them), as ints. The kernel's random state is restored after."""
    import torch

    try:
        stops: object = [int(t) for t in stop_tokens]  # type: ignore[union-attr]
    except Exception as e:  # None (not defined), or not a collection of ids
        stops = f"{type(e).__name__}: {e}"

    meta_sample_top_p()  # read Meta's module here, not inside the student's loop
    runs: list[dict] = []
    with torch.random.fork_rng(devices=[]):
        for probe in PROBES:
            calls: list[tuple[int, list[int]]] = []  # (start_pos, tokens) of each call of the model
            given: list[object] = []  # what each call of choose was given

            def model(tokens, start_pos, calls=calls, probe=probe):
                calls.append((int(start_pos), [int(t) for t in tokens]))
                return toy_logits(probe, tokens, int(start_pos))

            def choose(last_logits, given=given, probe=probe):
                given.append(last_logits.detach().clone() if isinstance(last_logits, torch.Tensor) else last_logits)
                if probe.temperature > 0:
                    return sampled_choice(last_logits, probe.temperature, probe.top_p)
                return int(torch.argmax(last_logits))  # Meta: torch.argmax(logits[:, -1], dim=-1)

            if probe.seed is not None:
                torch.manual_seed(probe.seed)
            try:
                ids, chosen_from = generate(model, list(probe.prompt), probe.max_gen_len, choose, list(STOP_TOKENS), probe.max_seq_len)
            except NotImplementedError:  # the student edition's stub: the step is not attempted
                raise
            except Exception as e:  # reported with the probe that raised it
                runs.append({"error": f"{type(e).__name__}: {e}", "calls": calls})
                continue
            runs.append({"ids": [int(i) for i in ids], "chosen_from": chosen_from, "calls": calls, "given": given})
    return {"runs": runs, "stop_tokens": stops}


def kv_cache(v, ctx):
    import torch

    from plumbing.reference import transformer

    prompt, token = v["prompt_tokens"], v["token"]
    seqlen = len(prompt)
    model = transformer(ctx.checkpoint, max_seq_len=seqlen + 1)  # Meta's Transformer, caches for seqlen + 1 positions
    with torch.inference_mode():
        logits = model(torch.tensor([prompt]), 0)[0]  # Meta: Transformer.forward(tokens, start_pos=0)
        cache_k = torch.stack([layer.attention.cache_k[0, :seqlen] for layer in model.layers])
        cache_v = torch.stack([layer.attention.cache_v[0, :seqlen] for layer in model.layers])
        step_logits = model(torch.tensor([[token]]), seqlen)[0]  # one token at start_pos = seqlen, with the cache
    return (
        compare("prefill logits (start_pos 0)", v["logits"], logits)
        + compare("cache_k after the prefill", v["cache_k"], cache_k)
        + compare("cache_v after the prefill", v["cache_v"], cache_v)
        + compare(f"logits of one token at start_pos {seqlen}", v["step_logits"], step_logits)
    )


def decode(v, ctx):
    import torch

    expected = int(torch.argmax(v["logits"][None, -1], dim=-1)[0])  # Meta's greedy step on the student's logits
    ours = v["next_token"]
    if isinstance(ours, torch.Tensor) and ours.numel() == 1 and not ours.is_floating_point():
        ours = int(ours)
    problems = compare("next_token", ours, expected)
    found = compare("step_logits", v["step_logits"], v["again"])
    if found:
        problems += found + [
            "(step_logits must be forward([next_token], start_pos=seqlen): the new token alone, "
            "at the first position after the prompt, as Meta's generate calls the model)"
        ]
    return problems


def _meta_toy(probe: Probe, calls):
    """The constructed model as a Meta ``Transformer`` (``Llama3.generate`` runs only those as text models)."""
    import types

    import torch

    from plumbing.reference import meta_model_code

    Transformer: type = meta_model_code().Transformer  # a class found at run time, named so that it can be a base class

    class Toy(Transformer):
        def __init__(self):
            torch.nn.Module.__init__(self)
            self.params = types.SimpleNamespace(max_seq_len=probe.max_seq_len, max_batch_size=1, vocab_size=VOCAB)

        def forward(self, tokens, start_pos):  # Meta calls self.model.forward(tokens[:, prev_pos:cur_pos], prev_pos)
            calls.append((int(start_pos), tokens[0].tolist()))
            return toy_logits(probe, tokens[0].tolist(), int(start_pos))[None]

    return Toy()


def _calls(name, ours, expected) -> list[str]:
    """The first call of the model that differs from Meta's, as (start_pos, tokens)."""
    for i, (a, b) in enumerate(zip(ours, expected)):
        if list(a) != list(b):
            return [
                f"{name}: call {i + 1} of the model got start_pos {a[0]} and tokens {a[1]}, "
                f"Meta's generate gives start_pos {b[0]} and tokens {b[1]}"
            ]
    if len(ours) != len(expected):
        return [f"{name}: {len(ours)} calls of the model, Meta's generate makes {len(expected)}"]
    return []


def generate(v, ctx):
    import torch

    from plumbing.reference import generate as meta_generate
    from plumbing.reference import generation_tokenizer

    # The notebook's own stop set, which the notebook passes to generate: Meta's Tokenizer.stop_tokens of the checkpoint.
    expected = list(generation_tokenizer(ctx.checkpoint).stop_tokens) if ctx is not None else STOP_TOKENS
    stops = v.get("stop_tokens")
    right = isinstance(stops, list) and sorted(stops) == sorted(expected)
    problems = [] if right else [f"stop_tokens is {stops}, not Meta's Tokenizer.stop_tokens {expected}"]
    for probe, ours in zip(PROBES, v["runs"]):
        if "error" in ours:
            problems.append(f"{probe.name()}: generate raised {ours['error']} (after {len(ours['calls'])} calls of the model)")
            continue
        calls = []
        with torch.random.fork_rng(devices=[]):  # Llama3.generate, after torch.manual_seed(seed) when sampled
            ids = meta_generate(
                None,
                probe.prompt,
                temperature=probe.temperature,
                top_p=probe.top_p,
                max_gen_len=probe.max_gen_len,
                seed=probe.seed,
                model=_meta_toy(probe, calls),
            )
        chosen = torch.stack([toy_logits(probe, tokens, start)[-1] for start, tokens in calls])
        name = probe.name()
        found = _calls(name, ours["calls"], calls) + compare(f"{name}: new ids", ours["ids"], ids)
        given = ours["given"]
        if len(given) != len(ours["ids"]):
            found.append(
                f"{name}: choose was called {len(given)} times for {len(ours['ids'])} new ids (each new id "
                "is what choose returns, called once on the last row of step's output)"
            )
        elif len(given) == len(ids):  # otherwise the ids and calls above differ already
            found += compare(f"{name}: logits given to choose", torch.stack(given), chosen)
        problems += found + compare(f"{name}: logits chosen from", ours["chosen_from"], chosen)
    return problems


STEPS = [
    Step(
        "08-kv-cache",
        "351af837",
        "the key/value cache",
        "Write xk and xv into rows start_pos ... start_pos + seqlen - 1 of layer `layer`'s cache_k and cache_v;\n"
        "keys and values: rows 0 ... start_pos + seqlen - 1 of those caches, through repeat_kv.",
        "__import__('grader.steps.n08_generation', fromlist=['kv_cache_values']).kv_cache_values(globals())",
        kv_cache,
        after="beba54b1",
        points=2,
    ),
    Step(
        "08-decode",
        "d7438472",
        "decode: one new position",
        "next_token: the id (an int) of the largest logit of the prefill's last position (greedy).\n"
        "step_logits: forward(model, ..., cache) on that one token at start_pos = seqlen, [1, vocab_size] float32.",
        "__import__('grader.steps.n08_generation', fromlist=['decode_values']).decode_values(globals())",
        decode,
    ),
    Step(
        "08-generate",
        "7f36e9ba",
        "the generation loop",
        "The body of generate, as Meta's loop: max_gen_len None, 0 or at least max_seq_len means max_seq_len - 1;\n"
        "tokens (the prompt, then each chosen id) and chosen_from (the logits each id was chosen from: the last row of\n"
        "step's output). Each call of step gets only the tokens it has not seen yet, with start_pos the position of the\n"
        "first of them; stop after max_gen_len ids, at max_seq_len, or after a stop token (kept).",
        "__import__('grader.steps.n08_generation', fromlist=['generate_values']).generate_values(generate, globals().get('stop_tokens'))",
        generate,
    ),
    Step(
        "08-top-p",
        "21ec8413",
        "top-p sampling",
        "The body of sample_top_p, as Meta's: sort probs from the most probable down; keep each id while the\n"
        "probabilities before it add up to at most p (the id that crosses p is kept); draw one kept id, in proportion\n"
        "to its probability (torch.multinomial); return its id in probs, an int.",
        "__import__('grader.steps.n08_sampling', fromlist=['top_p_values']).top_p_values(sample_top_p)",
        top_p,
    ),
    Step(
        "08-temperature",
        "c7039b94",
        "temperature, then top-p",
        "The body of sampled_choice: the probabilities of last_logits divided by temperature (softmax, [vocab_size]\n"
        "float32), then one id drawn from them by sample_top_p with top_p, an int.",
        "__import__('grader.steps.n08_sampling', fromlist=['temperature_values']).temperature_values(sampled_choice)",
        temperature,
    ),
]
