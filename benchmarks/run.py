"""How `make bench` runs what it measures: a notebook in a fresh kernel, a probe program, a command; each a :class:`Row`.

Everything runs from the repository root with :data:`ENV` (no ``LLAMA3_*``: the stand-in). A process that grows past
:data:`LIMIT`, or leaves the machine less than :data:`RESERVE`, is stopped. A failure is written in the row, never raised.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import plumbing
from benchmarks.memory import GiB, Watch
from tools.run_notebooks import execute_notebook

__all__ = ["ENV", "PROBES", "Row", "one_line", "kernel", "child", "timed"]

REPO_ROOT = Path(__file__).resolve().parent.parent
PROBES = Path(__file__).resolve().parent / "probes"
ENV = plumbing.clean_environ()  # for everything started here: the stand-in
LIMIT, RESERVE = 20 * GiB, int(1.5 * GiB)  # kill a measured process above this anon / when the machine has less left


@dataclass
class Row:
    label: str
    time: float | None = None
    rss: int | None = None
    anon: int | None = None
    vs: str = ""
    target: str = ""
    why: str = ""  # failed / not available / skipped: shown in the time cell
    cpu: float | None = None  # CPU seconds of a forward pass: less sensitive than wall time to a busy machine
    cells: list = field(default_factory=list)  # kernels: (cell index, seconds, CPU seconds, peak anon) per code cell
    data: dict = field(default_factory=dict)  # a probe's own BENCH numbers


def one_line(text) -> str:
    """The last meaningful line of an error, without this machine's paths, fit for a table cell."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(text)).splitlines() if ln.strip()]
    line = next((ln for ln in lines if " stopped" in ln), lines[-1] if lines else "no output")
    for path, shown in ((str(REPO_ROOT), "."), (tempfile.gettempdir(), "<tmp>"), (str(Path.home()), "~")):
        line = line.replace(path, shown)
    return line.replace("|", "/")[:150]


# --------------------------------------------------------------------------- how to run things


def kernel(label: str, path: Path) -> Row:
    """Run the notebook ``path`` in a fresh kernel with tools/run_notebooks.py's runner, watching the kernel's memory."""
    row, state = Row(label), {}

    def started(pid):
        state["watch"] = Watch(pid, limit=LIMIT, reserve=RESERVE)

    def cpu():
        return sum(state["watch"].root.cpu_times()[:2])

    def cell_done(cell, cell_index, **_):
        if cell.cell_type == "code":  # the mark after the last cell reads VmHWM before the kernel stops
            seconds, cpu_seconds = time.perf_counter() - state["t"], cpu() - state["cpu"]
            row.cells.append((cell_index, seconds, cpu_seconds, state["watch"].mark()))

    t0 = time.perf_counter()
    try:
        execute_notebook(
            path,
            None,
            env=ENV,
            progress=False,
            timeout=3600,
            on_kernel_start=started,
            on_cell_start=lambda **_: state.update(t=time.perf_counter(), cpu=cpu()),
            on_cell_executed=cell_done,
        )
    except Exception as e:  # a failing cell, a dead kernel: the row says so
        row.why = "failed: " + one_line(f"{e.ename}: {e.evalue}" if getattr(e, "ename", None) else e)
    row.time = time.perf_counter() - t0
    if "watch" in state:
        watch = state["watch"].stop()
        row.rss, row.anon, row.why = watch.peak_rss, watch.peak_anon, watch.exceeded or row.why
    return row


def child(label: str, probe: str, *args) -> tuple[Row, dict]:
    """Run ``python benchmarks/probes/{probe}.py args`` from the repository root, watching its memory.

    The probe's last ``BENCH {json}`` line gives its own timings; ``seconds`` becomes the row's time.
    """
    row = Row(label)
    proc = subprocess.Popen(
        [sys.executable, PROBES / f"{probe}.py", *map(str, args)],
        cwd=REPO_ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watch = Watch(proc.pid, limit=LIMIT, reserve=RESERVE)
    out, err = proc.communicate()
    watch.stop()
    found = re.findall(r"^BENCH (.*)$", out, re.M)
    data = json.loads(found[-1]) if found else {}
    row.time, row.rss, row.anon = data.get("seconds"), watch.peak_rss, watch.peak_anon
    if watch.exceeded or proc.returncode or not found:
        row.why = watch.exceeded or "failed: " + one_line(err)
    return row, data


def timed(label: str, cmd: list, failure: str = "failed") -> Row:
    """Wall time of the command ``cmd`` (run from the repository root)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=ENV, capture_output=True, text=True, timeout=7200)
        why = f"{failure}: {one_line(proc.stderr)}" if proc.returncode else ""
    except (OSError, subprocess.TimeoutExpired) as e:
        why = f"{failure}: {one_line(e)}"
    return Row(label, time=time.perf_counter() - t0, why=why)
