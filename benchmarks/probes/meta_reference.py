"""Meta's ``Transformer`` loaded the usual way (as llama-models' ``Llama.build``, without a memory map), then one forward.

    python benchmarks/probes/meta_reference.py CHECKPOINT_FOLDER TOKEN_IDS_JSON

The load: a plain ``torch.load`` of the whole ``consolidated.00.pth``, the model built in bf16 (its parameters
allocated), then ``load_state_dict`` copying the tensors in. Meta's module and ``ModelArgs`` come from
``plumbing.reference`` (``meta_model_code``, ``model_args``: fairscale's layers as the plain layers they are on one
process). ``plumbing.reference.transformer`` is not used here on purpose: it assigns memory-mapped tensors and copies
nothing, which is what the notebooks do, not Meta's usual load.
"""

import json
import sys
import time
from pathlib import Path

import torch

import plumbing


def main(folder: str, tokens_json: str) -> None:
    folder, tokens = Path(folder), torch.tensor([json.loads(tokens_json)])
    t0 = time.perf_counter()
    state = torch.load(folder / "consolidated.00.pth", map_location="cpu", weights_only=True)
    params = plumbing.ModelParams.from_json(folder / "params.json")
    torch.set_default_dtype(torch.bfloat16)
    model = plumbing.reference.meta_model_code().Transformer(plumbing.reference.model_args(params, tokens.shape[1]))
    model.load_state_dict(state, strict=True)
    del state
    t1, c1 = time.perf_counter(), time.process_time()
    model(tokens, 0)
    print("BENCH " + json.dumps({"seconds": t1 - t0, "forward": time.perf_counter() - t1, "cpu": time.process_time() - c1}))


if __name__ == "__main__":
    main(*sys.argv[1:])
