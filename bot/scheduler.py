"""Scheduled sync inside `sleuth serve` and `sleuth worker`: each source is synced when its interval has passed
since its last finished sync, and its permissions re-read on their own, shorter interval
(`SLEUTH_PERMISSION_SYNC_INTERVAL_S`). Every process runs a scheduler, but with `leases` only the holder of the
`scheduled-sync` lease ticks (one elected process; another takes over within `LEASE_TICKS` ticks of its death),
and the per-source lease in the database still lets one sync at a time. `sleuth sync` from cron does the same
work on demand.

The same tick runs the other periodic jobs (`also`, e.g. the admin digest), each guarding itself against the
other workers through the database the same way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from connectors.leases import Leases
from connectors.sync_service import SyncService

log = logging.getLogger(__name__)

TICK_S = 60.0
LEASE_NAME = "scheduled-sync"
LEASE_TICKS = 3  # the elected process renews every tick; its lease outlives a few missed ticks


class SyncScheduler:
    def __init__(
        self,
        service: SyncService,
        *,
        tick_s: float = TICK_S,
        clock: Callable[[], datetime] | None = None,
        also: Sequence[Callable[[datetime], object]] = (),
        leases: Leases | None = None,
        holder: str = "",
    ) -> None:
        self._service, self._tick_s, self._also = service, tick_s, list(also)
        self._leases, self._holder = leases, holder
        self._clock = clock or (lambda: datetime.now(UTC))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sleuth-sync", daemon=True)

    def run_once(self) -> list[str]:
        """Syncs what is due and runs the periodic jobs, if this process is the elected one (always, without
        `leases`)."""
        ttl_s = self._tick_s * LEASE_TICKS
        if self._leases is not None and not self._leases.hold(LEASE_NAME, self._holder, ttl_s):
            return []
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
        if self._leases is not None:
            self._leases.release(LEASE_NAME, self._holder)
