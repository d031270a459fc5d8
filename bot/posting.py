"""Posting a message exactly once, although `chat.postMessage` may fail after it posted.

Every message Sleuth posts for a job carries message metadata naming it (`sleuth_post`, key
"{trace id}:{part}"). When a post's outcome is unknown (a timeout, a 5xx, a redelivered job), the thread is
read first (`conversations.replies` with metadata, or the channel's recent history for a top-level post)
and a message already carrying that key is taken instead of posting again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack_retry import SLACK_FAILURES, backoff_s, is_transient

log = logging.getLogger(__name__)

EVENT_TYPE = "sleuth_post"
POST_TRIES = 4
HISTORY_LOOKBACK = 50  # recent top-level messages searched for a lost top-level post

Sleep = Callable[[float], None]


def post_metadata(key: str) -> dict[str, Any]:
    return {"event_type": EVENT_TYPE, "event_payload": {"key": key}}


def _key_of(message: dict[str, Any]) -> str | None:
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != EVENT_TYPE:
        return None
    return str((metadata.get("event_payload") or {}).get("key") or "") or None


def find_posted(client: WebClient, channel: str, thread_ts: str | None, key: str) -> str | None:
    """The ts of Sleuth's message carrying `key` in the thread (or among recent top-level messages)."""
    try:
        if thread_ts:
            pages = client.conversations_replies(
                channel=channel, ts=thread_ts, include_all_metadata=True, limit=200
            )
            messages = [m for page in pages for m in page.get("messages", [])]
        else:
            found = client.conversations_history(
                channel=channel, include_all_metadata=True, limit=HISTORY_LOOKBACK
            )
            messages = list(found.get("messages", []))
    except SlackApiError as exc:
        if exc.response.get("error") in ("thread_not_found", "message_not_found"):
            return None
        raise
    return next((str(m["ts"]) for m in messages if _key_of(m) == key), None)


def post_once(
    client: WebClient,
    channel: str,
    thread_ts: str | None,
    key: str,
    message: dict[str, Any],
    *,
    look_first: bool,
    sleep: Sleep = time.sleep,
) -> str:
    """Posts `message` unless a message with `key` is already there; returns its ts.

    `look_first`: the outcome of an earlier try is unknown (a redelivered job). Transient failures are retried
    here (looking before each repeat); the last one is raised, for the job table to try again later.
    """
    attempt = 0
    while True:
        try:
            found = find_posted(client, channel, thread_ts, key) if look_first or attempt else None
            if found:
                log.info("earlier post found, not posting again", extra={"key": key})
                return found
            posted = client.chat_postMessage(
                channel=channel, thread_ts=thread_ts, metadata=post_metadata(key), **message
            )
            return str(posted["ts"])
        except SLACK_FAILURES as exc:
            attempt += 1
            if not is_transient(exc) or attempt >= POST_TRIES:
                raise
            log.warning("post failed, retrying", extra={"key": key, "attempt": attempt})
            sleep(backoff_s(attempt))
