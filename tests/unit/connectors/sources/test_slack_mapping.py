"""The Slack source's pure parts: who a channel's threads are for, who holds what, which messages count, the
mrkdwn people read, the tier pacer and the config's CLI forms."""

from __future__ import annotations

import pytest

from connectors.knowledge.acl import can_see
from connectors.sources.slack.client import TierPacer
from connectors.sources.slack.config import SlackSourceConfig
from connectors.sources.slack.mapping import (
    channel_acl,
    directory,
    is_human,
    person_principals,
    plain_text,
    thread_to_doc,
)

PEOPLE = directory(
    [
        {"id": "U1", "name": "ann", "profile": {"email": "Ann@Acme.io"}},
        {"id": "U2", "name": "bob", "profile": {"email": "bob@acme.io"}},
        {"id": "U3", "name": "gus", "is_restricted": True, "profile": {"email": "gus@partner.io"}},
        {"id": "U4", "name": "old", "deleted": True, "profile": {"email": "old@acme.io"}},
        {"id": "U5", "name": "ci", "is_bot": True},
    ]
)
PUBLIC_CHANNEL = {"id": "C1", "name": "eng-help", "is_private": False}
PRIVATE_CHANNEL = {"id": "G1", "name": "launch", "is_private": True}
EVERYONE = ["U1", "U2", "U3", "U4", "U5", "UEXTERNAL"]


def _held(user: str) -> set[str]:
    return {"public", *person_principals("slk", PEOPLE.get(user))}


@pytest.mark.parametrize(
    ("channel", "members", "user", "visible"),
    [
        (PUBLIC_CHANNEL, ["U1"], "U2", True),  # a public channel: every full member, in it or not
        (PUBLIC_CHANNEL, ["U1"], "U3", False),  # a guest not invited to it
        (PUBLIC_CHANNEL, ["U1", "U3"], "U3", True),  # a guest invited to it
        (PRIVATE_CHANNEL, ["U1"], "U1", True),
        (PRIVATE_CHANNEL, ["U1"], "U2", False),  # a full member outside the private channel
        (PRIVATE_CHANNEL, EVERYONE, "U4", False),  # deactivated
        (PRIVATE_CHANNEL, EVERYONE, "U5", False),  # a bot
        (PRIVATE_CHANNEL, EVERYONE, "UEXTERNAL", False),  # another organisation's member of a shared channel
        (PRIVATE_CHANNEL, [], "U1", False),  # no members read: nobody
    ],
    ids=[
        "public",
        "uninvited-guest",
        "invited-guest",
        "member",
        "outsider",
        "deleted",
        "bot",
        "external",
        "empty",
    ],
)
def test_who_may_read_a_channels_threads(channel: dict, members: list[str], user: str, visible: bool) -> None:
    assert can_see(_held(user), channel_acl("slk", channel, members, PEOPLE)) is visible


def test_principals_and_directory() -> None:
    assert person_principals("slk", PEOPLE["U1"]) == {"user:slk:u1", "group:slk:members"}
    assert person_principals("slk", PEOPLE["U3"]) == {"user:slk:u3"}
    assert person_principals("slk", PEOPLE["U4"]) == set() == person_principals("slk", None)
    assert PEOPLE["U1"].email == "ann@acme.io"


@pytest.mark.parametrize(
    ("message", "counts"),
    [
        ({"user": "U1", "text": "hi"}, True),
        ({"user": "U1", "subtype": "thread_broadcast"}, True),
        ({"user": "U4", "text": "a departed colleague's words"}, True),
        ({"user": "U5", "text": "build passed"}, False),  # a bot user
        ({"user": "UBOT", "bot_id": "BSLEUTH", "text": "Sleuth's answer"}, False),
        ({"bot_id": "B9", "subtype": "bot_message", "text": "integration"}, False),
        ({"user": "U1", "subtype": "channel_join"}, False),
        ({"user": "U1", "subtype": "tombstone", "text": "This message was deleted."}, False),
    ],
)
def test_only_peoples_messages_count(message: dict, counts: bool) -> None:
    assert is_human(message, PEOPLE) is counts


def test_mrkdwn_reads_as_people_read_it() -> None:
    text = "<@U2> see <#C9|ops> and <https://wiki/x|the page> &amp; <https://a.io> <!here> <@UNKNOWN>"
    assert (
        plain_text(text, PEOPLE, {})
        == "@bob see #ops and the page (https://wiki/x) & https://a.io @here @someone"
    )


def test_a_thread_of_bots_only_is_no_document() -> None:
    args = {"source": "slk", "channel": PUBLIC_CHANNEL, "people": PEOPLE, "channels": {}, "workspace_url": "https://acme.slack.com/", "acl": frozenset()}  # fmt: skip
    assert thread_to_doc(messages=[{"ts": "1.000001", "bot_id": "B1", "text": "x"}], **args) is None
    long = "word " * 60
    doc = thread_to_doc(messages=[{"ts": "1.000001", "user": "U1", "text": long}], **args)
    assert doc is not None and len(doc.title) == 120 and doc.title.endswith("…")
    assert doc.url == "https://acme.slack.com/archives/C1/p1000001"


def test_the_pacer_spaces_each_tier_on_its_own() -> None:
    waits: list[float] = []
    pacer = TierPacer({2: 20, 3: 50}, clock=lambda: 100.0, sleep=waits.append)
    for method in ("conversations.history", "conversations.replies", "conversations.history", "users.list"):
        pacer.wait(method)
    assert waits == [
        pytest.approx(1.2),
        pytest.approx(2.4),
    ]  # tier 3 at 50/min; tier 2's first call waits not


def test_config_accepts_the_cli_forms() -> None:
    config = SlackSourceConfig.model_validate(
        {"token": "xoxb-1", "channels": "C1, #eng-help", "base_url": "http://127.0.0.1:1/api"}
    )
    assert config.channels == ["C1", "eng-help"] and config.base_url.endswith("/api/")
    with pytest.raises(ValueError):
        SlackSourceConfig.model_validate({"token": "xoxb-1", "lookback_days": 0})
