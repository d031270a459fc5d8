"""Syncs asked for by events, debounced and run in the background: Slack says a member left a private channel
(re-read the source's permissions now, not at the next scheduled permission sync) or a thread was edited (sync
its content soon). A burst of events (someone removed from ten channels, a thread edited five times) becomes one
run per source and kind, `delay_s` after the first request; a request that comes while that run is going makes
one more run after it, since the running one may have read Slack before the change.

Runs go through the `SyncService`, like the scheduler's: the same lease (a content sync busy elsewhere is
skipped; its hints stay for the next), log lines and summaries. One thread runs them, never a request thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Literal, Protocol

log = logging.getLogger(__name__)

Kind = Literal["permissions", "content"]
ORDER: dict[Kind, int] = {"permissions": 0, "content": 1}  # permissions first: they are the leak


class Syncs(Protocol):
    """What the trigger runs: `connectors.sync_service.SyncService`."""

    def run(self, name: str) -> object: ...

    def run_permissions(self, name: str) -> object: ...


class SyncTrigger:
    """`delay_s`: how long each kind of run waits for more requests to join it."""

    def __init__(
        self,
        service: Syncs,
        *,
        delay_s: dict[Kind, float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._service, self._delay_s, self._clock = service, dict(delay_s), clock
        self._due: dict[tuple[str, Kind], float] = {}
        self._running: tuple[str, Kind] | None = None
        self._closed = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def request(self, name: str, kind: Kind) -> None:
        """Asks for a run of one source; returns at once."""
        with self._changed:
            if self._closed:
                return
            self._due.setdefault((name, kind), self._clock() + self._delay_s.get(kind, 0.0))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="sleuth-event-sync", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def settle(self, timeout_s: float) -> bool:
        """Waits until nothing is due or running (tests, and a clean shutdown); False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while self._due or self._running is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def close(self) -> None:
        """Stops taking requests; a run going on finishes, the ones not started are dropped (the scheduler's
        syncs and the noted hints cover them)."""
        with self._changed:
            self._closed = True
            self._due.clear()
            self._changed.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=30)

    def _loop(self) -> None:
        while True:
            with self._changed:
                job = self._next()
                if job is None:
                    return
                self._running = job
            try:
                self._run(*job)
            finally:
                with self._changed:
                    self._running = None
                    self._changed.notify_all()

    def _next(self) -> tuple[str, Kind] | None:
        """The next due run, waiting for it (called holding the condition); None once closed."""
        while not self._closed:
            now = self._clock()
            due = sorted((ORDER[kind], at, name, kind) for (name, kind), at in self._due.items() if at <= now)
            if due:
                _, _, name, kind = due[0]
                del self._due[(name, kind)]
                return name, kind
            wait = min(self._due.values(), default=now + 60.0) - now
            self._changed.wait(max(wait, 0.01))
        return None

    def _run(self, name: str, kind: Kind) -> None:
        try:
            if kind == "permissions":
                self._service.run_permissions(name)
            else:
                self._service.run(name)
            log.info("event sync finished", extra={"source": name, "kind": kind})
        except (
            Exception
        ):  # a background sync must report, not vanish (as SyncService.start); the error is logged
            log.exception("event sync failed", extra={"source": name, "kind": kind})
