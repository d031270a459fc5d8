"""A deleted question: its pending job is cancelled and Sleuth's placeholder or answer is replaced by a short
note ("The question was deleted, so I removed my answer."), which keeps the thread's shape for any replies.
A person's deleted message in a channel tells the Slack sources its thread changed (`bot.source_events`).
"""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.answering import withdraw
from bot.deps import BotDeps
from bot.intake import is_from_bot, team_of


def handle_message_deleted(body: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    event = body["event"]
    deleted_ts = event.get("deleted_ts")
    if not deleted_ts:
        return
    previous = event.get("previous_message") or {}
    if deps.source_events is not None and not (previous and is_from_bot(previous)):
        deps.source_events.thread_changed(event, str(previous.get("thread_ts") or deleted_ts))
    for job in deps.jobs.cancel_message(team_of(body), event["channel"], deleted_ts):
        withdraw(client, job)


def register(app: App, deps: BotDeps) -> None:
    listener = functools.partial(handle_message_deleted, deps=deps)
    app.event({"type": "message", "subtype": "message_deleted"})(listener)
