"""A new message: a DM, a mention, or a reply in a thread Sleuth is in becomes a queued question; in a channel
set to `questions` (`bot.channels`), so does a top-level message that reads as a question (`bot.help_channel`).

A reply by someone other than the asker in the thread of a question asked of the channel cancels Sleuth's
answer if it is not out yet: a person is already helping. In such a thread Sleuth answers again only when
mentioned; in a channel set to `off` it answers nothing. Any person's message in a channel also tells the Slack
sources its thread changed (`bot.source_events`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from slack_bolt import App, BoltContext
from slack_sdk import WebClient

from bot.channel_activity import CANCELLED, SEEN
from bot.channel_reply import remove_working_reaction
from bot.channels import ChannelConfig
from bot.deps import BotDeps
from bot.help_channel import is_channel_question, is_human_reply, is_thread_reply
from bot.intake import is_from_bot, is_question, mentions_bot, question_job, team_of
from bot.jobs import Job
from bot.source_events import thread_of
from graph_flows.flow import thread_id

NEW_MESSAGE_SUBTYPES = (None, "bot_message", "file_share", "thread_broadcast")


def channel_config(deps: BotDeps, channel: str) -> ChannelConfig:
    return deps.channels.for_channel(channel) if deps.channels is not None else ChannelConfig()


def handle_message(body: dict[str, Any], context: BoltContext, client: WebClient, *, deps: BotDeps) -> None:
    event = body["event"]
    bot_user_id = context.bot_user_id or ""
    team, channel = team_of(body), event["channel"]
    if deps.source_events is not None and not is_from_bot(event):
        deps.source_events.thread_changed(event, thread_of(event))  # the Slack source re-reads the thread
    config = channel_config(deps, channel)
    if config.answer == "off":
        return
    thread = (
        deps.jobs.of_thread(thread_id(team, channel, event["thread_ts"])) if is_thread_reply(event) else []
    )
    asked_of_channel = any(job.unsolicited for job in thread)
    if asked_of_channel:
        _someone_else_replied(deps, client, thread, event)
    if is_question(
        event,
        bot_user_id=bot_user_id,
        answer_bots=deps.settings.answer_bots,
        in_thread=lambda _ts: bool(thread) and not asked_of_channel,
    ) and (not asked_of_channel or mentions_bot(event.get("text") or "", bot_user_id)):
        deps.receipts.submit(question_job(body, event, bot_user_id=bot_user_id))
    elif config.answer == "questions" and is_channel_question(event, bot_user_id=bot_user_id):
        job = deps.receipts.submit(
            dataclasses.replace(question_job(body, event, bot_user_id=bot_user_id), unsolicited=True)
        )
        if job is not None and deps.activity is not None:
            deps.activity.record(channel, job.thread_ts or job.message_ts or "", SEEN, user=job.user)


def _someone_else_replied(deps: BotDeps, client: WebClient, thread: list[Job], event: dict[str, Any]) -> None:
    """A person other than the asker replied first: Sleuth's pending answer there is cancelled."""
    asker = next(job.user for job in thread if job.unsolicited)
    if not is_human_reply(event, asker=asker):
        return
    first = thread[0]
    for job in deps.jobs.cancel_unsolicited(first.team, first.channel, first.thread_ts or ""):
        remove_working_reaction(client, job)
        if deps.activity is not None:
            deps.activity.record(job.channel, job.thread_ts or "", CANCELLED, user=job.user)


def register(app: App, deps: BotDeps) -> None:
    app.event({"type": "message", "subtype": NEW_MESSAGE_SUBTYPES})(
        functools.partial(handle_message, deps=deps)
    )
