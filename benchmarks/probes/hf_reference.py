"""Hugging Face's ``LlamaForCausalLM.from_pretrained`` on a safetensors folder (bf16), one forward, then ``generate``.

    python benchmarks/probes/hf_reference.py HF_FOLDER TOKEN_IDS_JSON [N_NEW]

The folder is the copy :mod:`hf_copy` writes. ``generate`` runs greedily for ``N_NEW`` new tokens (default 16) with
its own key/value cache; a logits processor stamps the time of every step, and ``decode`` is the median seconds
between two steps (one decode token; the first step is the prefill).
"""

import json
import statistics
import sys
import time

import torch
from transformers import LlamaForCausalLM, LogitsProcessor, LogitsProcessorList


class Stamp(LogitsProcessor):
    """Records the time of each generation step (called once per step, on that step's logits)."""

    def __init__(self):
        self.times = []

    def __call__(self, input_ids, scores):
        self.times.append(time.perf_counter())
        return scores


def main(folder: str, tokens_json: str, n_new: str = "16") -> None:
    tokens = torch.tensor([json.loads(tokens_json)])
    t0 = time.perf_counter()
    model = LlamaForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).eval()
    t1, c1 = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        model(tokens)
    forward, cpu = time.perf_counter() - t1, time.process_time() - c1
    stamp = Stamp()
    with torch.inference_mode():
        model.generate(
            tokens,
            attention_mask=torch.ones_like(tokens),
            max_new_tokens=int(n_new),
            do_sample=False,
            logits_processor=LogitsProcessorList([stamp]),
            pad_token_id=128004,
            eos_token_id=[128001, 128008, 128009],
        )
    decode = statistics.median(b - a for a, b in zip(stamp.times, stamp.times[1:]))
    print("BENCH " + json.dumps({"seconds": t1 - t0, "forward": forward, "cpu": cpu, "decode": decode}))


if __name__ == "__main__":
    main(*sys.argv[1:])
