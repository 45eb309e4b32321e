"""Build the synthetic stand-in into a folder, as ``make standin`` does.

python benchmarks/probes/standin_build.py FOLDER
"""

import json
import sys
import time
from pathlib import Path

import plumbing


def main(folder: str) -> None:
    t0 = time.perf_counter()
    plumbing.build_standin(Path(folder), progress=False)
    print("BENCH " + json.dumps({"seconds": time.perf_counter() - t0}))


if __name__ == "__main__":
    main(*sys.argv[1:])
