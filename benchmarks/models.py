"""`make bench-models`: time and memory of every notebook on stand-ins of each model's shapes (docs/models.md).

    python -m benchmarks.models                          # Meta-Llama-3-8B, Llama-3.2-3B and Llama-3.2-1B
    python -m benchmarks.models --models Llama-3.2-1B --out FILE

The 8B stand-in is ``data/standin/``; the others are built once into ``data/standin-<model>/`` and reused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import plumbing

from benchmarks import bench
from benchmarks import run as bench_run

DEFAULT = ["Meta-Llama-3-8B", "Llama-3.2-3B", "Llama-3.2-1B"]


def folder(model: str) -> Path:
    """The stand-in of ``model``'s shapes, built when missing."""
    if model == "Meta-Llama-3-8B":
        return plumbing.ensure_standin()
    target = plumbing.REPO_ROOT / "data" / f"standin-{model}"
    if not plumbing.standin_complete(target):
        plumbing.build_standin(target, model=model, progress=False)
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=DEFAULT, choices=list(plumbing.MODELS))
    parser.add_argument("--out", type=Path, default=plumbing.REPO_ROOT / "build" / "bench_models.md")
    args = parser.parse_args(argv)
    header = ("Notebook", *(f"{m}: time (s) / peak RSS / peak anon (MiB)" for m in args.models))
    results = {}
    for model in args.models:
        bench_run.ENV = plumbing.clean_environ(LLAMA3_DIR=str(folder(model)))
        for path in plumbing.series_notebooks():
            row = bench_run.kernel(path.stem, path)
            if row.why:
                cell = row.why
            elif row.anon is None:  # no /proc: time and peak RSS only
                cell = f"{row.time:.0f} / {row.rss / 2**20:.0f} / -"
            else:
                cell = f"{row.time:.0f} / {row.rss / 2**20:.0f} / {row.anon / 2**20:.0f}"
            results.setdefault(path.stem, []).append(cell)
            print(f"{model} {path.stem}: {cell}", file=sys.stderr, flush=True)
    text = (
        f"Machine: {bench.machine()}. Weights: synthetic stand-ins of each model's shapes, all layers.\n\n"
        + bench.markdown(header, [[stem, *cells] for stem, cells in results.items()])
        + "\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
