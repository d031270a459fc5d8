"""Feedback clicks on answers: who judged which answer (thread id, trace id) good or bad, and when.

Table `slack_feedback`; one row per click (a changed mind is a second row, the newest wins when reading).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Column, Engine, Float, Integer, MetaData, String, Table, insert, select

# Own MetaData, declared like slack_jobs': feedback is created and read apart from the job queue.
feedback_metadata = MetaData()

slack_feedback = Table(
    "slack_feedback",
    feedback_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("team", String(64), nullable=False),
    Column("channel", String(64), nullable=False),
    Column("message_ts", String(32), nullable=False),
    Column("thread_id", String(200), nullable=False),
    Column("trace_id", String(40), nullable=False, index=True),
    Column("user", String(64), nullable=False),
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


class FeedbackLog:
    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._clock = engine, clock
        feedback_metadata.create_all(engine)

    def record(self, feedback: Feedback) -> None:
        with self._engine.begin() as conn:
            conn.execute(insert(slack_feedback).values(**feedback.__dict__, at=self._clock()))

    def all(self, trace_id: str | None = None) -> list[Feedback]:
        query = select(slack_feedback).order_by(slack_feedback.c.id)
        if trace_id is not None:
            query = query.where(slack_feedback.c.trace_id == trace_id)
        with self._engine.connect() as conn:
            rows = conn.execute(query).all()
        fields = Feedback.__dataclass_fields__
        return [Feedback(**{k: v for k, v in r._mapping.items() if k in fields}) for r in rows]
