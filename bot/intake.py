"""Which Slack messages are questions for Sleuth, and the job each one becomes. Named predicates, no I/O.

Answered: a DM; a channel message that mentions the bot; a reply in a thread where Sleuth already took a
question (no re-mention needed). Not answered: Sleuth's own messages (Bolt drops them), other bots unless
`answer_bots` is on (and then only when they mention Sleuth, so two bots never talk in a loop), and replies in
threads Sleuth never joined.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bot.jobs import EDIT, QUESTION, NewJob

_USER_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
MAX_EVENT_AGE_S = 3600.0  # Slack's last retry comes within the hour; anything older is a replay


def request_team(body: dict[str, Any]) -> str | None:
    """The workspace a delivery is for: `team_id` (events, commands) or `team.id` (interactivity)."""
    team = body.get("team_id")
    if isinstance(team, str):
        return team
    ref = body.get("team")
    return ref.get("id") if isinstance(ref, dict) and isinstance(ref.get("id"), str) else None


def ignore_reason(body: dict[str, Any], *, team: str | None, now: float) -> str | None:
    """Why a well-formed delivery is dropped unanswered, or None: another workspace's (Sleuth is installed in
    one), an event older than Slack's retries, a `user` that is not a user id."""
    sent_for = request_team(body)
    if team and sent_for and sent_for != team:
        return "another workspace"
    event = body.get("event")
    if not isinstance(event, dict):
        return None
    event_time = body.get("event_time")
    if isinstance(event_time, int) and now - event_time > MAX_EVENT_AGE_S:
        return "stale event"
    for holder in (event, event.get("message"), event.get("previous_message")):
        if isinstance(holder, dict) and "user" in holder and not isinstance(holder["user"], str):
            return "user of the wrong type"
    return None


def strip_mention(text: str, bot_user_id: str) -> str:
    """The question without the bot's mention(s); other mentions stay."""
    cleaned = _USER_MENTION.sub(lambda m: "" if m.group(1) == bot_user_id else m.group(0), text)
    return re.sub(r"[ \t]{2,}", " ", cleaned).strip()


def mentions_bot(text: str, bot_user_id: str) -> bool:
    return bot_user_id in _USER_MENTION.findall(text or "")


def is_from_bot(event: dict[str, Any]) -> bool:
    """Another app's message (Sleuth's own are dropped by Bolt); a message without a user counts as one."""
    return event.get("subtype") == "bot_message" or bool(event.get("bot_id")) or not event.get("user")


def sender(event: dict[str, Any]) -> str:
    return str(event.get("user") or event.get("bot_id") or "")


def team_of(body: dict[str, Any]) -> str:
    return str(body.get("team_id") or body.get("enterprise_id") or "")


def is_question(
    event: dict[str, Any], *, bot_user_id: str, answer_bots: bool, in_thread: Callable[[str], bool]
) -> bool:
    """A `message` event (or an edited message) that Sleuth should answer."""
    text = event.get("text") or ""
    if is_from_bot(event):
        return answer_bots and mentions_bot(text, bot_user_id)
    if event.get("channel_type") == "im" or mentions_bot(text, bot_user_id):
        return True
    thread_ts = event.get("thread_ts")
    return bool(thread_ts and thread_ts != event.get("ts") and in_thread(thread_ts))


def question_job(body: dict[str, Any], event: dict[str, Any], *, bot_user_id: str) -> NewJob:
    """The job for a question message: keyed by its event id and by (channel, ts), so duplicates collapse."""
    ts, channel = str(event["ts"]), str(event["channel"])
    thread_ts = str(event.get("thread_ts") or ts)
    return _message_job(body, channel, event, thread_ts, bot_user_id, key=f"{channel}:{ts}", kind=QUESTION)


def edit_job(
    body: dict[str, Any], channel: str, message: dict[str, Any], thread_ts: str, bot_user_id: str
) -> NewJob:
    """A re-answer of an edited question, once per edit (keyed by the edit's ts)."""
    ts = str(message["ts"])
    edited = str((message.get("edited") or {}).get("ts") or body["event_id"])
    key = f"{channel}:{ts}:edit:{edited}"
    return _message_job(body, channel, message, thread_ts, bot_user_id, key=key, kind=EDIT)


def _message_job(
    body: dict[str, Any],
    channel: str,
    message: dict[str, Any],
    thread_ts: str,
    bot_user_id: str,
    *,
    key: str,
    kind: str,
) -> NewJob:
    """The job for a message in a channel (a question or an edit of one): the asker's words without the mention."""
    return NewJob(
        team=team_of(body),
        event_id=str(body["event_id"]),
        message_key=key,
        channel=channel,
        user=sender(message),
        text=strip_mention(message.get("text") or "", bot_user_id),
        kind=kind,
        message_ts=str(message["ts"]),
        thread_ts=thread_ts,
    )
