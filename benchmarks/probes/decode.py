"""Measure decode speed: notebook 08's loop with and without its cache, Meta's ``generate``, and copy bandwidth.

All on one memory-mapped checkpoint, side by side in one process.

    python benchmarks/probes/decode.py NOTEBOOK_08 N_NEW

Notebook 08's own code cells, up to the one that defines ``forward``, run in this process. After a warm-up prefill,
each loop runs the prompt once and times ``N_NEW`` - 1 greedy steps one by one.
"""

import json
import math
import statistics
import sys
import time

import nbformat
import torch

import plumbing


class Stamped(list):
    """A list that records the time of every append (plumbing.reference.generate appends each step's logits)."""

    def __init__(self):
        super().__init__()
        self.times = []

    def append(self, item):
        super().append(item)
        self.times.append(time.perf_counter())


def per_token(times: list[float]) -> float:
    """Median seconds between consecutive steps: one decode token each (the first stamp ends the prefill)."""
    return statistics.median(b - a for a, b in zip(times, times[1:]))


def copy_bandwidth() -> float:
    """Bytes read plus bytes written per second by ``dst.copy_(src)`` on 1 GiB, best of 5."""
    src = torch.ones(2**29, dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.numel() * src.element_size() / best


def main(notebook: str, n_new: str) -> None:
    n_new = int(n_new)
    cells = [c.source for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    last = next(i for i, source in enumerate(cells) if "def forward(" in source)
    namespace = {}
    for source in cells[: last + 1]:
        exec(source, namespace)  # noqa: S102 - the series' own notebook, as Jupyter runs it
    forward, prompt, inputs = namespace["forward"], namespace["prompt_tokens"], namespace["inputs"]
    assert namespace["max_seq_len"] >= len(prompt) + n_new, "the notebook's cache is smaller than the measurement"
    ckpt = inputs.checkpoint
    result = {"copy": copy_bandwidth()}
    tied = "output.weight" not in ckpt.keys()
    everything = sum(math.prod(ckpt.shape(n)) * 2 for n in ckpt.keys())
    table = math.prod(ckpt.shape("tok_embeddings.weight")) * 2
    result["bytes"] = everything if tied else everything - table + table // ckpt.shape("tok_embeddings.weight")[0]
    t0 = time.perf_counter()
    forward(prompt, 0)  # warm-up: every page of the weights touched once
    result["warmup"] = time.perf_counter() - t0

    for name, step in (("cached", lambda tokens, pos: forward(tokens[-1:], pos)), ("uncached", lambda tokens, pos: forward(tokens, 0))):
        tokens = list(prompt)
        with torch.inference_mode():
            logits = forward(tokens, 0)
            times = [time.perf_counter()]
            for pos in range(len(prompt), len(prompt) + n_new - 1):
                tokens.append(logits[-1].argmax().item())
                logits = step(tokens, pos)
                times.append(time.perf_counter())
        result[name] = per_token(times)

    stamped = Stamped()
    model = plumbing.reference.transformer(ckpt, max_seq_len=len(prompt) + n_new)
    plumbing.reference.generate(ckpt, prompt, temperature=0, max_gen_len=n_new, model=model, logits=stamped)
    result["meta"] = per_token(stamped.times)
    result["meta_steps"] = len(stamped)
    print("BENCH " + json.dumps({"seconds": result["warmup"], **result}))


if __name__ == "__main__":
    main(*sys.argv[1:])
