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

from connectors.base import Connector
from connectors.catalog import SourceEntry
from connectors.knowledge.store import KnowledgeStore
from connectors.sync import Progress, SyncSummary, source_status, sync_source

log = logging.getLogger(__name__)


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
    ) -> None:
        self._store, self._sources, self._connector = store, sources, connector

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

    def run_due(self, now: datetime) -> list[str]:
        """Sync every source that is due; returns the names that ran (a source busy elsewhere did not)."""
        synced = []
        for name in due_sources(self._sources(), self.status(), now):
            if self.run(name).status != "busy":
                synced.append(name)
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
