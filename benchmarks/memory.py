"""Peak memory of a process and its children, sampled in a thread (for `make bench`).

On Linux ``/proc/PID/status`` also gives ``RssAnon`` (memory the system cannot reclaim, unlike the page cache behind
memory-mapped weights) and ``VmHWM`` (the exact peak); elsewhere peak RSS is sampled and anonymous memory is ``None``.
"""

from __future__ import annotations

import threading

import psutil

GiB = 2**30


def status(pid: int) -> dict[str, int]:
    """``VmHWM``, ``VmRSS`` and ``RssAnon`` of process ``pid`` in bytes, from ``/proc``; ``{}`` where unavailable."""
    out = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon"):
                    out[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return {}
    return out


def usage(proc: psutil.Process) -> tuple[int, int | None, int | None]:
    """(rss, anonymous, peak rss so far) of ``proc`` in bytes; ``None`` where the system does not say."""
    st = status(proc.pid)
    if "VmRSS" in st:
        return st["VmRSS"], st.get("RssAnon"), st.get("VmHWM")
    mem = proc.memory_info()
    shared = getattr(mem, "shared", None)  # Linux without RssAnon (old kernels): anon ~ rss - shared
    return mem.rss, (mem.rss - shared if shared is not None else None), None


class Watch:
    """Sample process ``pid`` and its children every ``interval`` seconds, from creation until :meth:`stop`.

    Attributes (bytes):
        peak_rss: the process's own peak resident memory: its last ``VmHWM`` reading on Linux, else
            the largest sampled rss.
        peak_anon: the largest sampled sum of anonymous memory over the process and its children
            (``None`` where the system does not report it).
        exceeded: why the processes were killed, or ``None``: anonymous memory above ``limit``, or
            the machine's available memory below ``reserve`` (so the other programs keep running).
    """

    def __init__(self, pid: int, interval: float = 0.02, limit: int | None = None, reserve: int | None = None):
        self.root = psutil.Process(pid)
        self.interval, self.limit, self.reserve = interval, limit, reserve
        self.peak_rss = self.peak_anon = self._mark = None
        self.exceeded = None
        self._procs = [self.root]
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            if n % 5 == 0:  # finding children scans every process: every 0.1 s is enough
                try:
                    self._procs = [self.root, *self.root.children(recursive=True)]
                except psutil.Error:
                    return
            n += 1
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> None:
        """Read every watched process once, update the peaks, kill the processes when over the limits."""
        with self._lock:
            self._sample()

    def _sample(self) -> None:
        anon_sum = 0
        for proc in self._procs:
            try:
                rss, anon, hwm = usage(proc)
            except (psutil.Error, OSError):
                continue  # exited between two samples
            if proc is self.root:
                self.peak_rss = max(hwm or rss, self.peak_rss or 0)
            anon_sum = None if anon is None or anon_sum is None else anon_sum + anon
        if anon_sum is not None:
            self.peak_anon = max(anon_sum, self.peak_anon or 0)
            self._mark = max(anon_sum, self._mark or 0)
            if self.limit and anon_sum > self.limit:
                self.kill(f"exceeded {self.limit / GiB:.0f} GiB of anonymous memory")
        if self.reserve and psutil.virtual_memory().available < self.reserve:
            self.kill(f"stopped: the machine had less than {self.reserve / GiB:.1f} GiB available")

    def mark(self) -> int | None:
        """The peak of anonymous memory since the previous call (a cell's peak, for the profile)."""
        self.sample()
        with self._lock:
            peak, self._mark = self._mark, None
        return peak

    def kill(self, why: str) -> None:
        """Kill the watched processes, children first, and record ``why``."""
        self.exceeded = self.exceeded or why
        for proc in reversed(self._procs):
            try:
                proc.kill()
            except psutil.Error:
                pass

    def stop(self) -> Watch:
        """Take a last sample (while the process still runs, if it does) and stop the thread."""
        if self.root.is_running():
            self.sample()
        self._stop.set()
        self._thread.join()
        return self
