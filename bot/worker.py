"""Worker threads that claim jobs from the queue and answer them. Several processes may run pools on one
database: claims are atomic and leased, and a job queued in another process is found by polling.

While a job runs, a `Heartbeat` renews its short lease, so a job whose worker died is claimable again within
one lease (seconds), while a slow investigation is never taken over. A restarted process releases at once the
jobs that its dead predecessor on this host still held (`release_orphans`).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from types import TracebackType
from typing import Protocol

from sqlalchemy.exc import SQLAlchemyError

from bot.jobs import Job, JobQueue

log = logging.getLogger(__name__)

POLL_S = 1.0
STOP_TIMEOUT_S = 30.0
HEARTBEATS_PER_LEASE = 3


class Runs(Protocol):
    def run(self, job: Job, worker: str) -> None: ...


def worker_name(index: int) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{index}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def is_dead_local_worker(worker: str) -> bool:
    """A worker of this host whose process is gone, or of an earlier process that had our pid (containers).

    Called before this process's workers start, so no job is claimed by this pid yet.
    """
    parts = worker.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    return pid == os.getpid() or not _pid_alive(pid)


class Heartbeat:
    """Renews a job's lease every `interval_s` until stopped; tells `lost` when the lease is gone."""

    def __init__(self, jobs: JobQueue, job_id: int, worker: str, interval_s: float) -> None:
        self._jobs, self._job_id, self._worker, self._interval_s = jobs, job_id, worker, interval_s
        self._stop = threading.Event()
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{job_id}", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                if not self._jobs.renew(self._job_id, self._worker):
                    self.lost.set()
                    return
            except SQLAlchemyError:  # the database hiccuped: the next beat tries again
                log.warning("lease not renewed", extra={"job": self._job_id})

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self._interval_s + 5)


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
        with Heartbeat(self._jobs, job.id, worker, self._jobs.lease_s / HEARTBEATS_PER_LEASE):
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
        try:
            self._jobs.release_orphans(is_dead_local_worker)
        except SQLAlchemyError:  # the database is down: the leases run out on their own
            log.exception("could not release the jobs of dead workers")
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
