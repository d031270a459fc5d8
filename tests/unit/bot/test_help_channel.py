"""Which messages in a `questions` channel are questions asked of the channel."""

from __future__ import annotations

from typing import Any

import pytest

from bot.help_channel import is_channel_question, is_human_reply, reads_as_question

BOT = "UBOT"


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("when is the weekly on-call handoff?", True),
        ("How do I reset my VPN token", True),
        ("does anyone know who owns the fleet map", True),
        ("hey team, is the staging cluster down", True),
        ("Anyone know the wifi password for floor 3", True),
        ("I need to know the travel cap for London", True),
        ("can't log into Jira since this morning", True),
        ("The coffee machine is broken again.", False),
        ("Deploy finished, all green", False),
        ("why?", False),  # too short to be a question worth answering
        ("thanks everyone!", False),
        ("<@U0BOB> what?", False),
    ],
)
def test_reads_as_question(text: str, question: bool) -> None:
    assert reads_as_question(text) is question


def _event(**extra: Any) -> dict[str, Any]:
    return {"type": "message", "user": "U0ANN", "text": "how do I get a badge?", "ts": "1.1",
            "channel": "C1", "channel_type": "channel", **extra}  # fmt: skip


@pytest.mark.parametrize(
    ("event", "question"),
    [
        (_event(), True),
        (_event(channel_type="group"), True),
        (_event(channel_type="im"), False),  # DMs are always answered, by the ordinary path
        (_event(bot_id="B1", subtype="bot_message"), False),
        (_event(thread_ts="1.0"), False),
        (_event(subtype="channel_join"), False),
        (_event(subtype="file_share", text=""), False),
        (_event(subtype="file_share"), True),  # a file with a question
        (_event(subtype="message_changed"), False),
        (_event(text=f"<@{BOT}> how do I get a badge?"), False),  # asked of Sleuth: the mention path
    ],
    ids=[
        "channel",
        "private",
        "dm",
        "bot",
        "reply",
        "join",
        "file-only",
        "file-and-question",
        "edit",
        "mention",
    ],
)
def test_is_channel_question(event: dict[str, Any], question: bool) -> None:
    assert is_channel_question(event, bot_user_id=BOT) is question


def test_a_reply_by_someone_else_is_a_human_reply() -> None:
    assert is_human_reply(_event(user="U0BOB", thread_ts="1.0"), asker="U0ANN")
    assert not is_human_reply(_event(thread_ts="1.0"), asker="U0ANN")  # the asker
    assert not is_human_reply(_event(user="U0BOB"), asker="U0ANN")  # not in the thread
    assert not is_human_reply(_event(user=None, bot_id="B1", thread_ts="1.0"), asker="U0ANN")
