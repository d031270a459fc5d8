"""A deleted question: its pending job is cancelled and Sleuth's placeholder or answer is replaced by a short
note ("The question was deleted, so I removed my answer."), which keeps the thread's shape for any replies.
"""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.answering import withdraw
from bot.deps import BotDeps
from bot.intake import team_of


def handle_message_deleted(body: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    event = body["event"]
    deleted_ts = event.get("deleted_ts")
    if not deleted_ts:
        return
    for job in deps.jobs.cancel_message(team_of(body), event["channel"], deleted_ts):
        withdraw(client, job)


def register(app: App, deps: BotDeps) -> None:
    listener = functools.partial(handle_message_deleted, deps=deps)
    app.event({"type": "message", "subtype": "message_deleted"})(listener)
