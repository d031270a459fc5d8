"""The per-channel parts of an answer: its "Get help from a person" and "Not helpful — remove" buttons, and the
escalation message. Pure: no client, no I/O; every piece of answer or question text is escaped.

The escalation's one-line summary says what Sleuth found only where the answer was shown in the thread (so it
adds nothing the channel could not already read): an answer sent privately or ephemerally is summarised by the
asker's own question alone.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from bot.channels import mention_of
from bot.mrkdwn import clip, escape
from bot.render import Message

ESCALATE_ACTION = "sleuth_escalate"
REMOVE_ACTION = "sleuth_remove"
MAX_SUMMARY_CHARS = 240
_CITATION = re.compile(r"\s*\[\d+\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _button(action_id: str, text: str, value: str, *, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text},
        "value": value,
    }
    if style:
        button["style"] = style
    return button


def with_channel_actions(
    messages: Sequence[Message], *, trace_id: str, escalate: bool, remove: bool
) -> list[Message]:
    """The answer's messages with the channel's buttons added beside "Show trace" in the last message."""
    extra = []
    if escalate:
        extra.append(_button(ESCALATE_ACTION, "Get help from a person", trace_id, style="primary"))
    if remove:
        extra.append(_button(REMOVE_ACTION, "Not helpful — remove", trace_id, style="danger"))
    out = [copy.deepcopy(dict(m)) for m in messages]
    if not extra or not out:
        return out
    blocks = out[-1].setdefault("blocks", [])
    actions = next((b for b in reversed(blocks) if b.get("type") == "actions"), None)
    if actions is None:
        blocks.append({"type": "actions", "elements": extra})
    else:
        actions["elements"] = [*actions["elements"], *extra][:25]
    return out


def _first_sentence(text: str) -> str:
    plain = _CITATION.sub("", text or "").strip()
    return _SENTENCE_END.split(plain, maxsplit=1)[0] if plain else ""


def summary_line(result: dict[str, Any], *, shown_in_thread: bool) -> str:
    """What Sleuth found and what is still open, in one escaped line."""
    question = escape(clip(str(result.get("question") or ""), MAX_SUMMARY_CHARS))
    answer = result.get("answer") or {}
    if not shown_in_thread:
        return f"Question: “{question}”. I replied to the asker privately."
    gaps = [str(g.get("what") or "") for g in answer.get("gaps") or [] if g.get("what")]
    open_part = f" Still open: {escape(clip('; '.join(gaps), MAX_SUMMARY_CHARS))}." if gaps else ""
    if answer.get("answered"):
        found = escape(clip(_first_sentence(str(answer.get("text") or "")), MAX_SUMMARY_CHARS))
        return f"Question: “{question}”. I found: {found}{open_part}"
    return f"Question: “{question}”. I found no answer in the sources I may read here.{open_part}"


def escalation_message(
    escalate_to: Sequence[str], *, clicked_by: str, result: dict[str, Any], shown_in_thread: bool
) -> Message:
    """The thread message that brings the channel's people in."""
    who = " ".join(mention_of(ref) for ref in escalate_to)
    text = (
        f"{who} <@{clicked_by}> would like help from a person here. "
        f"{summary_line(result, shown_in_thread=shown_in_thread)}"
    )
    return {
        "text": clip(text, 3000),
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": clip(text, 3000)}}],
    }
