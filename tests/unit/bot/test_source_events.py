"""What Slack's events ask of the Slack sources: which runs, for which sources, and which threads are noted (in a
real database); and the channel listeners' reading of Slack's event payloads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from bot.deps import BotDeps
from bot.listeners.events.channel_gone import handle_channel_gone
from bot.listeners.events.channel_members import handle_member_changed
from bot.source_events import SourceEvents, thread_of
from connectors.catalog import SourceEntry
from connectors.database import make_engine, sqlite_url
from connectors.sync_hints import SyncHints
from connectors.sync_trigger import SyncTrigger

SOURCES = [
    SourceEntry("chat", "slack", {}, 3600, ""),
    SourceEntry("wiki", "confluence", {}, 3600, ""),
    SourceEntry("chat2", "slack", {}, 3600, ""),
]


@dataclass
class RecordingTrigger:
    requests: list[tuple[str, str]] = field(default_factory=list)

    def request(self, name: str, kind: str) -> None:
        self.requests.append((name, kind))


@pytest.fixture
def hints(tmp_path: Path) -> SyncHints:
    return SyncHints(make_engine(sqlite_url(tmp_path)))


def _events(hints: SyncHints, trigger: RecordingTrigger, *, content_sync: bool = True,
            sources: list[SourceEntry] = SOURCES) -> SourceEvents:  # fmt: skip
    return SourceEvents(lambda: sources, lambda: hints, cast(SyncTrigger, trigger), content_sync=content_sync)


def test_a_membership_change_re_reads_every_slack_sources_permissions(hints: SyncHints) -> None:
    trigger = RecordingTrigger()
    _events(hints, trigger).members_changed("G1")
    assert trigger.requests == [("chat", "permissions"), ("chat2", "permissions")]
    trigger.requests.clear()
    _events(hints, trigger).members_changed("G1", bot_itself=True)  # the bot's own: content follows
    assert trigger.requests == [("chat", "permissions"), ("chat", "content"),
                                ("chat2", "permissions"), ("chat2", "content")]  # fmt: skip


@pytest.mark.parametrize(
    ("channel_type", "content_sync", "noted", "requested"),
    [
        ("channel", True, True, True),
        ("group", True, True, True),
        ("group", False, True, False),  # the scheduled sync reads the note
        ("im", True, False, False),  # DMs are no source
        ("mpim", True, False, False),
    ],
    ids=["public", "private", "no-event-sync", "dm", "group-dm"],
)
def test_a_thread_change_is_noted_for_each_slack_source(
    hints: SyncHints, channel_type: str, content_sync: bool, noted: bool, requested: bool
) -> None:
    trigger = RecordingTrigger()
    event = {"channel": "C1", "channel_type": channel_type}
    _events(hints, trigger, content_sync=content_sync).thread_changed(event, "1700000000.000100")
    expected = ["C1:1700000000.000100"] if noted else []
    assert [h.item for h in hints.pending("chat")] == expected
    assert [h.item for h in hints.pending("chat2")] == expected
    assert hints.pending("wiki") == []
    assert trigger.requests == ([("chat", "content"), ("chat2", "content")] if requested else [])


def test_without_a_slack_source_nothing_is_noted_or_run(hints: SyncHints) -> None:
    trigger = RecordingTrigger()
    events = _events(hints, trigger, sources=[SOURCES[1]])
    events.thread_changed({"channel": "C1", "channel_type": "channel"}, "1.2")
    events.members_changed("C1")
    assert hints.pending("wiki") == [] and trigger.requests == []


def test_the_thread_of_a_message_is_its_parent() -> None:
    assert thread_of({"ts": "2.0", "thread_ts": "1.0"}) == "1.0"
    assert thread_of({"ts": "1.0"}) == "1.0"


@dataclass
class RecordingEvents:
    changed: list[tuple[str, bool]] = field(default_factory=list)

    def members_changed(self, channel: str, *, bot_itself: bool = False) -> None:
        self.changed.append((channel, bot_itself))


def _deps(events: RecordingEvents) -> BotDeps:
    return cast(BotDeps, SimpleNamespace(source_events=events))


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"type": "channel_deleted", "channel": "C1"}, ("C1", True)),
        ({"type": "group_deleted", "channel": "G1"}, ("G1", True)),
        ({"type": "group_left", "channel": "G1"}, ("G1", True)),
        ({"type": "channel_archive", "channel": "C1", "user": "U1"}, ("C1", False)),  # still readable
        ({"type": "group_archive", "channel": "G1"}, ("G1", False)),
    ],
    ids=["deleted", "private-deleted", "bot-left", "archived", "private-archived"],
)
def test_a_channel_going_away_re_reads_permissions_and_content_where_unreadable(
    event: dict[str, Any], expected: tuple[str, bool]
) -> None:
    events = RecordingEvents()
    handle_channel_gone(event, deps=_deps(events))
    assert events.changed == [expected]


@pytest.mark.parametrize(("user", "bot_itself"), [("U1", False), ("UBOT", True)], ids=["person", "the-bot"])
def test_a_member_joining_or_leaving_names_the_channel(user: str, bot_itself: bool) -> None:
    events = RecordingEvents()
    context = SimpleNamespace(bot_user_id="UBOT")
    event = {"type": "member_left_channel", "user": user, "channel": "G1", "channel_type": "G"}
    handle_member_changed(event, cast(Any, context), deps=_deps(events))
    assert events.changed == [("G1", bot_itself)]
