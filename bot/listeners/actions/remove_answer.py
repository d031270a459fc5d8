"""'Not helpful — remove': the asker (or an admin) deletes Sleuth's unsolicited reply from the thread; every
message Sleuth posted for that question goes (they carry its trace id in their metadata, `bot.posting`)."""

from __future__ import annotations

import functools
import logging
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.channel_activity import REMOVED
from bot.deps import BotDeps
from bot.posting import EVENT_TYPE
from bot.render_channel import REMOVE_ACTION

log = logging.getLogger(__name__)

NOT_YOURS = "Only the person who asked can remove this answer."
REMOVED_NOTE = "Removed. Thanks for telling me."


def handle_remove(
    ack: Ack, body: dict[str, Any], respond: Respond, client: WebClient, *, deps: BotDeps
) -> None:
    ack()
    job = deps.jobs.by_trace(str(body["actions"][0].get("value") or ""))
    user = body["user"]["id"]
    if job is None or (job.user != user and user not in deps.settings.admin_users):
        respond(text=NOT_YOURS, response_type="ephemeral", replace_original=False)
        return
    thread_ts = job.thread_ts or job.placeholder_ts or ""
    for ts in _posted_for(client, job.channel, thread_ts, job.trace_id):
        try:
            client.chat_delete(channel=job.channel, ts=ts)
        except SlackApiError as exc:
            if exc.response.get("error") != "message_not_found":
                raise
    if deps.activity is not None:
        deps.activity.record(job.channel, thread_ts, REMOVED, user=user)
    log.info("answer removed by the asker", extra={"job": job.id})
    respond(text=REMOVED_NOTE, response_type="ephemeral", replace_original=False)


def _posted_for(client: WebClient, channel: str, thread_ts: str, trace_id: str) -> list[str]:
    """Sleuth's messages in the thread that belong to this question (its parts), by their metadata."""
    pages = client.conversations_replies(channel=channel, ts=thread_ts, include_all_metadata=True, limit=200)
    found = []
    for page in pages:
        for message in page.get("messages", []):
            metadata = message.get("metadata") or {}
            key = str((metadata.get("event_payload") or {}).get("key") or "")
            if metadata.get("event_type") == EVENT_TYPE and key.startswith(f"{trace_id}:"):
                found.append(str(message["ts"]))
    return found


def register(app: App, deps: BotDeps) -> None:
    app.action(REMOVE_ACTION)(functools.partial(handle_remove, deps=deps))
