"""Incremental sync: pull from a connector, write what changed, prune what is gone, record what failed.

- Unchanged documents (same content hash) are never re-embedded.
- A `Checkpoint` from the connector is stored once everything before it is written, so a crash resumes there.
- Deletions come from the connector (`Deleted`) and from pruning against `list_ids()`; pruning is skipped when
  listing fails, so nothing is deleted because a fetch failed.
- One failed item is recorded and the run goes on; an error that stops the run is recorded on the source.
  A run with failures is not "ok": it is `partial` (some documents read) or `failed` (none), with a count per
  reason; the failures of the last finished run stay listed in the ledger (`sleuth sources failures`).
- Skipped items (files that are not documents) are counted by reason, for one summary line.
- When the connector knows its directory (`known_principals()`), ACL entries of its documents that match no
  known principal are reported: those documents are invisible to everyone.
- One sync of a source at a time, even across processes: a lease row in the database.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from connectors.base import (
    Checkpoint,
    Connector,
    ConnectorError,
    Cursor,
    Deleted,
    Failure,
    Skipped,
    SourceDoc,
)
from connectors.knowledge.store import KnowledgeStore

log = logging.getLogger(__name__)

BATCH = 64  # documents embedded together
LEASE = timedelta(minutes=30)
Progress = Callable[[str, int], None]  # (event, count): "seen", "written"


@dataclass
class RunSummary:
    """What one run over a source did, as the CLI, App Home and the ledger show it: content sync's and
    permission sync's alike (each adds its own counts)."""

    source: str
    failed: int = 0
    seconds: float = 0.0
    status: str = "ok"  # ok | partial | failed | error | busy (content) | unsupported (permissions)
    error: str | None = None
    failures: list[dict[str, str]] = field(default_factory=list)  # {id, reason[, detail]}

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SyncSummary(RunSummary):
    """Content sync: `partial` when some items failed, `failed` when they all did, `busy` when another process
    holds the source's lease."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_embedded: int = 0
    skipped: dict[str, list[str]] = field(default_factory=dict)  # reason -> item ids
    acl_warnings: list[dict[str, Any]] = field(default_factory=list)  # {principal, documents}

    @property
    def failures_by_reason(self) -> dict[str, int]:
        return dict(Counter(f["reason"] for f in self.failures).most_common())

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "failures_by_reason": self.failures_by_reason}

    def facts(self) -> dict[str, Any]:
        """What the ledger keeps of a run: counts, not every failure (those are rows of their own)."""
        kept = {k: v for k, v in self.as_dict().items() if k not in {"failures", "skipped"}}
        return kept | {"skipped": {reason: len(ids) for reason, ids in self.skipped.items()}}


class SyncBusy(RuntimeError):
    """Another process holds this source's sync lease."""


def sync_source(
    store: KnowledgeStore, connector: Connector, *, progress: Progress | None = None
) -> SyncSummary:
    summary = SyncSummary(source=connector.name)
    started = time.perf_counter()
    owner = uuid.uuid4().hex
    if not store.ledger.acquire(connector.name, owner, lease=LEASE):
        summary.status = "busy"
        return summary
    started_at = datetime.now(UTC)
    try:
        _run(store, connector, summary, progress or (lambda _e, _n: None))
        if summary.failed:
            read = summary.added + summary.updated + summary.unchanged
            summary.status = "partial" if read else "failed"
        summary.acl_warnings = unmatched_acl(store, connector)
        store.ledger.forget_failures(connector.name, before=started_at)  # a finished run's replace the last's
    except ConnectorError as exc:
        summary.status, summary.error = "error", str(exc)
        log.warning("sync stopped", extra={"source": connector.name, "error": exc.__class__.__name__})
    finally:
        summary.seconds = round(time.perf_counter() - started, 3)
        if summary.status != "busy":
            store.ledger.release(connector.name, summary.status, summary.facts())
    return summary


def _run(store: KnowledgeStore, connector: Connector, summary: SyncSummary, progress: Progress) -> None:
    known = store.content_hashes(connector.name)
    names_before = store.alias_names()
    pending: list[SourceDoc] = []
    touched: set[str] = set()

    def flush() -> None:
        if pending:
            summary.chunks_embedded += store.upsert(pending)
            progress("written", len(pending))
            touched.update(d.id for d in pending)
            pending.clear()

    pulled = connector.pull(store.ledger.load_cursor(connector.name))
    cursor: Cursor
    while True:
        try:
            item = next(pulled)
        except StopIteration as stop:
            cursor = stop.value or {}
            break
        progress("seen", 1)
        if isinstance(item, SourceDoc):
            old = known.get(item.id)
            if old == item.content_hash():
                summary.unchanged += 1
                continue
            if old is None:
                summary.added += 1
            else:
                summary.updated += 1
            known[item.id] = item.content_hash()
            pending.append(item)
            if len(pending) >= BATCH:
                flush()
        elif isinstance(item, Deleted):
            flush()
            if item.id in known:
                summary.deleted += store.delete([item.id])
                known.pop(item.id, None)
        elif isinstance(item, Failure):
            summary.failed += 1
            summary.failures.append({"id": item.id, "reason": item.reason, "detail": item.detail})
            log.warning("item failed", extra={"source": connector.name, "item": item.id})
            shown = f"{item.reason} ({item.detail})" if item.detail else item.reason
            store.ledger.record_failure(connector.name, item.id, shown)
        elif isinstance(item, Skipped):
            summary.skipped.setdefault(item.reason, []).append(item.id)
        elif isinstance(item, Checkpoint):
            flush()
            store.ledger.save_cursor(connector.name, item.cursor)
    flush()
    store.ledger.save_cursor(connector.name, cursor)
    summary.deleted += _prune(store, connector, known)
    full = False
    if summary.added + summary.updated + summary.deleted:
        full = store.alias_names() != names_before
        store.relink_mentions(None if full else touched)
    store.themes.refresh(relink_entities=full)  # places only new chunks; nothing changed, nothing recomputed
    summary.unchanged = max(summary.unchanged, len(known) - len(touched) - summary.failed)


def unmatched_acl(store: KnowledgeStore, connector: Connector) -> list[dict[str, Any]]:
    """ACL entries of the source's documents that nobody in its directory holds, with the documents that
    carry them (each such document is visible to no one unless another entry of its ACL matches)."""
    known = getattr(connector, "known_principals", None)
    if known is None:
        return []
    held = known()
    found = {p: docs for p, docs in store.acl_entries(connector.name).items() if p not in held}
    if found:
        log.warning("acl entries match nobody", extra={"source": connector.name, "entries": len(found)})
    return [{"principal": p, "documents": docs} for p, docs in sorted(found.items())]


def _prune(store: KnowledgeStore, connector: Connector, known: dict[str, str]) -> int:
    try:
        alive = set(connector.list_ids())
    except ConnectorError:
        log.warning("listing failed; nothing pruned", extra={"source": connector.name})
        return 0
    gone = [doc_id for doc_id in known if doc_id not in alive]
    return store.delete(gone) if gone else 0


def source_status(store: KnowledgeStore) -> list[dict[str, Any]]:
    """Last sync of every source, with document counts and recent failures (for `sleuth sources` and App Home)."""
    return store.ledger.status()
