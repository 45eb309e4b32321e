"""Hugging Face's ``LlamaForCausalLM.from_pretrained`` on a safetensors folder (bf16), then one forward.

    python tools/bench_probes/hf_reference.py HF_FOLDER TOKEN_IDS_JSON

The folder is the copy :mod:`hf_copy` writes.
"""

import json
import sys
import time

import torch
from transformers import LlamaForCausalLM


def main(folder: str, tokens_json: str) -> None:
    tokens = torch.tensor([json.loads(tokens_json)])
    t0 = time.perf_counter()
    model = LlamaForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).eval()
    t1, c1 = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        model(tokens)
    print("BENCH " + json.dumps({"seconds": t1 - t0, "forward": time.perf_counter() - t1, "cpu": time.process_time() - c1}))


if __name__ == "__main__":
    main(*sys.argv[1:])
