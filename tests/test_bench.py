"""Smoke test of `make bench`: `tools/bench.py --quick` runs and writes a well-formed table.

It checks that the benchmark works, not the numbers: targets are not asserted (benchmarks are not
timed tests, issue 9).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ["Measurement", "Wall time (s)", "Peak RSS (MiB)", "Ratio", "Target", "Met"]
ROW_STARTS = [
    "Baseline kernel",
    "Notebook 01_tokenization",
    "Notebook 02_embedding_lookup",
    "Notebook 03_rmsnorm",
    "Notebook 04_rope",
    "Tokenizer child process",
    "Whole series",
    "Stand-in build",
    "HTML export",
    "Loader reference",
    "Loader: memory-mapped",
    "Loader: plain torch.load",
    "Loader: plain peak / memory-mapped peak",
]
NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
RATIO = re.compile(r"^(\d+(?:\.\d+)?)x$")


def table_rows(text: str) -> list[list[str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines]


def test_quick_bench_writes_the_table(standin_dir, tmp_path):
    out = tmp_path / "bench.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA3_")}
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "bench.py"), "--quick", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    assert text in proc.stdout  # printed as well as written

    # Machine description: CPU, cores, RAM, torch and its CPU capability; nothing identifying.
    for word in ("CPU:", "logical", "RAM:", "GiB", "torch 2.", "ATen CPU capability in use:", "load average"):
        assert word in text, word
    assert str(ROOT) not in text and str(Path.home()) not in text
    host = socket.gethostname()
    assert len(host) < 4 or host not in text

    rows = table_rows(text)
    assert rows[0] == COLUMNS
    assert set(rows[1]) <= {"---", "---:"}
    body = rows[2:]
    assert len(body) == len(ROW_STARTS)
    for row, start in zip(body, ROW_STARTS):
        assert len(row) == len(COLUMNS), row
        assert row[0].startswith(start), (row[0], start)
    by_name = dict(zip(ROW_STARTS, body))

    # Measured in --quick: baseline kernel, notebook 01 (when present), the three loader rows.
    measured = ["Baseline kernel", "Loader reference", "Loader: memory-mapped", "Loader: plain torch.load"]
    if (ROOT / "notebooks" / "01_tokenization.ipynb").is_file():
        measured.append("Notebook 01_tokenization")
    else:
        assert by_name["Notebook 01_tokenization"][1] == "not present"
    for name in measured:
        row = by_name[name]
        assert NUMBER.match(row[1]) and float(row[1]) > 0, row
        assert NUMBER.match(row[2]) and float(row[2]) > 10, row  # MiB: any Python with torch is above 10
    tok = by_name["Tokenizer child process"]
    assert tok[1] == "not available" or (NUMBER.match(tok[1]) and NUMBER.match(tok[2])), tok
    for name in ("Notebook 02_embedding_lookup", "Whole series", "Stand-in build", "HTML export"):
        assert by_name[name][1] == "skipped (--quick)", by_name[name]
    for name in ("Baseline kernel", "Notebook 01_tokenization"):
        if name in measured:
            assert RATIO.match(by_name[name][3]), by_name[name]
            assert by_name[name][5] in ("met", "missed", "—")
    ratio = by_name["Loader: plain peak / memory-mapped peak"]
    assert RATIO.match(ratio[3]) and ratio[4] == ">= 4x" and ratio[5] in ("met", "missed"), ratio
    # The plain load holds the whole checkpoint (about 1 GiB on the stand-in); the mmap loader does not.
    assert float(by_name["Loader: plain torch.load"][2]) > float(by_name["Loader: memory-mapped"][2])
    assert "What the loader ratio means for the real checkpoint" in text
