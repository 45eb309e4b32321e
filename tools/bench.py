"""Measure the series' time and memory on this machine and write a Markdown table (`make bench`).

    python tools/bench.py                            # full run: build/bench.md (also printed)
    python tools/bench.py --quick --out /tmp/b.md    # smoke run: checks the benchmark works, not the numbers

What is measured (always on the synthetic stand-in; ``LLAMA3_*`` variables are removed from the
environment of everything this script starts):

* a baseline kernel that only imports torch, tiktoken and matplotlib.pyplot;
* each notebook, executed as ``tools/run_notebooks.py`` executes it (fresh ``python3`` kernel,
  ``notebooks/`` as working directory): wall time and peak resident memory of the kernel process;
* the whole series, ``tools/run_notebooks.py`` on the four notebooks in one fresh process;
* the memory-mapped loader (``plumbing.open_checkpoint`` + the tensors the notebooks read: the
  prompt's rows of ``tok_embeddings.weight`` and layer-0 ``wq``/``wk``, each used in a matmul)
  against a plain ``torch.load(path, weights_only=True)`` of the whole checkpoint, each in a
  fresh process;
* the stand-in build (into a temporary folder, fresh process) and the HTML export
  (``tools/build_site.py``; "not available" when it is missing or fails).

Peak resident memory is Linux's ``VmHWM`` ("high water mark" of the resident set) of the process.
For a kernel it is read from ``/proc/<kernel pid>/status`` after every cell, the last reading being
taken after the last cell and before the kernel is shut down; the pid comes from the kernel
manager's provisioner (jupyter_client's ``LocalProvisioner`` starts the kernel with ``Popen``).
The readings after each cell give the per-cell profile printed under the table. For the
``python -c`` measurements the child reads its own ``/proc/self/status`` as its last statement.
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` is not used on Linux: it survives ``execve``, so a
child started by a process that once held 1.5 GiB reports 1.5 GiB even if it never used more
than 9 MiB. Where ``/proc`` is missing (macOS) or the kernel's pid cannot be found, a hidden last
cell (added to an in-memory copy of the notebook only) reports ``ru_maxrss``, marked approximate.

Times are wall-clock medians over ``--repeat`` runs (default 3; 1 with ``--quick``); peaks are the
largest of the runs. Kernel wall times include starting and shutting down the kernel.
Exit status: 0 when every measurement ran (a missed target is reported, not an error), 1 when a
notebook or another measurement failed (the table is still written), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
NOTEBOOKS = ("01_tokenization", "02_embedding_lookup", "03_rmsnorm", "04_rope")
BUILD_SITE = REPO_ROOT / "tools" / "build_site.py"
MIB = 2**20

#: The issue's targets (issue 9), for a 2-core, 24 GiB machine.
NOTEBOOK_PEAK_FACTOR = 1.3   # each notebook's peak <= 1.3 x the baseline kernel's peak
SERIES_SECONDS = 40.0        # the four notebooks in sequence
STANDIN_SECONDS = 15.0       # building the stand-in
LOADER_RATIO = 4.0           # plain torch.load peak / memory-mapped loader peak

BASELINE_SOURCE = "import torch\nimport tiktoken\nimport matplotlib.pyplot as plt"

COLUMNS = ("Measurement", "Wall time (s)", "Peak RSS (MiB)", "Ratio", "Target", "Met")


# --------------------------------------------------------------------------- small helpers


def log(message: str) -> None:
    """One progress line on stdout."""
    print(f"[bench] {message}", flush=True)


def clean_env() -> dict:
    """This process's environment without ``LLAMA3_*``: every measurement runs on the stand-in."""
    return {k: v for k, v in os.environ.items() if not k.startswith("LLAMA3_")}


def scrub(text: str) -> str:
    """``text`` without absolute paths of this machine (repository, temp folder, home)."""
    for path, shown in ((str(REPO_ROOT), "."), (tempfile.gettempdir(), "<tmp>"), (str(Path.home()), "~")):
        if len(path) > 1:
            text = text.replace(path, shown)
    return text


def first_line(text: str, limit: int = 70) -> str:
    """First non-empty line of ``text``, shortened to ``limit`` characters."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "").replace("`", "'")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def read_status(pid: int | str = "self") -> dict[str, int]:
    """``VmHWM``, ``VmRSS``, ``RssAnon``, ``RssFile`` of process ``pid`` in bytes, from ``/proc``; ``{}`` when unavailable."""
    out = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                    out[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return {}
    return out


#: Appended to every ``python -c`` measurement and used by the hidden-cell fallback: prints
#: ``BENCH_PEAK <bytes> <method>`` with the process's own peak resident memory.
PEAK_REPORT = r'''
def _bench_peak():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024, "VmHWM"
    except OSError:
        pass
    import resource, sys
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return (r if sys.platform == "darwin" else r * 1024), "ru_maxrss"
print("BENCH_PEAK %d %s" % _bench_peak(), flush=True)
'''


def parse_peak(text: str) -> tuple[int | None, str]:
    """The last ``BENCH_PEAK`` line of ``text``: (bytes, method), or (None, "")."""
    found = re.findall(r"BENCH_PEAK (\d+) (\w+)", text)
    return (int(found[-1][0]), found[-1][1]) if found else (None, "")


# --------------------------------------------------------------------------- results


@dataclass
class Result:
    """One measured row: times and peaks of every repeat, or why it could not be measured."""

    label: str
    times: list[float] = field(default_factory=list)
    peaks: list[int] = field(default_factory=list)
    status: str = "ok"          # ok | failed | not available | not present | skipped (--quick)
    detail: str = ""            # first line of the error, shown under the table
    approximate: bool = False   # peak from ru_maxrss instead of VmHWM
    profile: list = field(default_factory=list)  # kernels: per-cell readings of the peak run
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.times)

    @property
    def time(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def peak(self) -> int | None:
        return max(self.peaks) if self.peaks else None

    def fail(self, status: str, detail: str = "") -> "Result":
        self.status, self.detail = status, scrub(first_line(detail, 200))
        return self


# --------------------------------------------------------------------------- kernels


@dataclass
class CellReading:
    index: int
    source: str
    seconds: float
    hwm: int | None
    rss: int | None
    anon: int | None = None  # anonymous (heap) part of rss
    file: int | None = None  # file-backed part: mapped checkpoint pages, shared libraries


def _kernel_pid(client) -> int | None:
    """Pid of the kernel process started by ``client`` (a local ``python -m ipykernel_launcher``)."""
    prov = getattr(client.km, "provisioner", None)
    proc = getattr(prov, "process", None)
    pid = getattr(proc, "pid", None) or getattr(prov, "pid", None)
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"ipykernel" not in f.read():
                return None
    except OSError:
        return None
    return int(pid)


def run_kernel(nb, timeout: int = 600) -> tuple[float, int | None, bool, list[CellReading], float]:
    """Execute the in-memory notebook ``nb`` in a fresh kernel.

    Returns:
        (wall seconds incl. kernel start and shutdown, peak bytes, approximate?, per-cell readings,
        seconds until the kernel was ready).

    Raises:
        whatever nbclient raises (CellExecutionError, DeadKernelError, TimeoutError...).
    """
    from nbclient import NotebookClient

    readings: list[CellReading] = []
    state: dict = {"pid": None, "fallback": False, "t_cell": 0.0, "ready": 0.0}

    def on_notebook_start(**_):
        state["ready"] = time.perf_counter() - t0
        state["pid"] = _kernel_pid(client)
        if state["pid"] is not None:  # the bare kernel, before any cell: the profile's starting point
            st = read_status(state["pid"])
            readings.append(CellReading(-1, "(kernel started)", 0.0, st.get("VmHWM"), st.get("VmRSS"),
                                        st.get("RssAnon"), st.get("RssFile")))
        else:  # no /proc or not a local kernel: a hidden last cell reports the peak
            import nbformat

            state["fallback"] = True
            client.nb.cells.append(nbformat.v4.new_code_cell(PEAK_REPORT))

    def on_cell_start(**_):
        state["t_cell"] = time.perf_counter()

    def on_cell_executed(cell, cell_index, **_):
        seconds = time.perf_counter() - state["t_cell"]
        st = read_status(state["pid"]) if state["pid"] else {}
        readings.append(CellReading(cell_index, first_line(cell.source), seconds, st.get("VmHWM"), st.get("VmRSS"),
                                    st.get("RssAnon"), st.get("RssFile")))

    from run_notebooks import local_kernel_config

    with local_kernel_config() as config:  # IPC sockets, as tools/run_notebooks.py runs kernels
        client = NotebookClient(
            nb, config=config, timeout=timeout, kernel_name="python3", record_timing=False,
            resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
            on_notebook_start=on_notebook_start, on_cell_start=on_cell_start, on_cell_executed=on_cell_executed,
        )
        t0 = time.perf_counter()
        client.execute(env=clean_env())
    wall = time.perf_counter() - t0
    if state["fallback"]:
        text = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []) if o.get("output_type") == "stream")
        peak, method = parse_peak(text)
        return wall, peak, method != "VmHWM", [], state["ready"]
    peak = readings[-1].hwm if readings else None
    return wall, peak, False, readings, state["ready"]


def baseline_notebook():
    """An in-memory notebook whose only cell imports torch, tiktoken and matplotlib.pyplot."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells.append(nbformat.v4.new_code_cell(BASELINE_SOURCE))
    return nb


def measure_kernel(result: Result, load) -> None:
    """One run of the notebook returned by ``load()`` into ``result`` (marks it failed on an error)."""
    from nbclient.exceptions import CellExecutionError

    try:
        nb = load()
        wall, peak, approx, readings, ready = run_kernel(nb)
    except CellExecutionError as e:
        result.fail("failed", f"{e.ename}: {e.evalue}" if getattr(e, "ename", None) else str(e))
        return
    except Exception as e:  # dead kernel, timeout, unreadable notebook: the row says failed
        result.fail("failed", f"{type(e).__name__}: {e}")
        return
    result.times.append(wall)
    if peak is not None:
        result.peaks.append(peak)
        if result.peak == peak:
            result.profile = readings
            result.extra["kernel_ready"] = ready
    result.approximate |= approx


# --------------------------------------------------------------------------- fresh processes


def run_python(code: str, args: list[str] = (), timeout: int = 900) -> tuple[float, int | None, str, str]:
    """Run ``python -c code args`` from the repository root; the child reports its own peak at its end.

    Returns:
        (wall seconds incl. interpreter start, peak bytes, peak method, stdout).

    Raises:
        RuntimeError: the child failed (message: the last line of its stderr).
    """
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code + PEAK_REPORT, *args], cwd=REPO_ROOT, env=clean_env(),
                          capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        err = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        raise RuntimeError(err[-1] if err else f"exit status {proc.returncode}")
    peak, method = parse_peak(proc.stdout)
    return wall, peak, method, proc.stdout


def measure_python(result: Result, code: str, args: list[str] = ()) -> None:
    try:
        wall, peak, method, out = run_python(code, list(args))
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        result.fail("failed", str(e))
        return
    if "BENCH_NOT_AVAILABLE" in out:
        result.fail("not available", out.split("BENCH_NOT_AVAILABLE", 1)[1])
        return
    result.times.append(wall)
    if peak is not None:
        result.peaks.append(peak)
    result.approximate |= method != "VmHWM"
    for key, value in re.findall(r"BENCH_INFO (\w+) (\S+)", out):
        result.extra[key] = float(value)
    if "BENCH_JSON " in out:
        result.extra.update(json.loads(out.split("BENCH_JSON ", 1)[1].splitlines()[0]))


#: Python + torch alone; also reports torch's version and the ATen CPU capability in use.
TORCH_ONLY = r'''
import json, torch
print("BENCH_JSON " + json.dumps({"torch": torch.__version__, "capability": torch.backends.cpu.get_cpu_capability(),
      "threads": torch.get_num_threads()}))
'''

#: The memory-mapped loader, touching what notebooks 02-04 touch.
MMAP_LOADER = r'''
import json, sys
import torch
import plumbing
ids = torch.tensor(json.loads(sys.argv[1]))
ckpt = plumbing.open_checkpoint()
x = ckpt.get("tok_embeddings.weight")[ids]
q = x @ ckpt.get("layers.0.attention.wq.weight").T
k = x @ ckpt.get("layers.0.attention.wk.weight").T
print("BENCH_INFO rows", len(ids))
'''

#: The same reads after a plain (not memory-mapped) torch.load of the whole checkpoint.
PLAIN_LOADER = r'''
import json, sys
import torch
ids = torch.tensor(json.loads(sys.argv[1]))
state = torch.load(sys.argv[2], map_location="cpu", weights_only=True)
x = state["tok_embeddings.weight"][ids]
q = x @ state["layers.0.attention.wq.weight"].T
k = x @ state["layers.0.attention.wk.weight"].T
'''

#: What ``plumbing.setup`` runs in a child process to tokenize the prompt (``plumbing.py tokenize``).
TOKENIZER_CHILD = r'''
import io, json, sys
import plumbing
if not hasattr(plumbing.tokenizer, "tokenize_command"):
    print("BENCH_NOT_AVAILABLE plumbing.setup tokenizes inside the kernel")
    sys.exit(0)
path = plumbing.tokenizer_path(plumbing.find_weights())
text = plumbing.prompt().encode("utf-8", "surrogatepass").decode("latin-1")
sys.stdin = io.StringIO(json.dumps({"path": str(path), "text": text}))
plumbing.tokenizer.tokenize_command()
'''

STANDIN_BUILD = r'''
import sys
from pathlib import Path

import plumbing
plumbing.build_standin(Path(sys.argv[1]), progress=False)
'''

def measure_series(result: Result, out_dir: Path) -> None:
    """``tools/run_notebooks.py --out <tmp> <the four notebooks>`` in a fresh process, timed."""
    cmd = [sys.executable, str(REPO_ROOT / "tools" / "run_notebooks.py"), "--out", str(out_dir),
           *[f"notebooks/{n}.ipynb" for n in NOTEBOOKS]]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=clean_env(), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", proc.stderr)
        lines = [ln for ln in plain.splitlines() if re.match(r"^\w*(Error|Exception)\b", ln.strip())]
        result.fail("failed", lines[-1] if lines else f"exit status {proc.returncode}")
        return
    result.times.append(wall)


def measure_html(result: Result, executed_dir: Path | None, out_dir: Path) -> None:
    """``tools/build_site.py --src <executed notebooks> --out <tmp>`` timed.

    The executed copies of the series run are exported (the committed notebooks, which carry their
    outputs, when that run failed). "not available" when the script is missing or fails (never an error).
    """
    if not BUILD_SITE.is_file():
        result.fail("not available", "tools/build_site.py does not exist")
        return
    src = executed_dir if executed_dir is not None and any(executed_dir.glob("*.ipynb")) else NOTEBOOK_DIR
    cmd = [sys.executable, str(BUILD_SITE), "--src", str(src), "--out", str(out_dir)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=clean_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=900)
    except (subprocess.TimeoutExpired, OSError) as e:
        result.fail("not available", f"tools/build_site.py: {e}")
        return
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        err = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        result.fail("not available", f"tools/build_site.py failed: {err[-1] if err else proc.returncode}")
        return
    result.times.append(wall)


# --------------------------------------------------------------------------- the machine


def machine() -> dict:
    """What the table's header says about this machine (no host name, user name or path)."""
    info: dict = {}
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
        names = re.findall(r"^model name\s*:\s*(.+)$", text, re.M)
        info["cpu"] = names[0].strip() if names else platform.processor() or "unknown"
    except OSError:
        info["cpu"] = platform.processor() or platform.machine() or "unknown"
    info["logical"] = os.cpu_count()
    try:
        info["usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["usable"] = os.cpu_count()
    try:
        import psutil

        info["physical"] = psutil.cpu_count(logical=False)
        info["ram"] = psutil.virtual_memory().total
    except ImportError:  # psutil is a dependency of ipykernel; stay useful without it
        info["physical"] = None
        try:
            kb = re.search(r"^MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text(), re.M)
            info["ram"] = int(kb.group(1)) * 1024 if kb else None
        except OSError:
            info["ram"] = None
    info["os"] = f"{platform.system()} {platform.release()} {platform.machine()}"
    info["python"] = platform.python_version()
    return info


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"


# --------------------------------------------------------------------------- the table


def _mib(b: int | None) -> str:
    return f"{b / MIB:.0f}" if b is not None else "—"


def _sec(s: float | None) -> str:
    return f"{s:.2f}" if s is not None else "—"


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def build_rows(r: dict[str, Result], quick: bool) -> list[tuple[str, ...]]:
    """The table's rows (strings), in the order of :data:`COLUMNS`."""
    rows = []
    base = r["baseline"]

    def cells(res: Result, ratio="—", target="—", met="—", with_peak=True):
        if not res.ok:
            status = res.status
            return (res.label, status, status if with_peak else "—", "—", target, "—")
        peak = _mib(res.peak) + (" (approx.)" if res.approximate and res.peak else "") if with_peak else "—"
        return (res.label, _sec(res.time), peak, ratio, target, met)

    rows.append(cells(base, ratio="1.00x" if base.ok else "—", target="reference"))
    for stem in NOTEBOOKS:
        res = r[stem]
        limit = base.peak * NOTEBOOK_PEAK_FACTOR if base.ok and base.peak else None
        target = f"peak <= {NOTEBOOK_PEAK_FACTOR}x baseline" + (f" ({limit / MIB:.0f} MiB)" if limit else "")
        if res.ok and res.peak and limit:
            ratio = res.peak / base.peak
            rows.append(cells(res, f"{ratio:.2f}x", target, _met(res.peak <= limit)))
        else:
            rows.append(cells(res, target=target))
    rows.append(cells(r["tokenizer"]))
    s = r["series"]
    rows.append(cells(s, target=f"<= {SERIES_SECONDS:.0f} s", met=_met(s.time <= SERIES_SECONDS) if s.ok else "—",
                      with_peak=False))
    st = r["standin"]
    rows.append(cells(st, target=f"<= {STANDIN_SECONDS:.0f} s", met=_met(st.time <= STANDIN_SECONDS) if st.ok else "—"))
    rows.append(cells(r["html"], with_peak=False))
    rows.append(cells(r["torch"], target="reference"))
    mm, plain = r["mmap"], r["plain"]
    rows.append(cells(mm))
    rows.append(cells(plain))
    if mm.ok and plain.ok and mm.peak and plain.peak:
        ratio = plain.peak / mm.peak
        rows.append(("Loader: plain peak / memory-mapped peak", "—", "—", f"{ratio:.2f}x",
                     f">= {LOADER_RATIO:.0f}x", _met(ratio >= LOADER_RATIO)))
    else:
        rows.append(("Loader: plain peak / memory-mapped peak", "—", "—", "not available", f">= {LOADER_RATIO:.0f}x", "—"))
    return rows


def markdown_table(rows) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join(["---"] + ["---:"] * 3 + ["---", "---"]) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def real_checkpoint_note(r: dict[str, Result], rows_read: int) -> list[str]:
    """What the loader ratio means for Meta's 16 GB ``consolidated.00.pth``."""
    import plumbing

    p = plumbing.ModelParams.from_dict(plumbing.LLAMA3_8B_PARAMS)
    real_bytes = p.parameter_count() * 2  # bf16
    standin_file = plumbing.STANDIN_DIR / "consolidated.00.pth"
    standin_bytes = standin_file.stat().st_size if standin_file.is_file() else None
    touched = (rows_read * p.dim + (p.n_heads + p.n_kv_heads) * p.head_dim * p.dim) * 2
    mm, plain, torch_only = r["mmap"], r["plain"], r["torch"]
    lines = ["### What the loader ratio means for the real checkpoint", ""]
    if not (mm.ok and plain.ok and mm.peak and plain.peak):
        return lines + ["Not measured (a loader measurement failed).", ""]
    base = torch_only.peak if torch_only.ok and torch_only.peak else 0
    lines.append(
        f"A plain `torch.load` copies every tensor into memory: on the stand-in "
        f"({standin_bytes / 1e9:.2f} GB file) its peak is {plain.peak / MIB:.0f} MiB, "
        f"{(plain.peak - base) / MIB:.0f} MiB above `import torch` alone. "
        f"The memory-mapped loader reads only the pages it touches: {rows_read} rows of `tok_embeddings.weight` "
        f"plus layer-0 `wq` and `wk`, {touched / MIB:.1f} MiB of bf16 data; its peak is {mm.peak / MIB:.0f} MiB, "
        f"{(mm.peak - base) / MIB:.0f} MiB above `import torch`. "
        f"Meta-Llama-3-8B's `consolidated.00.pth` holds {p.parameter_count():,} bf16 parameters "
        f"({real_bytes / 1e9:.1f} GB): a plain load needs about {(base + real_bytes) / 2**30:.1f} GiB of RAM "
        f"(`import torch` + the whole file), more than a 16 GB laptop has free, while the memory-mapped loader "
        f"touches the same {touched / MIB:.1f} MiB and stays near {mm.peak / MIB:.0f} MiB whatever the file's size: "
        f"about {(base + real_bytes) / mm.peak:.0f}x less than a plain load, against "
        f"{plain.peak / mm.peak:.1f}x on the {standin_bytes / 1e9:.2f} GB stand-in."
    )
    return lines + [""]


def profile_lines(r: dict[str, Result]) -> list[str]:
    """Per notebook: where the kernel's peak grew and where the time went (from the peak run)."""
    lines = ["### Profile of the kernels (run with the highest peak)", ""]
    for key in ("baseline", *NOTEBOOKS):
        res = r[key]
        if not res.ok or not res.profile:
            continue
        readings = [c for c in res.profile if c.hwm is not None]
        cells = [c for c in res.profile if c.index >= 0]
        ready = res.extra.get("kernel_ready", 0.0)
        lines.append(f"- **{res.label}**: kernel ready after {ready:.2f} s; {len(cells)} code cells, "
                     f"{sum(c.seconds for c in cells):.2f} s in cells; peak {res.peak / MIB:.0f} MiB "
                     f"(runs: {', '.join(f'{p / MIB:.0f}' for p in res.peaks)} MiB).")
        if readings and readings[0].index < 0:
            lines.append(f"  - the kernel before any cell: peak {readings[0].hwm / MIB:.0f} MiB")
        grow = [(b.hwm - a.hwm, a, b) for a, b in zip(readings, readings[1:]) if b.hwm > a.hwm]
        for delta, a, c in sorted(grow, key=lambda g: -g[0])[:5]:
            split = ""
            if None not in (a.anon, a.file, c.anon, c.file):
                split = (f"; resident memory changed by {(c.anon - a.anon) / MIB:+.0f} MiB anonymous, "
                         f"{(c.file - a.file) / MIB:+.0f} MiB file-backed")
            lines.append(f"  - cell {c.index} (`{c.source}`) raised the peak by {delta / MIB:.0f} MiB "
                         f"to {c.hwm / MIB:.0f} MiB{split}")
        for c in sorted(cells, key=lambda c: -c.seconds)[:3]:
            lines.append(f"  - slow: cell {c.index} (`{c.source}`), {c.seconds:.2f} s")
    return lines + [""]


def render(info: dict, r: dict[str, Result], args, load_start: str, load_end: str, rows_read: int) -> str:
    ram = f"{info['ram'] / 2**30:.1f} GiB" if info.get("ram") else "unknown"
    torch = r["torch"].extra  # the loader reference process reports torch's version and capability
    cores = f"{info['logical']} logical"
    if info.get("physical"):
        cores += f", {info['physical']} physical"
    if info.get("usable") and info["usable"] != info["logical"]:
        cores += f", {info['usable']} usable by this process"
    out = [
        "## Benchmark: time and memory of the series" + (" (quick smoke run: numbers not meaningful)" if args.quick else ""),
        "",
        f"- CPU: {info['cpu']} ({cores})",
        f"- RAM: {ram}",
        f"- OS: {info['os']}; Python {info['python']}",
        f"- torch {torch.get('torch', 'not measured')} ({torch.get('threads', '?')} threads), "
        f"ATen CPU capability in use: {torch.get('capability', 'not measured')}",
        f"- load average (1, 5, 15 min) at start: {load_start}; at end: {load_end}",
        f"- weights: the synthetic stand-in (`data/standin/`); {args.repeat} run(s) per measurement "
        "(HTML export: 1), median wall time, largest peak",
        "",
        markdown_table(build_rows(r, args.quick)),
        "",
        "Peak RSS is the process's peak resident memory (Linux `VmHWM`; for a kernel read from "
        "`/proc/<kernel pid>/status` after its last cell, before shutdown). Kernel wall times include "
        "starting and stopping the kernel. Baseline: a kernel whose only cell imports torch, tiktoken and "
        "matplotlib.pyplot. Whole series: `tools/run_notebooks.py` on the four notebooks in one process. "
        "Loader rows: fresh `python -c` processes, warm page cache. Ratio: a kernel's peak over the baseline "
        "kernel's; for the loader, the plain load's peak over the memory-mapped loader's.",
        "",
    ]
    tok = r["tokenizer"]
    if tok.ok and tok.peak:
        out += [f"`plumbing.setup()` tokenizes the prompt in a child process ({tok.time:.2f} s, peak "
                f"{tok.peak / MIB:.0f} MiB) that exits before the setup cell ends: the kernels' peaks above do not "
                "include it, and for that moment the machine holds both the kernel and the child.", ""]
    notes = [f"- {res.label}: {res.status}: {res.detail}" for res in r.values() if res.detail]
    if notes:
        out += ["Notes:", "", *notes, ""]
    out += real_checkpoint_note(r, rows_read)
    out += profile_lines(r)
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- main


def prompt_ids() -> list[int]:
    """The default prompt's token ids (with ``<|begin_of_text|>``), as notebook 01 computes them."""
    import plumbing

    return plumbing.encode_prompt(plumbing.load_tokenizer(plumbing.default_tokenizer_path()), plumbing.DEFAULT_PROMPT)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: baseline kernel, notebook 01, the loaders, the table; once each")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "bench.md", help="Markdown file to write")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement (default 3; 1 with --quick)")
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    import nbformat
    import plumbing

    load_start = load_average()
    busy = load_start[:1].isdigit() and float(load_start.split()[0]) >= 1.0
    log(f"load average {load_start}" + ("; the machine is busy: times will be high" if busy else ""))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    log("describing the machine")
    info = machine()
    log("making sure the stand-in exists")
    plumbing.ensure_standin(progress=True)
    checkpoint = plumbing.STANDIN_DIR / "consolidated.00.pth"
    ids = prompt_ids()

    r: dict[str, Result] = {"baseline": Result("Baseline kernel: imports torch, tiktoken, matplotlib.pyplot")}
    for stem in NOTEBOOKS:
        r[stem] = Result(f"Notebook {stem}")
    r["tokenizer"] = Result("Tokenizer child process started by plumbing.setup (outside the kernel)")
    r["series"] = Result("Whole series: 4 notebooks in sequence")
    r["standin"] = Result("Stand-in build (fresh process, temporary folder)")
    r["html"] = Result("HTML export (tools/build_site.py)")
    r["torch"] = Result("Loader reference: python + import torch")
    r["mmap"] = Result(f"Loader: memory-mapped open_checkpoint + {len(ids)} embedding rows + layer-0 wq, wk")
    r["plain"] = Result("Loader: plain torch.load of the whole checkpoint")

    present = {stem: (NOTEBOOK_DIR / f"{stem}.ipynb").is_file() for stem in NOTEBOOKS}
    kernels = ["baseline"] + [s for s in NOTEBOOKS if present[s] and (not args.quick or s == NOTEBOOKS[0])]
    for stem in NOTEBOOKS:
        if not present[stem]:
            r[stem].fail("not present", f"notebooks/{stem}.ipynb does not exist")
        elif stem not in kernels:
            r[stem].status = "skipped (--quick)"

    steps = []
    for rep in range(args.repeat):
        for key in kernels:
            steps.append((key, rep))
    for rep in range(args.repeat):
        steps += [("tokenizer", rep), ("torch", rep), ("mmap", rep), ("plain", rep)]
    if not args.quick:
        for rep in range(args.repeat):
            steps += [("series", rep), ("standin", rep)]
        steps.append(("html", 0))
    else:
        for key in ("series", "standin", "html"):
            r[key].status = "skipped (--quick)"

    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    executed = None
    try:
        for n, (key, rep) in enumerate(steps, 1):
            res = r[key]
            if res.status not in ("ok",):
                continue  # failed before: don't repeat a failure
            runs = 1 if key == "html" else args.repeat
            log(f"{n}/{len(steps)} {res.label} (run {rep + 1}/{runs})")
            if key == "baseline":
                measure_kernel(res, baseline_notebook)
            elif key in NOTEBOOKS:
                measure_kernel(res, lambda key=key: nbformat.read(NOTEBOOK_DIR / f"{key}.ipynb", as_version=4))
            elif key == "tokenizer":
                measure_python(res, TOKENIZER_CHILD)
            elif key == "torch":
                measure_python(res, TORCH_ONLY)
            elif key == "mmap":
                measure_python(res, MMAP_LOADER, [json.dumps(ids)])
            elif key == "plain":
                measure_python(res, PLAIN_LOADER, [json.dumps(ids), str(checkpoint)])
            elif key == "series":
                if not all(present.values()):
                    res.fail("not present", "not all four notebooks exist")
                    continue
                out_dir = workdir / f"series{rep}"
                measure_series(res, out_dir)
                if res.ok:
                    executed = out_dir  # exported by the HTML step
            elif key == "standin":
                # next to the output (build/ for `make bench`): the file system the stand-in is built on
                target = Path(tempfile.mkdtemp(prefix=".bench-standin-", dir=args.out.parent))
                try:
                    measure_python(res, STANDIN_BUILD, [str(target)])
                finally:
                    shutil.rmtree(target, ignore_errors=True)
            elif key == "html":
                measure_html(res, executed, workdir / "site")
            if res.ok and res.times:
                peak = f", peak {res.peaks[-1] / MIB:.0f} MiB" if res.peaks and len(res.peaks) == len(res.times) else ""
                log(f"    {res.times[-1]:.2f} s{peak}")
            else:
                log(f"    {res.status}: {res.detail}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    text = render(info, r, args, load_start, load_average(), len(ids))
    args.out.write_text(text, encoding="utf-8")
    print()
    print(text)
    log(f"written to {scrub(str(args.out.resolve()))}")
    failed = [res.label for key, res in r.items() if res.status == "failed"]
    if failed:
        log("failed: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
