"""The sync ledger: per source, the stored cursor, the lease that keeps one sync at a time (across processes),
the last run's outcome and the items that failed, and when permissions were last synced (`connectors.acl_sync`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, delete, insert, select, update

from connectors.knowledge.tables import documents, store_meta, sync_failures, sync_state


class SyncLedger:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def load_cursor(self, source: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            raw = conn.execute(select(sync_state.c.cursor_json).where(sync_state.c.source == source)).scalar()
        return json.loads(raw) if raw else None

    def save_cursor(self, source: str, cursor: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(sync_state).where(sync_state.c.source == source).values(cursor_json=json.dumps(cursor))
            )

    def record_failure(self, source: str, item: str, reason: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                delete(sync_failures).where(sync_failures.c.source == source, sync_failures.c.item == item)
            )
            conn.execute(insert(sync_failures).values(source=source, item=item, reason=reason, at=_now()))

    def replace_failures(self, key: str, failures: list[dict[str, str]], *, keep: bool = False) -> None:
        """A run's failures under `key` in one transaction; the previous ones go unless `keep` (a run that
        stopped midway saw only part of the source)."""
        now = _now()
        with self.engine.begin() as conn:
            if not keep:
                conn.execute(delete(sync_failures).where(sync_failures.c.source == key))
            for f in {f["id"]: f for f in failures}.values():
                shown = f"{f['reason']} ({f['detail']})" if f.get("detail") else f["reason"]
                conn.execute(
                    delete(sync_failures).where(
                        sync_failures.c.source == key, sync_failures.c.item == f["id"]
                    )
                )
                conn.execute(insert(sync_failures).values(source=key, item=f["id"], reason=shown, at=now))

    def forget_failures(self, source: str, *, before: datetime) -> None:
        """Drops failures recorded before `before`: a finished run's failures replace the previous run's."""
        with self.engine.begin() as conn:
            conn.execute(
                delete(sync_failures).where(sync_failures.c.source == source, sync_failures.c.at < before)
            )

    def acquire(self, source: str, owner: str, *, lease: timedelta) -> bool:
        """Takes the source's lease with one conditional UPDATE (atomic across processes)."""
        now = _now()
        with self.engine.begin() as conn:
            exists = conn.execute(select(sync_state.c.source).where(sync_state.c.source == source)).first()
            if not exists:
                conn.execute(insert(sync_state).values(source=source, cursor_json="{}", last_status="never"))
            taken = conn.execute(
                update(sync_state)
                .where(
                    sync_state.c.source == source,
                    (sync_state.c.last_status != "running")
                    | (sync_state.c.last_started.is_(None))
                    | (sync_state.c.last_started < now - lease),
                )
                .values(
                    last_status="running", last_started=now, last_summary_json=json.dumps({"owner": owner})
                )
            ).rowcount
        return bool(taken)

    def release(self, source: str, status: str, summary: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(sync_state)
                .where(sync_state.c.source == source)
                .values(last_status=status, last_finished=_now(), last_summary_json=json.dumps(summary))
            )

    def record_permissions(self, source: str, status: str, summary: dict[str, Any]) -> None:
        """The last permission sync of a source (kept apart from the content sync's lease and cursor)."""
        value = json.dumps({"status": status, "finished": _now().isoformat(), "summary": summary})
        key = f"permissions:{source}"
        with self.engine.begin() as conn:
            if not conn.execute(
                update(store_meta).where(store_meta.c.key == key).values(value=value)
            ).rowcount:
                conn.execute(insert(store_meta).values(key=key, value=value))

    def permissions_finished(self, source: str) -> datetime | None:
        with self.engine.connect() as conn:
            value = conn.execute(
                select(store_meta.c.value).where(store_meta.c.key == f"permissions:{source}")
            ).scalar()
        return datetime.fromisoformat(json.loads(value)["finished"]) if value else None

    def status(self) -> list[dict[str, Any]]:
        """Last sync of every source, with document counts and recorded failures."""
        with self.engine.connect() as conn:
            out = []
            for s in conn.execute(select(sync_state)).all():
                count = conn.execute(select(documents.c.id).where(documents.c.source == s.source)).all()
                fails = conn.execute(
                    select(sync_failures.c.item, sync_failures.c.reason)
                    .where(sync_failures.c.source.in_([s.source, f"permissions:{s.source}"]))
                    .order_by(sync_failures.c.source, sync_failures.c.id)
                ).all()
                fails = list({(f.item, f.reason): f for f in fails}.values())  # both syncs may find one
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
