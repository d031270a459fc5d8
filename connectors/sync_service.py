"""The one way a sync starts. The CLI (`sleuth sync`), App Home's "Add source" and the scheduler inside
`sleuth serve` all call this service, so every sync goes through the same lease, log line and summary, and the
question "is a source due?" has one answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from connectors.acl_sync import PermissionSummary, sync_permissions
from connectors.base import Connector
from connectors.catalog import SourceEntry
from connectors.knowledge.store import KnowledgeStore
from connectors.sync import Progress, SyncSummary, source_status, sync_source

log = logging.getLogger(__name__)

PERMISSIONS_INTERVAL_S = 600  # permission sync is cheap and its drift is a leak: more often than content


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


class SyncService:
    """Syncs sources by name. `sources` lists the configured sources (the embedded default included) and
    `connector` builds one by name; both come from the composition root."""

    def __init__(
        self,
        store: KnowledgeStore,
        sources: Callable[[], list[SourceEntry]],
        connector: Callable[[str], Connector],
        *,
        permissions_interval_s: int = PERMISSIONS_INTERVAL_S,
    ) -> None:
        self._store, self._sources, self._connector = store, sources, connector
        self._permissions_interval = timedelta(seconds=permissions_interval_s)

    def run(self, name: str, *, progress: Progress | None = None) -> SyncSummary:
        """Sync one source now, in this thread."""
        summary = sync_source(self._store, self._connector(name), progress=progress)
        log.info(
            "sync finished",
            extra={"source": name, "status": summary.status, "failed": summary.failed},
        )
        return summary

    def run_all(self) -> list[SyncSummary]:
        return [self.run(entry.name) for entry in self._sources()]

    def run_permissions(self, name: str) -> PermissionSummary:
        """Re-read one source's current ACLs now and rewrite those that changed (no content, no embedding)."""
        return sync_permissions(self._store, self._connector(name))

    def run_due(self, now: datetime) -> list[str]:
        """Sync every source that is due, content and (on its shorter interval) permissions; returns the
        names whose content sync ran (a source busy elsewhere did not)."""
        synced = []
        for name in due_sources(self._sources(), self.status(), now):
            if self.run(name).status != "busy":
                synced.append(name)
        for entry in self._sources():
            last = self._store.ledger.permissions_finished(entry.name)
            if last is None or last + self._permissions_interval <= now:
                self.run_permissions(entry.name)
        return synced

    def start(
        self, name: str, *, then: Callable[[SyncSummary | None], None] | None = None
    ) -> threading.Thread:
        """Sync one source in the background (a Slack handler must return at once); `then` runs afterwards
        with the summary, or None when the sync raised (the error is logged)."""

        def work() -> None:
            summary = None
            try:
                summary = self.run(name)
            except Exception:  # a background sync must report, not vanish; the error is logged
                log.exception("background sync failed", extra={"source": name})
            finally:
                if then is not None:
                    then(summary)

        thread = threading.Thread(target=work, name=f"sleuth-sync-{name}", daemon=True)
        thread.start()
        return thread

    def status(self) -> dict[str, dict[str, Any]]:
        return {s["source"]: s for s in source_status(self._store)}
