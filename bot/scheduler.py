"""Scheduled sync inside `sleuth serve`: each source is synced when its interval has passed since its last
finished sync, and its permissions re-read on their own, shorter interval (`SLEUTH_PERMISSION_SYNC_INTERVAL_S`).
Several workers may run this; the per-source lease in the database lets one sync at a time (the others see
"busy" and skip). `sleuth sync` from cron does the same work on demand.

The same tick runs the other periodic jobs (`also`, e.g. the admin digest), each guarding itself against the
other workers through the database the same way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from connectors.sync_service import SyncService

log = logging.getLogger(__name__)

TICK_S = 60.0


class SyncScheduler:
    def __init__(
        self,
        service: SyncService,
        *,
        tick_s: float = TICK_S,
        clock: Callable[[], datetime] | None = None,
        also: Sequence[Callable[[datetime], object]] = (),
    ) -> None:
        self._service, self._tick_s, self._also = service, tick_s, list(also)
        self._clock = clock or (lambda: datetime.now(UTC))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sleuth-sync", daemon=True)

    def run_once(self) -> list[str]:
        now = self._clock()
        synced = self._service.run_due(now)
        for task in self._also:
            try:
                task(now)
            except Exception:  # one periodic job failing must not stop the syncs; the error is logged
                log.exception("scheduled task failed")
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
