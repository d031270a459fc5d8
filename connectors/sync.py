"""Incremental sync: pull from a connector, write what changed, prune what is gone, record what failed.

- Unchanged documents (same content hash) are never re-embedded.
- A `Checkpoint` from the connector is stored once everything before it is written, so a crash resumes there.
- Deletions come from the connector (`Deleted`) and from pruning against `list_ids()`; pruning is skipped when
  listing fails, so nothing is deleted because a fetch failed.
- One failed item is recorded and the run goes on; an error that stops the run is recorded on the source.
- One sync of a source at a time, even across processes: a lease row in the database.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, select, update

from connectors.base import Checkpoint, Connector, ConnectorError, Cursor, Deleted, Failure, SourceDoc
from connectors.knowledge.store import KnowledgeStore
from connectors.knowledge.tables import aliases, documents, sync_failures, sync_state

log = logging.getLogger(__name__)

BATCH = 64  # documents embedded together
LEASE = timedelta(minutes=30)
Progress = Callable[[str, int], None]  # (event, count): "seen", "written"


@dataclass
class SyncSummary:
    source: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    failed: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0
    status: str = "ok"  # ok | error | busy
    error: str | None = None
    failures: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class SyncBusy(RuntimeError):
    """Another process holds this source's sync lease."""


def sync_source(
    store: KnowledgeStore, connector: Connector, *, progress: Progress | None = None
) -> SyncSummary:
    summary = SyncSummary(source=connector.name)
    started = time.perf_counter()
    owner = uuid.uuid4().hex
    if not _acquire(store, connector.name, owner):
        summary.status = "busy"
        return summary
    try:
        _run(store, connector, summary, progress or (lambda _e, _n: None))
    except ConnectorError as exc:
        summary.status, summary.error = "error", str(exc)
        log.warning("sync stopped", extra={"source": connector.name, "error": exc.__class__.__name__})
    finally:
        summary.seconds = round(time.perf_counter() - started, 3)
        _release(store, connector.name, summary)
    return summary


def _run(store: KnowledgeStore, connector: Connector, summary: SyncSummary, progress: Progress) -> None:
    known = store.content_hashes(connector.name)
    names_before = _alias_names(store)
    pending: list[SourceDoc] = []
    touched: set[str] = set()

    def flush() -> None:
        if pending:
            summary.chunks_embedded += store.upsert(pending)
            progress("written", len(pending))
            touched.update(d.id for d in pending)
            pending.clear()

    pulled = connector.pull(_load_cursor(store, connector.name))
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
            summary.failures.append({"id": item.id, "reason": item.reason})
            _record_failure(store, connector.name, item)
        elif isinstance(item, Checkpoint):
            flush()
            _save_cursor(store, connector.name, item.cursor)
    flush()
    _save_cursor(store, connector.name, cursor)
    summary.deleted += _prune(store, connector, known)
    if summary.added + summary.updated + summary.deleted:
        full = _alias_names(store) != names_before
        store.relink_mentions(None if full else touched)
    summary.unchanged = max(summary.unchanged, len(known) - len(touched) - summary.failed)


def _prune(store: KnowledgeStore, connector: Connector, known: dict[str, str]) -> int:
    try:
        alive = set(connector.list_ids())
    except ConnectorError:
        log.warning("listing failed; nothing pruned", extra={"source": connector.name})
        return 0
    gone = [doc_id for doc_id in known if doc_id not in alive]
    return store.delete(gone) if gone else 0


def _alias_names(store: KnowledgeStore) -> set[str]:
    with store.engine.connect() as conn:
        return {r for (r,) in conn.execute(select(aliases.c.norm).distinct())}


# ---------------------------------------------------------------------- sync state rows
def _load_cursor(store: KnowledgeStore, source: str) -> Cursor | None:
    with store.engine.connect() as conn:
        raw = conn.execute(select(sync_state.c.cursor_json).where(sync_state.c.source == source)).scalar()
    return json.loads(raw) if raw else None


def _save_cursor(store: KnowledgeStore, source: str, cursor: Cursor) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            update(sync_state).where(sync_state.c.source == source).values(cursor_json=json.dumps(cursor))
        )


def _record_failure(store: KnowledgeStore, source: str, failure: Failure) -> None:
    log.warning("item failed", extra={"source": source, "item": failure.id})
    with store.engine.begin() as conn:
        conn.execute(
            delete(sync_failures).where(sync_failures.c.source == source, sync_failures.c.item == failure.id)
        )
        conn.execute(
            insert(sync_failures).values(source=source, item=failure.id, reason=failure.reason, at=_now())
        )


def _acquire(store: KnowledgeStore, source: str, owner: str) -> bool:
    """Takes the source's lease with one conditional UPDATE (atomic across processes)."""
    now = _now()
    with store.engine.begin() as conn:
        exists = conn.execute(select(sync_state.c.source).where(sync_state.c.source == source)).first()
        if not exists:
            conn.execute(insert(sync_state).values(source=source, cursor_json="{}", last_status="never"))
        taken = conn.execute(
            update(sync_state)
            .where(
                sync_state.c.source == source,
                (sync_state.c.last_status != "running")
                | (sync_state.c.last_started.is_(None))
                | (sync_state.c.last_started < now - LEASE),
            )
            .values(last_status="running", last_started=now, last_summary_json=json.dumps({"owner": owner}))
        ).rowcount
    return bool(taken)


def _release(store: KnowledgeStore, source: str, summary: SyncSummary) -> None:
    if summary.status == "busy":
        return
    with store.engine.begin() as conn:
        conn.execute(
            update(sync_state)
            .where(sync_state.c.source == source)
            .values(
                last_status=summary.status,
                last_finished=_now(),
                last_summary_json=json.dumps({k: v for k, v in summary.as_dict().items() if k != "failures"}),
            )
        )


def source_status(store: KnowledgeStore) -> list[dict[str, Any]]:
    """Last sync of every source, with document counts and recent failures (for `sleuth sources` and App Home)."""
    with store.engine.connect() as conn:
        states = conn.execute(select(sync_state)).all()
        out = []
        for s in states:
            count = conn.execute(select(documents.c.id).where(documents.c.source == s.source)).all()
            fails = conn.execute(
                select(sync_failures.c.item, sync_failures.c.reason).where(sync_failures.c.source == s.source)
            ).all()
            out.append(
                {
                    "source": s.source,
                    "status": s.last_status,
                    "last_finished": s.last_finished.isoformat() if s.last_finished else None,
                    "documents": len(count),
                    "failures": [{"id": f.item, "reason": f.reason} for f in fails],
                    "summary": json.loads(s.last_summary_json or "{}"),
                }
            )
        return out


def _now() -> datetime:
    return datetime.now(UTC)
