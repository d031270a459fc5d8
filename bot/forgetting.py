"""`/sleuth forget`: a person's words leave every view Sleuth keeps of them.

What goes: their gap-log entries and their feedback clicks (deleted); the text of their finished questions
and the traces of those answers (so others' feedback on those answers and the digest read "an answer", never
their question); in others' gap entries and traces whose wording reused their question (a follow-up in their
thread, made whole with their words: `graph_flows.derived`), that wording, replaced by what the other person
typed. What stays: the answers' cited document ids (for the helpful rates), counted as before; jobs still
running, which are finished first and forgotten by the next `/sleuth forget`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select, update

from bot.feedback import FeedbackLog
from bot.jobs import CANCELLED, DONE, FAILED, slack_jobs
from graph_flows.gaplog import GapLog

FINISHED = (DONE, FAILED, CANCELLED)


@dataclass(frozen=True)
class Forgotten:
    gap_entries: int
    feedback_rows: int
    questions: int  # their finished questions whose text was removed
    reworded: int  # others' answers whose trace reused their words, reworded as typed


def forget_person(
    engine: Engine, gaps: GapLog, feedback: FeedbackLog, *, team: str, user: str, labels: Iterable[str]
) -> Forgotten:
    """Forgets one Slack user; `labels` are how the flow and the gap log name them (email, "slack:<id>")."""
    names = {label for label in labels if label}
    removed_gaps = gaps.forget(names)
    clicks = feedback.forget(user)
    with engine.begin() as conn:
        own = conn.execute(
            select(slack_jobs.c.id, slack_jobs.c.channel, slack_jobs.c.thread_ts, slack_jobs.c.result).where(
                (slack_jobs.c.team == team) & (slack_jobs.c.user == user) & slack_jobs.c.status.in_(FINISHED)
            )
        ).all()
        for row in own:
            conn.execute(
                update(slack_jobs)
                .where(slack_jobs.c.id == row.id)
                .values(text="", result=_scrubbed(row.result))
            )
        threads = {(r.channel, r.thread_ts) for r in own if r.thread_ts}
        reworded = 0
        for channel, thread_ts in sorted(threads):
            others = conn.execute(
                select(slack_jobs.c.id, slack_jobs.c.text, slack_jobs.c.result).where(
                    (slack_jobs.c.team == team)
                    & (slack_jobs.c.channel == channel)
                    & (slack_jobs.c.thread_ts == thread_ts)
                    & (slack_jobs.c.user != user)
                    & slack_jobs.c.result.is_not(None)
                )
            ).all()
            for row in others:
                result = json.loads(row.result)
                trace = result.get("trace") or []
                if any(names & set(step.get("derived_askers") or []) for step in trace):
                    result["trace"] = as_typed(trace, row.text)
                    conn.execute(
                        update(slack_jobs).where(slack_jobs.c.id == row.id).values(result=json.dumps(result))
                    )
                    reworded += 1
    return Forgotten(removed_gaps, clicks, len(own), reworded)


def _scrubbed(result: str | None) -> str | None:
    """A finished answer without the asker's words: no question, no trace; its sources stay (ids counted)."""
    if result is None:
        return None
    saved = json.loads(result)
    answer = saved.get("answer") or {}
    kept = {k: answer[k] for k in ("sources", "stop_reason", "answered") if k in answer}
    return json.dumps({"question": "", "answer": kept, "trace": []})


def as_typed(trace: list[dict[str, Any]], typed: str) -> list[dict[str, Any]]:
    """A trace whose wording reused an earlier question, with only what its own asker typed: the plan's aspects
    become the typed question, and the names and queries built from the earlier one are dropped."""
    out = []
    for step in trace:
        if step.get("node") == "plan":
            step = {**step, "aspects": [typed], "entities": [], "derived_from": [], "derived_askers": []}
        elif step.get("node") == "retrieve":
            step = {**step, "queries": [], "seeds": []}
        out.append(step)
    return out
