"""Calls in flight per model and host, shared by every worker thread and process on this machine.

A single-slot server (Ollama's default `OLLAMA_NUM_PARALLEL=1`, llama-server `--parallel 1`) queues a second
request behind the first, and the client's timeout runs while it waits: four askers at once time out in a
cascade. A slot is taken before a call starts and given back when its request has ended, so the queue is
here, where the wait counts against the question's deadline and not against the call's own timeout.

Slots are `max_in_flight` lock files per (model, URL) under `slots_dir`, held with `flock`: one lock per open
file, so threads of one process and separate `sleuth worker` processes exclude each other alike, and a process
that dies lets go of its slot with its files. A thread lock in front keeps one process's threads from
polling each other.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

POLL_S = 0.02  # while every slot is held by another process
_LOCAL: dict[str, threading.BoundedSemaphore] = {}
_LOCAL_GUARD = threading.Lock()


class SlotTimeout(Exception):
    """No slot became free before the deadline."""


class Slot:
    def __init__(self, handle: IO[bytes], local: threading.BoundedSemaphore) -> None:
        self._handle, self._local = handle, local
        self._released = False

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        try:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
        finally:
            self._handle.close()
            self._local.release()


class Slots:
    """`n` slots for one model at one URL."""

    def __init__(
        self,
        key: str,
        n: int,
        *,
        folder: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        digest = hashlib.sha1(key.encode()).hexdigest()[:16]
        self.n = n
        self.folder = Path(folder or tempfile.gettempdir()) / "sleuth-llm-slots" / digest
        self._clock = clock
        with _LOCAL_GUARD:
            self._local = _LOCAL.setdefault(f"{self.folder}:{n}", threading.BoundedSemaphore(n))

    def acquire(self, timeout_s: float) -> Slot:
        """A free slot, waiting at most `timeout_s`; raises SlotTimeout."""
        deadline = self._clock() + max(0.0, timeout_s)
        if not self._local.acquire(timeout=max(0.0, timeout_s)):
            raise SlotTimeout(f"all {self.n} model slot(s) busy for {timeout_s:.1f}s")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            while True:
                for i in range(self.n):
                    handle = open(self.folder / f"slot-{i}", "ab")  # noqa: SIM115 - held until release
                    try:
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        handle.close()
                        continue
                    os.utime(self.folder / f"slot-{i}")
                    return Slot(handle, self._local)
                if self._clock() >= deadline:
                    raise SlotTimeout(f"all {self.n} model slot(s) busy in other processes")
                time.sleep(POLL_S)
        except BaseException:
            self._local.release()
            raise
