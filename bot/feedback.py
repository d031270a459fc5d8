"""Feedback clicks on answers: who judged which answer (thread id, trace id) good or bad, and when.

Table `slack_feedback`; one row per click (a changed mind is a second row, the newest wins when reading:
`latest`). `forget` removes one person's rows (`/sleuth forget`). Rows point at the trace id, not at the message,
so feedback on an answer later edited or withdrawn stays attached to the answer it judged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Engine, Float, String, delete, insert, select

from bot.slack_columns import slack_id, slack_ts
from connectors.database import create_tables, owned_table, serial_id

slack_feedback = owned_table(
    "slack_feedback",
    serial_id(),
    slack_id("team"),
    slack_id("channel"),
    slack_ts("message_ts", nullable=False),
    Column("thread_id", String(200), nullable=False),
    Column("trace_id", String(40), nullable=False, index=True),
    slack_id("user"),
    Column("value", String(16), nullable=False),  # "good" | "bad"
    Column("at", Float, nullable=False),
)


@dataclass(frozen=True)
class Feedback:
    team: str
    channel: str
    message_ts: str
    thread_id: str
    trace_id: str
    user: str
    value: str
    at: float = 0.0  # when it was clicked (set by the log)


class FeedbackLog:
    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._clock = engine, clock
        create_tables(slack_feedback.metadata, engine)

    def record(self, feedback: Feedback) -> None:
        with self._engine.begin() as conn:
            values = {k: v for k, v in feedback.__dict__.items() if k != "at"}
            conn.execute(insert(slack_feedback).values(**values, at=self._clock()))

    def all(self, trace_id: str | None = None) -> list[Feedback]:
        query = select(slack_feedback).order_by(slack_feedback.c.id)
        if trace_id is not None:
            query = query.where(slack_feedback.c.trace_id == trace_id)
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return [_feedback(r) for r in rows]

    def latest(self, *, since: float | None = None, user: str | None = None) -> list[Feedback]:
        """Each person's last verdict on each answer, newest first; `user`: only that person's clicks."""
        query = select(slack_feedback).order_by(slack_feedback.c.id)
        if since is not None:
            query = query.where(slack_feedback.c.at >= since)
        if user is not None:
            query = query.where(slack_feedback.c.user == user)
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        last = {(r.trace_id, r.user): _feedback(r) for r in rows}
        return sorted(last.values(), key=lambda f: -f.at)

    def forget(self, user: str) -> int:
        """Removes every row of this Slack user; returns how many."""
        with self._engine.begin() as conn:
            return conn.execute(delete(slack_feedback).where(slack_feedback.c.user == user)).rowcount or 0


def _feedback(row: Any) -> Feedback:
    fields = Feedback.__dataclass_fields__
    return Feedback(**{k: v for k, v in row._mapping.items() if k in fields})
