"""'Get help from a person': pings the channel's `escalate_to` people in the thread, once per thread, with a
one-line summary of what Sleuth found and what is still open (`bot.render_channel.escalation_message`)."""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from bot.channel_activity import ESCALATED
from bot.deps import BotDeps
from bot.render_channel import ESCALATE_ACTION, escalation_message

NOBODY = "Nobody is set up to help from this channel yet; ask an admin to set `escalate_to`."
ALREADY = "Someone already asked for a person's help in this thread."
ASKED = "I've asked for a person's help in the thread."


def handle_escalate(
    ack: Ack, body: dict[str, Any], respond: Respond, client: WebClient, *, deps: BotDeps
) -> None:
    ack()
    job = deps.jobs.by_trace(str(body["actions"][0].get("value") or ""))
    if job is None or job.result is None or deps.channels is None or deps.activity is None:
        respond(text=NOBODY, response_type="ephemeral", replace_original=False)
        return
    config = deps.channels.for_channel(job.channel)
    thread_ts = job.thread_ts or job.placeholder_ts or ""
    if not config.escalate_to:
        respond(text=NOBODY, response_type="ephemeral", replace_original=False)
        return
    user = body["user"]["id"]
    if not deps.activity.record(job.channel, thread_ts, ESCALATED, user=user):
        respond(text=ALREADY, response_type="ephemeral", replace_original=False)
        return
    shown = bool(job.result.get("shown_in_thread"))
    message = escalation_message(
        config.escalate_to, clicked_by=user, result=job.result, shown_in_thread=shown
    )
    client.chat_postMessage(channel=job.channel, thread_ts=thread_ts, **message)
    respond(text=ASKED, response_type="ephemeral", replace_original=False)


def register(app: App, deps: BotDeps) -> None:
    app.action(ESCALATE_ACTION)(functools.partial(handle_escalate, deps=deps))
