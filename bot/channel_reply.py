"""The Slack side of a question asked of a channel (`bot.help_channel`): whether a person already answered in
its thread, and taking Sleuth's working reaction off the question."""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.help_channel import is_human_reply
from bot.jobs import Job
from bot.receipt import WORKING_EMOJI

log = logging.getLogger(__name__)


def someone_replied(client: WebClient, job: Job) -> bool:
    """Whether anyone but the asker (bots aside) replied in the question's thread: read just before Sleuth
    posts, as the reply's event may not have arrived yet."""
    if not job.thread_ts:
        return False
    try:
        pages = client.conversations_replies(channel=job.channel, ts=job.thread_ts, limit=200)
    except SlackApiError as exc:
        log.warning("thread not read before answering", extra={"error": exc.response.get("error")})
        return False
    replies = [m for page in pages for m in page.get("messages", [])]
    return any(is_human_reply(m, asker=job.user) for m in replies)


def remove_working_reaction(client: WebClient, job: Job) -> None:
    """The question's working reaction, if Sleuth added one (only questions asked of the channel get it)."""
    if not job.unsolicited or not job.message_ts:
        return
    try:
        client.reactions_remove(channel=job.channel, timestamp=job.message_ts, name=WORKING_EMOJI)
    except SlackApiError as exc:
        if exc.response.get("error") not in ("no_reaction", "message_not_found"):
            log.warning("working reaction not removed", extra={"error": exc.response.get("error")})
