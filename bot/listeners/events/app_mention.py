"""A channel mention: queue the question (the same message's `message` twin dedupes on (channel, ts))."""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App, BoltContext

from bot.deps import BotDeps
from bot.intake import is_from_bot, question_job


def handle_app_mention(body: dict[str, Any], context: BoltContext, *, deps: BotDeps) -> None:
    event = body["event"]
    if is_from_bot(event) and not deps.settings.answer_bots:
        return
    if deps.channels is not None and deps.channels.for_channel(event["channel"]).answer == "off":
        return  # an admin switched Sleuth off in this channel (bot.channels)
    deps.receipts.submit(question_job(body, event, bot_user_id=context.bot_user_id or ""))


def register(app: App, deps: BotDeps) -> None:
    app.event("app_mention")(functools.partial(handle_app_mention, deps=deps))
