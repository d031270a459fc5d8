"""Answering a help channel without a mention: which messages are questions asked of the channel.

In a channel set to `questions` (`bot.channels`), a new top-level message from a person that reads as a
question is answered as if Sleuth had been asked. It reads as a question when it ends with "?" or opens like
one: a wh-word ("how", "where"...), an auxiliary ("is", "can", "does"...), or a request for help ("does anyone
know", "I need to know", "help with"). Never answered this way: bots, edits, thread replies, file-only
messages, joins and other system messages, and messages that mention Sleuth (those are asked of it directly).

Pure: named predicates over the event and its text, no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from bot.intake import is_from_bot, mentions_bot

_WH_OR_AUX = (
    "what|whats|what's|when|where|which|who|whom|whose|why|how|"
    "is|are|am|was|were|do|does|did|can|could|should|would|will|shall|may|might|must|"
    "has|have|had|isn't|aren't|doesn't|don't|didn't|can't|cannot|couldn't|shouldn't|won't|wouldn't"
)
_OPENS_AS_QUESTION = re.compile(rf"^(?:{_WH_OR_AUX})\b", re.IGNORECASE)
_ASKS_FOR_HELP = re.compile(
    r"^(?:(?:hi|hey|hello)\b[\s,!.-]*)?(?:does|do|did|has|can)\s+(?:anyone|anybody|someone|somebody|"
    r"any\s?one)\b|^(?:(?:hi|hey|hello)\b[\s,!.-]*)?(?:anyone|anybody)\s+(?:know|knows|have|has|got|seen)\b|"
    r"^i\s+(?:need|want|would\s+like)\s+to\s+(?:know|find\s+out|understand)\b|^(?:need\s+)?help\s+(?:with|on)\b|"
    r"^(?:looking\s+for|trying\s+to\s+find)\b|^(?:any\s+idea|any\s+ideas)\b",
    re.IGNORECASE,
)
_GREETING = re.compile(
    r"^(?:(?:hi|hey|hello|morning|folks|all|team|everyone|y'all)\b[\s,!.:-]*)+", re.IGNORECASE
)
_MARKUP = re.compile(r"<[^>]+>|[*_~`]")
MIN_WORDS = 3  # "why?" or "what" alone is a reaction, not a question


def reads_as_question(text: str) -> bool:
    """Whether a message reads as a question: it ends with "?", or it opens as one."""
    plain = _MARKUP.sub(" ", text or "").strip()
    words = plain.split()
    if len(words) < MIN_WORDS:
        return False
    if plain.rstrip().endswith("?") or _ASKS_FOR_HELP.match(plain):
        return True
    opening = _GREETING.sub("", plain, count=1)
    return bool(_OPENS_AS_QUESTION.match(opening) or _ASKS_FOR_HELP.match(opening))


def is_top_level(event: dict[str, Any]) -> bool:
    thread_ts = event.get("thread_ts")
    return not thread_ts or thread_ts == event.get("ts")


def is_thread_reply(event: dict[str, Any]) -> bool:
    return not is_top_level(event)


def is_channel_question(event: dict[str, Any], *, bot_user_id: str) -> bool:
    """A new top-level message from a person in a channel, not asked of Sleuth, that reads as a question."""
    if event.get("subtype") not in (None, "file_share") or event.get("channel_type") not in (
        "channel",
        "group",
    ):
        return False
    if is_from_bot(event) or not is_top_level(event) or mentions_bot(event.get("text") or "", bot_user_id):
        return False
    return reads_as_question(event.get("text") or "")


def is_human_reply(event: dict[str, Any], *, asker: str) -> bool:
    """A reply in a thread by a person other than the asker: someone is already helping there."""
    return is_thread_reply(event) and not is_from_bot(event) and event.get("user") != asker
