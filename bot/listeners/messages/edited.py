"""An edited question is answered again, once per edit, in the same thread, marked as an update.

An edit that turns a plain message into a question (adds the mention) is answered as a new question. Any
person's edit in a channel tells the Slack sources its thread changed (`bot.source_events`): an edited *reply*
does not show on the thread's parent, where their sync would otherwise look.
"""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App, BoltContext

from bot.deps import BotDeps
from bot.intake import edit_job, is_from_bot, is_question, question_job, team_of
from bot.source_events import thread_of


def handle_message_changed(body: dict[str, Any], context: BoltContext, *, deps: BotDeps) -> None:
    event = body["event"]
    message, previous = event.get("message") or {}, event.get("previous_message") or {}
    bot_user_id = context.bot_user_id or ""
    if (
        is_from_bot(message)
        or message.get("user") == bot_user_id
        or message.get("text") == previous.get("text")
    ):
        return  # Sleuth's own edits, other bots, unfurls and other changes that leave the text alone
    if deps.source_events is not None:
        deps.source_events.thread_changed(event, thread_of(message))
    team, channel = team_of(body), event["channel"]
    if deps.channels is not None and deps.channels.for_channel(channel).answer == "off":
        return
    jobs = deps.jobs.for_message(team, channel, message["ts"])
    if any(job.unsolicited for job in jobs):
        return  # asked of the channel, not of Sleuth: answered once, never again for an edit
    asked = [job for job in jobs if job.thread_ts]
    if asked:
        deps.receipts.submit(edit_job(body, channel, message, asked[0].thread_ts or "", bot_user_id))
        return
    as_new = {**message, "channel": channel, "channel_type": event.get("channel_type")}
    in_thread = functools.partial(deps.jobs.in_thread, team, channel)
    if is_question(
        as_new, bot_user_id=bot_user_id, answer_bots=deps.settings.answer_bots, in_thread=in_thread
    ):
        deps.receipts.submit(question_job(body, as_new, bot_user_id=bot_user_id))


def register(app: App, deps: BotDeps) -> None:
    listener = functools.partial(handle_message_changed, deps=deps)
    app.event({"type": "message", "subtype": "message_changed"})(listener)
