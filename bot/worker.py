"""Worker threads that claim jobs from the queue and answer them. Several processes may run pools on one
database: claims are atomic and leased, and a job queued in another process is found by polling.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from types import TracebackType
from typing import Protocol

from bot.jobs import Job, JobQueue

log = logging.getLogger(__name__)

POLL_S = 1.0
STOP_TIMEOUT_S = 30.0


class Runs(Protocol):
    def run(self, job: Job, worker: str) -> None: ...


def worker_name(index: int) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{index}"


class WorkerPool:
    def __init__(self, jobs: JobQueue, answerer: Runs, *, size: int = 4, poll_s: float = POLL_S) -> None:
        self._jobs, self._answerer, self._size, self._poll_s = jobs, answerer, size, poll_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def run_once(self, worker: str) -> bool:
        """Claims and answers one job; False when there was none."""
        job = self._jobs.claim(worker)
        if job is None:
            return False
        self._answerer.run(job, worker)
        return True

    def _loop(self, worker: str) -> None:
        while not self._stop.is_set():
            try:
                if self.run_once(worker):
                    continue
            except Exception:  # the queue itself failed (database down): keep the thread, retry later
                log.exception("worker could not claim a job")
            self._jobs.wait(self._poll_s, unless=self._stop.is_set)

    def start(self) -> WorkerPool:
        self._stop.clear()
        for index in range(self._size):
            thread = threading.Thread(
                target=self._loop, args=(worker_name(index),), name=f"sleuth-worker-{index}"
            )
            thread.daemon = True
            thread.start()
            self._threads.append(thread)
        log.info("workers started", extra={"workers": self._size})
        return self

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        self._stop.set()
        self._jobs.wake_all()
        for thread in self._threads:
            thread.join(timeout=timeout_s)
        self._threads.clear()

    def __enter__(self) -> WorkerPool:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
