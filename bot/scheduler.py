"""Scheduled sync inside `sleuth serve`: each source is synced when its interval has passed since its last
finished sync. Several workers may run this; the per-source lease in the database lets one sync at a time
(the others see "busy" and skip). `sleuth sync` from cron does the same work on demand.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.runtime import Runtime
from connectors.catalog import SourceEntry
from connectors.sync import source_status, sync_source

log = logging.getLogger(__name__)

TICK_S = 60.0


def due_sources(
    entries: Iterable[SourceEntry], status: dict[str, dict[str, Any]], now: datetime
) -> list[str]:
    """Names of the sources whose interval has passed since their last finished sync (or never synced)."""
    due = []
    for entry in entries:
        finished = status.get(entry.name, {}).get("last_finished")
        if (
            finished is None
            or datetime.fromisoformat(finished).replace(tzinfo=UTC) + timedelta(seconds=entry.interval_s)
            <= now
        ):
            due.append(entry.name)
    return due


class SyncScheduler:
    def __init__(
        self, rt: Runtime, *, tick_s: float = TICK_S, clock: Callable[[], datetime] | None = None
    ) -> None:
        self._rt, self._tick_s = rt, tick_s
        self._clock = clock or (lambda: datetime.now(UTC))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sleuth-sync", daemon=True)

    def run_once(self) -> list[str]:
        status = {s["source"]: s for s in source_status(self._rt.store)}
        synced = []
        for name in due_sources(self._rt.sources(), status, self._clock()):
            summary = sync_source(self._rt.store, self._rt.connector(name))
            log.info("scheduled sync", extra={"source": name, "status": summary.status})
            if summary.status != "busy":
                synced.append(name)
        return synced

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # the scheduler must outlive one source's bad day; the error is logged
                log.exception("scheduled sync failed")
            self._stop.wait(self._tick_s)

    def __enter__(self) -> SyncScheduler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
