"""`make bench`: time and memory of the series on this machine, one Markdown table (build/bench.md, also printed).

    python tools/bench.py                 # everything (about 10 minutes on 2 cores)
    python tools/bench.py --quick         # smoke run: import-only kernel, the first notebook, the loaders
    python tools/bench.py --out FILE --profile   # write elsewhere; also print each notebook's cells

Always on the synthetic stand-in: ``LLAMA3_*`` is removed from the environment of everything started here.
Kernels run through tools/run_notebooks.py's ``execute_notebook``; the other measurements are fresh processes,
one program of tools/bench_probes/ each, whose memory tools/memory.py samples every 20 ms. Targets (issue 15)
are reported, never asserted. Exit status 1 when a measurement failed (the table is written anyway), 2 when the
stand-in is missing.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import plumbing
import psutil
from memory import GiB, Watch
from run_notebooks import execute_notebook

REPO_ROOT = Path(__file__).resolve().parent.parent
PROBES = Path(__file__).resolve().parent / "bench_probes"
ENV = plumbing.clean_environ()  # for everything started here: the stand-in
MIB = 2**20
LIMIT, RESERVE = 20 * GiB, int(1.5 * GiB)  # kill a measured process above this anon / when the machine has less left
ANON_TARGET, FORWARD_TARGET = 1.5, 1.3  # notebook 07: peak anon vs the import-only kernel; forward vs Meta's
STANDIN, SITE = "Stand-in build (fresh process, temporary folder)", "Site export (tools/build_site.py, as make html)"
SERIES = "Whole series: every notebook in sequence (tools/run_notebooks.py)"
COLUMNS = ("Measurement", "Time (s)", "Peak RSS (MiB)", "Peak anon (MiB)", "Compared with", "Target")
LEGEND = ("Kernel times include starting and stopping the kernel; other times exclude the interpreter's start. "
          "Peak RSS: the process's own peak resident memory (Linux VmHWM). Peak anon: the largest sampled "
          "anonymous memory (RssAnon) of the process and its children: memory the system cannot reclaim, "
          "unlike the page cache behind memory-mapped weights.")


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
        execute_notebook(path, None, env=ENV, progress=False, timeout=3600, on_kernel_start=started,
                         on_cell_start=lambda **_: state.update(t=time.perf_counter(), cpu=cpu()), on_cell_executed=cell_done)
    except Exception as e:  # a failing cell, a dead kernel: the row says so
        row.why = "failed: " + one_line(f"{e.ename}: {e.evalue}" if getattr(e, "ename", None) else e)
    row.time = time.perf_counter() - t0
    if "watch" in state:
        watch = state["watch"].stop()
        row.rss, row.anon, row.why = watch.peak_rss, watch.peak_anon, watch.exceeded or row.why
    return row


def child(label: str, probe: str, *args) -> tuple[Row, dict]:
    """Run ``python tools/bench_probes/{probe}.py args`` from the repository root, watching its memory.

    The probe's last ``BENCH {json}`` line gives its own timings; ``seconds`` becomes the row's time.
    """
    row = Row(label)
    proc = subprocess.Popen([sys.executable, PROBES / f"{probe}.py", *map(str, args)], cwd=REPO_ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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


# --------------------------------------------------------------------------- the measurements


def ratio(a, b) -> float | None:
    return a / b if a and b else None


def notebook(path: Path, base: Row) -> Row:
    row = kernel(f"Notebook {path.stem}", path)
    anon, rss = ratio(row.anon, base.anon), ratio(row.rss, base.rss)
    if not row.why and rss:
        row.vs = f"RSS {rss:.2f}x" + (f", anon {anon:.2f}x" if anon else "") + " import-only"
    if path.name.startswith("07_") and anon:
        row.target = f"anon ≤ {ANON_TARGET}x: " + ("met" if anon <= ANON_TARGET else "missed")
    return row


def notebook_forward(path: Path, nb07: Row) -> Row:
    """Notebook 07's forward pass: its slowest code cell before ``## Deep dives`` (the loop over the layers)."""
    row = Row("Notebook 07: forward pass (its slowest cell before Deep dives)", why=nb07.why and "notebook failed")
    cells = nbformat.read(path, as_version=4).cells
    deep = next((i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## Deep dives")),
                len(cells))
    core = [(seconds, cpu) for index, seconds, cpu, _ in nb07.cells if index < deep]
    if core and not row.why:
        row.time, row.cpu = max(core)
    return row


def side_by_side(path: Path | None, nb07: Row | None, tokens: list[int], quick: bool) -> list[Row]:
    """Notebook 07's forward against Meta's Transformer loaded the usual way and Hugging Face's from_pretrained."""
    labels = ("Meta's Transformer: torch.load (no mmap), build in bf16, load_state_dict", "Meta's Transformer: forward",
              "Hugging Face LlamaForCausalLM.from_pretrained (safetensors copy)", "Hugging Face: forward")
    why = "skipped (--quick)" if quick else "" if path else "not run: no notebook 07"
    if why:
        return [Row("Notebook 07: forward pass", why=why)] * bool(path) + [Row(label, why=why) for label in labels]
    rows = [notebook_forward(path, nb07)]
    rows += reference(labels[:2], "meta_reference", plumbing.STANDIN_DIR, json.dumps(tokens))
    hf_dir = Path(tempfile.mkdtemp(prefix="bench-hf-", dir="/tmp" if Path("/tmp").is_dir() else None))
    try:
        if shutil.disk_usage(hf_dir).free < 28e9:  # the 16 GB copy and room for everyone else
            rows += [Row(label, why="not run: less than 28 GB free on disk for the 16 GB copy") for label in labels[2:]]
        else:
            log("writing the Hugging Face copy of the stand-in (16 GB)")
            copy = timed("copy", [sys.executable, PROBES / "hf_copy.py", plumbing.STANDIN_DIR, hf_dir])
            rows += ([Row(label, why=copy.why) for label in labels[2:]] if copy.why else
                     reference(labels[2:], "hf_reference", hf_dir, json.dumps(tokens)))
    finally:
        shutil.rmtree(hf_dir, ignore_errors=True)
    forward, meta_forward, hf_forward = rows[0], rows[2], rows[4]
    for load in (rows[1], rows[3]):
        if ratio(load.anon, nb07.anon):
            load.vs = f"anon {load.anon / nb07.anon:.1f}x notebook 07's kernel"
    if ratio(hf_forward.time, meta_forward.time):
        hf_forward.vs = f"{hf_forward.time / meta_forward.time:.2f}x Meta's (CPU time {hf_forward.cpu / meta_forward.cpu:.2f}x)"
    if ratio(forward.time, meta_forward.time):
        r = forward.time / meta_forward.time
        forward.vs = f"{r:.2f}x Meta's (CPU time {forward.cpu / meta_forward.cpu:.2f}x)" + (
            f", {forward.time / hf_forward.time:.2f}x Hugging Face's" if hf_forward.time else "")
        forward.target = f"≤ {FORWARD_TARGET}x Meta's: " + ("met" if r <= FORWARD_TARGET else "missed")
    return rows


def reference(labels, probe: str, folder: Path, tokens: str) -> list[Row]:
    """A load row (time, the process's peaks) and a forward row (time) from one child process."""
    available = psutil.virtual_memory().available
    if available < 18 * GiB:  # 16 GB of bf16 parameters once materialised, and what the process holds besides
        return [Row(label, why=f"not run: needs 18 GiB available, {available / GiB:.1f} GiB were") for label in labels]
    load, data = child(labels[0], probe, folder, tokens)
    return [load, Row(labels[1], time=data.get("forward"), cpu=data.get("cpu"), why=load.why)]


def loaders(tokens: list[int]) -> list[Row]:
    ids = json.dumps(tokens)
    mm, _ = child("Loader: memory-mapped open_checkpoint + the reads of notebooks 02-04", "mmap_loader", ids)
    plain, _ = child("Loader: plain torch.load of the whole checkpoint + the same reads", "plain_loader", ids,
                     plumbing.STANDIN_DIR / "consolidated.00.pth")
    if ratio(plain.rss, mm.rss) and ratio(plain.time, mm.time):
        plain.vs = f"RSS {plain.rss / mm.rss:.1f}x" + (f", anon {plain.anon / mm.anon:.1f}x" if mm.anon else "") + \
                   f", time {plain.time / mm.time:.1f}x the memory-mapped"
    return [mm, plain]


# --------------------------------------------------------------------------- the table


def markdown(header, rows) -> str:
    lines = [header, ["---:" if name.endswith(")") else "---" for name in header]] + rows  # numbers to the right
    return "\n".join("| " + " | ".join(map(str, line)) + " |" for line in lines)


def cells(r: Row) -> list[str]:
    mib = lambda b: f"{b / MIB:.0f}" if b else "—"  # noqa: E731
    return [r.label, r.why or (f"{r.time:.2f}" if r.time is not None else "—"), mib(r.rss), mib(r.anon),
            r.vs or "—", r.target or "—"]


def machine() -> str:
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        cpu = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M).group(1)
    except (OSError, AttributeError):
        pass
    return (f"{cpu}, {psutil.cpu_count(logical=False)} cores ({psutil.cpu_count()} logical), "
            f"{psutil.virtual_memory().total / GiB:.1f} GiB RAM; torch {torch.__version__}, "
            f"ATen CPU capability {torch.backends.cpu.get_cpu_capability()}")


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in psutil.getloadavg())


def log(text: str) -> None:
    print(f"[bench] {text}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: import-only kernel, first notebook, loaders")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "bench.md", help="Markdown file to write")
    parser.add_argument("--profile", action="store_true", help="also print every code cell's time and peak anon")
    args = parser.parse_args(argv)
    if not plumbing.standin_complete():
        parser.error("the stand-in is missing: build it with `make standin` (or run `make bench`)")
    start_load = load_average()
    tokens = plumbing.encode_prompt(plumbing.load_tokenizer(plumbing.default_tokenizer_path()), plumbing.DEFAULT_PROMPT)
    notebooks = plumbing.series_notebooks()
    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    try:
        cell = nbformat.v4.new_code_cell((PROBES / "import_only.py").read_text())  # the import-only kernel's one cell
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), workdir / "import_only.ipynb")
        rows = [kernel("Import-only kernel (torch, matplotlib.pyplot, plumbing)", workdir / "import_only.ipynb")]
        log(" | ".join(cells(rows[0])))
        for i, path in enumerate(notebooks):
            run = not args.quick or i == 0
            rows.append(notebook(path, rows[0]) if run else Row(f"Notebook {path.stem}", why="skipped (--quick)"))
            log(" | ".join(cells(rows[-1])))
        nb07 = next(((p, r) for p, r in zip(notebooks, rows[1:], strict=True) if p.name.startswith("07_")), (None, None))
        rows += side_by_side(*nb07, tokens, args.quick)
        rows += loaders(tokens)
        if args.quick:
            rows += [Row(label, why="skipped (--quick)") for label in (STANDIN, SITE, SERIES)]
        else:
            rows.append(child(STANDIN, "standin_build", workdir / "standin")[0])
            series = timed(SERIES, [sys.executable, "tools/run_notebooks.py", "--out", workdir / "series", *notebooks])
            executed = REPO_ROOT / "notebooks" if series.why else workdir / "series"  # the committed ones have outputs too
            site = [sys.executable, "tools/build_site.py", "--src", executed, "--out", workdir / "site"]
            rows += [timed(SITE, site, failure="not available"), series]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    anon_note = "" if rows[0].anon else " Peak anon is not reported on this system."
    text = (f"Machine: {machine()}. Load average {start_load} at start, {load_average()} at end. Weights: the "
            f"synthetic stand-in.\n\n{markdown(COLUMNS, [cells(r) for r in rows])}\n\n{LEGEND}{anon_note}\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print("\n" + text)
    for r in [r for r in rows if args.profile and r.cells]:
        print(f"\n{r.label}\n\n" + markdown(("Cell", "Time (s)", "CPU (s)", "Peak anon (MiB)"), [
            (i, f"{s:.2f}", f"{c:.2f}", f"{a / MIB:.0f}" if a else "—") for i, s, c, a in r.cells]))
    return 1 if any(r.why.startswith("failed") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
