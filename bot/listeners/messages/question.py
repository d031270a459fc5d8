"""A new message: a DM, a mention, or a reply in a thread Sleuth is in becomes a queued question."""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App, BoltContext

from bot.deps import BotDeps
from bot.intake import is_question, question_job, team_of

NEW_MESSAGE_SUBTYPES = (None, "bot_message", "file_share", "thread_broadcast")


def handle_message(body: dict[str, Any], context: BoltContext, *, deps: BotDeps) -> None:
    event = body["event"]
    bot_user_id = context.bot_user_id or ""
    team, channel = team_of(body), event["channel"]
    if is_question(
        event,
        bot_user_id=bot_user_id,
        answer_bots=deps.settings.answer_bots,
        in_thread=lambda thread_ts: deps.jobs.in_thread(team, channel, thread_ts),
    ):
        deps.receipts.submit(question_job(body, event, bot_user_id=bot_user_id))


def register(app: App, deps: BotDeps) -> None:
    app.event({"type": "message", "subtype": NEW_MESSAGE_SUBTYPES})(
        functools.partial(handle_message, deps=deps)
    )
