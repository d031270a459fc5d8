"""The Slack source with the threads Slack's events noted (connectors.sync_hints), against the Slack emulator and
a real database: an edited reply, which the thread's parent does not show, and changes older than the lookback
window reach the index at the next sync; notes are cleared only after a saved cursor applied them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_workspace import BASE_TS_S
from connectors.base import PUBLIC, LinkedIdentity
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.slack import SlackConnector, SlackSourceConfig
from connectors.sources.slack.client import SlackClient
from connectors.sync import sync_source
from connectors.sync_hints import SyncHints
from tests.conftest import Stack
from tests.integration.connectors.conftest import SleepLog, drain, pull_until_checkpoint, visible_ids

RECENT = BASE_TS_S + 3600.0  # every message inside the 14-day lookback window
MUCH_LATER = BASE_TS_S + 60 * 86_400.0  # every message older than it


@pytest.fixture
def slack() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        emulator.add_user("U1", "ann", email="ann@acme.io")
        emulator.add_user("U2", "bob", email="bob@acme.io")
        emulator.add_channel("C1", "eng-help", members=["U1", "U2"])
        emulator.add_channel("C2", "ops", members=["U1", "U2"])
        yield emulator


@pytest.fixture
def threads(slack: SlackEmulator) -> dict[str, str]:
    found = {"vpn": slack.post_as_user("U1", "C1", "How do I reset the VPN token?")}
    found["reply"] = slack.post_as_user("U2", "C1", "Run vpnctl reset then log in again.", found["vpn"])
    found["note"] = slack.post_as_user("U2", "C1", "Deploy freeze starts Friday 18:00.")
    found["ops"] = slack.post_as_user("U1", "C2", "Pager rotation moves to Tuesdays.")
    return found


@pytest.fixture
def hints(stack: Stack) -> SyncHints:
    return SyncHints(stack.engine())


@pytest.fixture
def make_connector(
    slack: SlackEmulator, sleeps: SleepLog, hints: SyncHints
) -> Iterator[Callable[..., SlackConnector]]:
    built: list[SlackConnector] = []

    def make(now: float = RECENT) -> SlackConnector:
        config = SlackSourceConfig.model_validate(
            {"token": slack.bot_token, "base_url": slack.api_url, "channels": ["eng-help", "ops"]}
        )
        client = SlackClient.from_config(config, name="slk", sleep=sleeps, pace=False)
        built.append(SlackConnector(config, name="slk", client=client, clock=lambda: now, hints=hints))
        return built[-1]

    yield make
    for connector in built:
        connector.close()


def _ann(connector: SlackConnector) -> frozenset[str]:
    found = connector.principals(LinkedIdentity(source="slk", account="ann@acme.io"))
    return frozenset({PUBLIC, "user:ann@acme.io", *found})


def test_an_edited_reply_is_read_at_the_next_sync_once_noted(
    make_connector: Callable[..., SlackConnector],
    threads: dict[str, str],
    slack: SlackEmulator,
    hints: SyncHints,
    make_store: Callable[..., KnowledgeStore],
) -> None:
    connector, store = make_connector(), make_store()
    sync_source(store, connector)
    vpn = f"slk:C1:{threads['vpn']}"
    slack.edit_as_user(
        "U2", "C1", threads["reply"], "Run vpnctl reset --hard, then ask #it-desk for a YubiKey."
    )
    assert sync_source(store, connector).updated == 0  # the parent shows nothing: the listing alone misses it

    hints.note(["slk", "other"], f"C1:{threads['vpn']}")
    slack.calls.clear()
    summary = sync_source(store, connector)

    assert summary.updated == 1
    assert "bm25" in visible_ids(store, vpn, _ann(connector), "YubiKey")
    assert [c["ts"] for c in slack.calls_to("conversations.replies")] == [threads["vpn"]]
    assert [h.item for h in hints.pending("slk")] == [f"C1:{threads['vpn']}"]  # cleared by the next pull
    slack.calls.clear()
    assert sync_source(store, connector).updated == 0
    assert hints.pending("slk") == [] and slack.calls_to("conversations.replies") == []
    assert [h.item for h in hints.pending("other")] == [f"C1:{threads['vpn']}"]  # each source its own


def test_noted_threads_older_than_the_window_are_reread_or_removed(
    make_connector: Callable[..., SlackConnector],
    threads: dict[str, str],
    slack: SlackEmulator,
    hints: SyncHints,
    make_store: Callable[..., KnowledgeStore],
) -> None:
    connector, store = make_connector(now=MUCH_LATER), make_store()
    assert sync_source(store, connector).added == 3  # the first sync reads the whole history
    slack.edit_as_user("U1", "C2", threads["ops"], "Pager rotation moves to Wednesdays.")
    slack.delete_as_user("U2", "C1", threads["note"])
    unnoted = sync_source(store, connector)
    assert (unnoted.updated, unnoted.deleted) == (0, 0)  # both older than the window

    hints.note(["slk"], f"C2:{threads['ops']}")
    hints.note(["slk"], f"C1:{threads['note']}")
    hints.note(["slk"], "C1:1600000000.000100")  # a thread never indexed: not read
    slack.calls.clear()
    summary = sync_source(store, connector)

    assert (summary.updated, summary.deleted) == (1, 1)
    ann = _ann(connector)
    assert "bm25" in visible_ids(store, f"slk:C2:{threads['ops']}", ann, "Wednesdays")
    assert visible_ids(store, f"slk:C1:{threads['note']}", ann, "Deploy freeze Friday") == set()
    assert sorted(c["ts"] for c in slack.calls_to("conversations.replies")) == sorted(
        [threads["ops"], threads["note"]]
    )


def test_notes_outlive_a_sync_that_stopped_or_could_not_read_the_thread(
    make_connector: Callable[..., SlackConnector],
    threads: dict[str, str],
    slack: SlackEmulator,
    hints: SyncHints,
) -> None:
    connector = make_connector(now=MUCH_LATER)
    cursor = drain(connector.pull(None)).cursor
    hints.note(["slk"], f"C2:{threads['ops']}")

    _, checkpoint = pull_until_checkpoint(connector.pull(cursor))  # the process died after one channel
    assert checkpoint["hints"] == []
    slack.fail_next("conversations.replies", error="not_in_channel", status=200)
    refused = drain(connector.pull(checkpoint))
    assert [f.id for f in refused.failures] == [f"slk:C2:{threads['ops']}"]
    assert refused.cursor["hints"] == []  # the thread was not read: its note stays
    read = drain(connector.pull(refused.cursor))
    assert [d.id for d in read.docs] == [f"slk:C2:{threads['ops']}"] and read.cursor["hints"]
    drain(connector.pull(read.cursor))
    assert hints.pending("slk") == []
