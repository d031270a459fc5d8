"""Permission sync through the sync service: scheduled on its own, shorter interval; narrows and widens stored
ACLs (graph included) without touching content; a connector that cannot list ACLs is left alone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from connectors.base import PUBLIC, ConnectorError, CurrentAcl, Failure
from connectors.catalog import SourceEntry
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.folder import FolderConfig, FolderConnector
from connectors.sync import sync_source
from connectors.sync_service import SyncService
from tests.conftest import EXAMPLES

KESTREL = "acme:wiki/ops/kestrel-motion-systems"
NOTES = "acme:wiki/ops/kestrel-negotiation-notes"  # restricted to dana


class ListingFolder(FolderConnector):
    """The demo folder, plus a permission listing a test controls (as Jira's or GitHub's would be)."""

    def __init__(self) -> None:
        super().__init__(FolderConfig(path=EXAMPLES), name="acme")
        self.current: dict[str, frozenset[str]] = {}
        self.listed = 0
        self.stop_after: int | None = None

    def acls(self) -> Iterator[CurrentAcl | Failure]:
        self.listed += 1
        for n, (doc_id, acl) in enumerate(sorted(self.current.items())):
            if self.stop_after is not None and n >= self.stop_after:
                raise ConnectorError("source went away")
            yield CurrentAcl(id=doc_id, acl=acl)


def _service(store: KnowledgeStore, connector: ListingFolder) -> SyncService:
    entry = SourceEntry("acme", "folder", {"path": str(EXAMPLES)}, 3600, "")
    return SyncService(store, lambda: [entry], lambda name: connector, permissions_interval_s=300)


def test_scheduled_permission_sync_narrows_and_widens_without_content(
    make_store: Callable[..., KnowledgeStore], tmp_path: Path
) -> None:
    store = make_store()
    connector = ListingFolder()
    sync_source(store, connector)
    outsider = frozenset({PUBLIC})
    assert store.document(KESTREL, outsider) is not None and store.document(NOTES, outsider) is None
    assert store.resolve(["Kestrel Motion Systems"], outsider)["Kestrel Motion Systems"] == [KESTREL]
    chunks = store.stats()["chunks"]
    connector.current = {KESTREL: frozenset({"group:acme:ops"}), NOTES: frozenset({PUBLIC})}
    service = _service(store, connector)
    now = datetime.now(UTC)

    service.run_due(now)

    assert store.document(KESTREL, outsider) is None
    assert store.resolve(["Kestrel Motion Systems"], outsider)["Kestrel Motion Systems"] == []  # graph too
    assert store.document(NOTES, outsider) is not None
    assert any(
        h.doc_id == NOTES for h in store.search_text("Kestrel negotiation notes", outsider, 20, mode="dense")
    )
    assert store.stats()["chunks"] == chunks == store.vectors.count()
    service.run_due(now + timedelta(seconds=60))  # not due again yet (content is not due either)
    assert connector.listed == 1
    service.run_due(now + timedelta(seconds=301))
    assert connector.listed == 2


def test_a_listing_that_stops_midway_applies_what_it_read(make_store: Callable[..., KnowledgeStore]) -> None:
    store = make_store()
    connector = ListingFolder()
    sync_source(store, connector)
    connector.current = {KESTREL: frozenset({"group:acme:ops"}), NOTES: frozenset({PUBLIC})}
    connector.stop_after = 1

    summary = _service(store, connector).run_permissions("acme")

    assert (summary.status, summary.checked, summary.changed) == ("partial", 1, 1)
    assert summary.error == "source went away"
    assert store.document(KESTREL, frozenset({PUBLIC})) is None


def test_a_source_without_a_listing_is_left_alone(make_store: Callable[..., KnowledgeStore]) -> None:
    store = make_store()
    plain = FolderConnector(FolderConfig(path=EXAMPLES), name="acme")
    sync_source(store, plain)
    service = SyncService(store, lambda: [], lambda name: plain)
    assert service.run_permissions("acme").status == "unsupported"
