"""Peak resident memory: the kernel's lifetime peak (`ru_maxrss`) and a psutil sampler for one phase."""

from __future__ import annotations

import resource
import sys
import threading
from types import TracebackType

import psutil

SAMPLE_EVERY_S = 0.1


def process_peak_mb() -> float:
    """This process's peak RSS so far, in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_mb() -> float:
    return float(psutil.Process().memory_info().rss) / (1024 * 1024)


class RssSampler:
    """Samples RSS in a background thread while the block runs; `peak_mb` is the highest value seen."""

    def __init__(self, every_s: float = SAMPLE_EVERY_S) -> None:
        self.every_s = every_s
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self) -> None:
        process = psutil.Process()
        while True:
            self.peak_mb = max(self.peak_mb, float(process.memory_info().rss) / (1024 * 1024))
            if self._stop.wait(self.every_s):
                return

    def __enter__(self) -> RssSampler:
        self.peak_mb = current_mb()
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.peak_mb = max(self.peak_mb, current_mb())
