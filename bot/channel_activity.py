"""What happened to the questions Sleuth took in channels, for the admin insights: per channel and week, how
many it saw, answered, left unanswered (not confident), cancelled (a person answered first), had removed
("Not helpful — remove") and escalated to a person.

One row per (thread, what happened): recording the same thing twice in a thread is a no-op, which is also how
"escalate once per thread" is kept (`record` returns False the second time).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Column, Engine, Float, String, UniqueConstraint, insert, select
from sqlalchemy.exc import IntegrityError

from bot.slack_columns import slack_id, slack_ts
from connectors.database import create_tables, owned_table, serial_id

SEEN, ANSWERED, SILENT, CANCELLED, REMOVED, ESCALATED = (
    "seen",
    "answered",
    "not_confident",
    "cancelled",
    "removed",
    "escalated",
)
KINDS = (SEEN, ANSWERED, SILENT, CANCELLED, REMOVED, ESCALATED)

channel_activity = owned_table(
    "channel_activity",
    serial_id(),
    slack_id("channel"),
    slack_ts("thread_ts", nullable=False),
    Column("kind", String(32), nullable=False),
    slack_id("user"),  # who asked, removed or escalated
    Column("at", Float, nullable=False),
    UniqueConstraint("channel", "thread_ts", "kind", name="uq_channel_activity"),
)


def week_of(at: float) -> str:
    """The Monday (UTC) of the week `at` falls in, as YYYY-MM-DD."""
    day = datetime.fromtimestamp(at, UTC).date()
    return (day - timedelta(days=day.weekday())).isoformat()


class ChannelActivity:
    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._clock = engine, clock
        create_tables(channel_activity.metadata, engine)

    def record(self, channel: str, thread_ts: str, kind: str, *, user: str) -> bool:
        """Records it once per thread; False when it was already recorded there."""
        if kind not in KINDS:
            raise ValueError(f"kind is one of {', '.join(KINDS)}")
        values = {"channel": channel, "thread_ts": thread_ts, "kind": kind, "user": user, "at": self._clock()}
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(channel_activity).values(**values))
        except IntegrityError:
            return False
        return True

    def happened(self, channel: str, thread_ts: str, kind: str) -> bool:
        where = (
            (channel_activity.c.channel == channel)
            & (channel_activity.c.thread_ts == thread_ts)
            & (channel_activity.c.kind == kind)
        )
        with self._engine.connect() as conn:
            return conn.execute(select(channel_activity.c.id).where(where)).first() is not None

    def weekly(self, *, since: float = 0.0) -> dict[tuple[str, str], dict[str, int]]:
        """(week, channel) -> counts by kind, for everything recorded since `since`."""
        query = select(channel_activity.c.channel, channel_activity.c.kind, channel_activity.c.at).where(
            channel_activity.c.at >= since
        )
        counts: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(KINDS, 0))
        with self._engine.connect() as conn:
            for channel, kind, at in conn.execute(query):
                counts[(week_of(at), channel)][kind] += 1
        return dict(counts)


def weekly_lines(counts: dict[tuple[str, str], dict[str, int]]) -> list[str]:
    """One line per week and channel, newest week first: `2026-05-04 <#C1>: 12 seen · 9 answered · ...`."""
    lines = []
    for (week, channel), by_kind in sorted(
        counts.items(), key=lambda item: (item[0][0], item[0][1]), reverse=True
    ):
        said = " · ".join(f"{by_kind[kind]} {kind.replace('_', ' ')}" for kind in KINDS)
        lines.append(f"{week} <#{channel}>: {said}")
    return lines
