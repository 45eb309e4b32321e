"""Write a Hugging Face copy of a Meta-format checkpoint (safetensors shards, index, ``config.json``); not timed.

    python benchmarks/probes/hf_copy.py CHECKPOINT_FOLDER OUT_FOLDER

As Hugging Face's conversion (transformers' ``convert_llama_weights_to_hf.py``) stores it: its tensor names and the
``wq``/``wk`` rows permuted (``plumbing.hf_layout``). Written shard by shard, each tensor a copy of its own:
safetensors cannot share storage, and the stand-in's tensors do.
"""

import json
import sys
from pathlib import Path

from safetensors.torch import save_file

import plumbing
from plumbing.hf_layout import hf_config, hf_permute, meta_name_to_hf

SHARD_BYTES = 2**31


def hf_tensor(name: str, tensor, params):
    """Meta's tensor ``name`` in Hugging Face's row order, a contiguous copy of its own."""
    heads = {"attention.wq.weight": params.n_heads, "attention.wk.weight": params.n_kv_heads}
    n_heads = next((n for suffix, n in heads.items() if name.endswith(suffix)), None)
    return (hf_permute(tensor, n_heads) if n_heads else tensor).contiguous().clone()


def main(folder: str, out: str) -> None:
    ckpt, out = plumbing.open_checkpoint(folder), Path(out)
    shard, weight_map = {}, {}

    def flush():
        name = f"model-{len(set(weight_map.values())) + 1:05d}.safetensors"
        save_file(shard, str(out / name), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(shard, name))
        shard.clear()

    for name in ckpt.keys():
        shard[meta_name_to_hf(name)] = hf_tensor(name, ckpt.get(name), ckpt.params)
        if sum(t.nbytes for t in shard.values()) > SHARD_BYTES:
            flush()
    flush()
    (out / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (out / "config.json").write_text(json.dumps(hf_config(ckpt.params)))


if __name__ == "__main__":
    main(*sys.argv[1:])
