"""The memory-mapped loader and the reads notebooks 02-04 make: the prompt's embedding rows, the gain, wq and wk.

    python benchmarks/probes/mmap_loader.py TOKEN_IDS_JSON

Opens the stand-in (``LLAMA3_*`` is unset by the bench) with ``plumbing.open_checkpoint``.
"""

import json
import sys
import time

import torch

import plumbing


def main(ids_json: str) -> None:
    ids = torch.tensor(json.loads(ids_json))
    t0 = time.perf_counter()
    ckpt = plumbing.open_checkpoint()
    x = ckpt.get("tok_embeddings.weight")[ids] * ckpt.get("layers.0.attention_norm.weight")
    _q, _k = x @ ckpt.get("layers.0.attention.wq.weight").T, x @ ckpt.get("layers.0.attention.wk.weight").T
    print("BENCH " + json.dumps({"seconds": time.perf_counter() - t0}))


if __name__ == "__main__":
    main(*sys.argv[1:])
