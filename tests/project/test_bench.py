"""Smoke test of `make bench`: `python -m benchmarks.bench --quick` runs and writes a well-formed table.

It checks that the benchmark works, not its numbers: benchmarks are not timed tests, and no target is asserted.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import plumbing

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["Measurement", "Time (s)", "Peak RSS (MiB)", "Peak anon (MiB)", "Compared with", "Target"]
NUMBER = re.compile(r"^\d+(\.\d+)?$")


@pytest.mark.slow
@pytest.mark.notebook
def test_quick_bench_writes_a_well_formed_table(standin_dir, tmp_path):
    out = tmp_path / "bench.md"
    env = plumbing.clean_environ()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert text in proc.stdout  # printed as well as written

    # The machine line: CPU, cores, RAM, torch and its CPU capability; nothing identifying.
    for word in ("cores", "GiB RAM", "torch 2.", "ATen CPU capability", "Load average"):
        assert word in text, word
    assert str(ROOT) not in text and str(Path.home()) not in text
    assert len(socket.gethostname()) < 4 or socket.gethostname() not in text

    lines = [line for line in text.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    assert rows[0] == COLUMNS
    assert all(re.fullmatch(r"-{3,}:?", cell) for cell in rows[1]) and len(rows[1]) == len(COLUMNS)
    body = rows[2:]
    assert all(len(row) == len(COLUMNS) and all(row) for row in body), body
    labels = [row[0] for row in body]

    # The import-only kernel first, measured; then one row per notebook of the series, in order.
    base = body[0]
    assert base[0].startswith("Import-only kernel")
    assert NUMBER.match(base[1]) and NUMBER.match(base[2]) and (NUMBER.match(base[3]) or base[3] == "—"), base
    stems = [p.stem for p in plumbing.series_notebooks()]
    assert [label.removeprefix("Notebook ") for label in labels if re.match(r"Notebook \d\d_", label)] == stems
    for start in ("Loader: memory-mapped", "Loader: plain torch.load", "Stand-in build", "Site export", "Whole series"):
        assert sum(label.startswith(start) for label in labels) == 1, start
    if any(stem.startswith("07_") for stem in stems):  # the side-by-side rows exist, skipped under --quick
        for start in ("Notebook 07: forward pass", "Meta's Transformer", "Hugging Face"):
            assert any(label.startswith(start) for label in labels), start
    if any(stem.startswith("08_") for stem in stems):  # the decode rows exist, skipped under --quick
        for start in (
            "Notebook 08: cached decode",
            "Notebook 08: the same loop without the cache",
            "Meta's Llama3.generate: decode",
            "Hugging Face generate: decode",
            "Notebook 08: decode bandwidth",
        ):
            assert sum(label.startswith(start) for label in labels) == 1, start
