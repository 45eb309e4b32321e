"""The reads of :mod:`mmap_loader` after a plain ``torch.load`` of the whole checkpoint (no memory map).

python benchmarks/probes/plain_loader.py TOKEN_IDS_JSON CONSOLIDATED_PTH
"""

import json
import sys
import time

import torch


def main(ids_json: str, path: str) -> None:
    ids = torch.tensor(json.loads(ids_json))
    t0 = time.perf_counter()
    state = torch.load(path, map_location="cpu", weights_only=True)
    x = state["tok_embeddings.weight"][ids] * state["layers.0.attention_norm.weight"]
    _q, _k = x @ state["layers.0.attention.wq.weight"].T, x @ state["layers.0.attention.wk.weight"].T
    print("BENCH " + json.dumps({"seconds": time.perf_counter() - t0}))


if __name__ == "__main__":
    main(*sys.argv[1:])
