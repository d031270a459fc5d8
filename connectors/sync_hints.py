"""Items a source's next content sync must re-read, noted by whoever learns of a change before the source's own
change listing shows it.

Slack tells the bot at once when a message is edited or deleted or a reply is added (`message` events), but
its `conversations.history` shows only some of that on a thread's parent (an edited *reply* changes nothing
there) and only inside the sync's lookback window. The bot notes the thread here (`note`); the Slack
connector's next pull reads the notes (`pending`) and re-reads those threads, and the pull after the one whose
cursor was saved clears them (`clear`), so a sync that stops midway leaves them for the next. Syncs run in other
processes than the one that took Slack's event (the scheduler's worker), so the notes live in the database.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Column, Engine, Float, Index, String, delete, insert, select

from connectors.database import create_tables, owned_table, serial_id

HINTED_KINDS = frozenset({"slack"})  # the kinds whose connector takes `hints=` (a `SyncHints`)
CLEAR_BATCH = 500

sync_hints = owned_table(
    "sync_hints",
    serial_id(),
    Column("source", String(128), nullable=False),
    Column("item", String(255), nullable=False),  # the source's own key; Slack: "<channel>:<thread ts>"
    Column("noted_at", Float, nullable=False),
    Index("ix_sync_hints_source", "source"),
)


@dataclass(frozen=True)
class Hint:
    id: int
    item: str


class SyncHints:
    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._clock = engine, clock
        create_tables(sync_hints.metadata, engine)

    def note(self, sources: Iterable[str], item: str) -> None:
        """One note per source (each source clears its own when its sync has read them)."""
        rows = [{"source": s, "item": item, "noted_at": self._clock()} for s in dict.fromkeys(sources)]
        if rows:
            with self._engine.begin() as conn:
                conn.execute(insert(sync_hints), rows)

    def pending(self, source: str) -> list[Hint]:
        """The source's notes, oldest first (the same item may be noted more than once)."""
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(sync_hints.c.id, sync_hints.c.item)
                .where(sync_hints.c.source == source)
                .order_by(sync_hints.c.id)
            ).all()
        return [Hint(int(row.id), str(row.item)) for row in rows]

    def clear(self, ids: Sequence[int]) -> None:
        """Forgets notes a saved cursor has applied; only these ids, so a note taken meanwhile stays."""
        with self._engine.begin() as conn:
            for start in range(0, len(ids), CLEAR_BATCH):
                conn.execute(
                    delete(sync_hints).where(sync_hints.c.id.in_(list(ids[start : start + CLEAR_BATCH])))
                )
