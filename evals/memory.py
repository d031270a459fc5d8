"""Peak resident memory: the kernel's lifetime peak (`ru_maxrss`) and a psutil sampler for one phase (of this
process, or of server processes and their children)."""

from __future__ import annotations

import resource
import sys
import threading
from collections.abc import Callable, Sequence
from types import TracebackType

import psutil

SAMPLE_EVERY_S = 0.1


def process_peak_mb() -> float:
    """This process's peak RSS so far, in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_mb() -> float:
    return float(psutil.Process().memory_info().rss) / (1024 * 1024)


def processes_mb(pids: Sequence[int]) -> float:
    """Memory of these processes and all their children, in MiB: the sum of their proportional set sizes
    (PSS), so memory they share (PostgreSQL's shared buffers across its backends) counts once. RSS where the
    kernel does not tell PSS."""
    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            family = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for process in family:
            try:
                info = process.memory_full_info()
                total += float(getattr(info, "pss", info.rss))
            except psutil.AccessDenied:
                total += float(process.memory_info().rss)
            except psutil.NoSuchProcess:
                continue
    return total / (1024 * 1024)


class RssSampler:
    """Samples RSS in a background thread while the block runs; `peak_mb` is the highest value seen.
    `measure` samples something else than this process (`processes_mb` of a server's processes)."""

    def __init__(self, every_s: float = SAMPLE_EVERY_S, *, measure: Callable[[], float] = current_mb) -> None:
        self.every_s = every_s
        self._measure = measure
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self) -> None:
        while True:
            self.peak_mb = max(self.peak_mb, self._measure())
            if self._stop.wait(self.every_s):
                return

    def __enter__(self) -> RssSampler:
        self.peak_mb = self._measure()
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.peak_mb = max(self.peak_mb, self._measure())
