"""The Slack source against the Slack emulator over real HTTP: threads as documents, incremental reads, edits and
deletions, channel ACLs through content and permission sync, rate limits and Slack's error bodies."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_workspace import BASE_TS_S
from connectors.acl_sync import sync_permissions
from connectors.base import PUBLIC, AuthExpired, Deleted, Forbidden, LinkedIdentity, SourceUnavailable
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.slack import SlackConnector, SlackSourceConfig
from connectors.sources.slack.client import SlackClient
from connectors.sync import sync_source
from tests.integration.connectors.conftest import Drained, SleepLog, drain, visible_ids

NOW = BASE_TS_S + 3600.0
PEOPLE = {"U1": "ann@acme.io", "U2": "bob@acme.io", "U3": "gus@partner.io"}


@pytest.fixture
def slack() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        emulator.add_user("U1", "ann", email=PEOPLE["U1"])
        emulator.add_user("U2", "bob", email=PEOPLE["U2"])
        emulator.add_user("U3", "gus", email=PEOPLE["U3"], is_restricted=True)  # a guest
        emulator.add_channel("C1", "eng-help", members=["U1", "U2", "U3"])
        emulator.add_channel("C2", "random", members=["U1", "U2"])  # public, not picked
        emulator.add_channel("C3", "ops", members=["U1"], bot_member=False)  # picked, bot not invited
        emulator.add_channel("G1", "secret-launch", members=["U1"], is_private=True)
        emulator.add_channel("G2", "hr", members=["U2"], is_private=True, bot_member=False)
        yield emulator


@pytest.fixture
def threads(slack: SlackEmulator) -> dict[str, str]:
    """Thread parents by name: a question answered in a thread, a one-message note, a private thread, a
    thread asked of Sleuth, another bot's message, and a thread in an unpicked channel."""
    found = {"vpn": slack.post_as_user("U1", "C1", "How do I reset the VPN token?\nIt keeps expiring.")}
    slack.post_as_user(
        "U2", "C1", "Run `vpnctl reset` then log in again, see <https://wiki/vpn|the VPN page>.", found["vpn"]
    )
    slack.post_as_user("U1", "C1", "Thanks <@U2>, that worked &amp; it stays.", found["vpn"])
    found["note"] = slack.post_as_user("U2", "C1", "Deploy freeze starts Friday 18:00 for ENG-142.")
    found["launch"] = slack.post_as_user("U1", "G1", "Launch codename is Bluebird, ships in May.")
    found["asked"] = slack.post_as_user("U1", "C1", f"<@{slack.bot_user_id}> what is the VPN policy?")
    found["bot"] = slack.post_as_other_bot("BOTHER", "C1", "Build 1234 passed")
    found["random"] = slack.post_as_user("U1", "C2", "Lunch is at noon")
    for n in range(3):  # enough top-level messages for several history pages
        slack.post_as_user("U2", "C1", f"Standup note {n}: all green")
    return found


@pytest.fixture
def make_connector(slack: SlackEmulator, sleeps: SleepLog) -> Iterator[Callable[..., SlackConnector]]:
    built: list[SlackConnector] = []

    def make(**overrides: object) -> SlackConnector:
        settings = {"token": slack.bot_token, "base_url": slack.api_url, "channels": ["eng-help", "C3"]}
        config = SlackSourceConfig.model_validate({**settings, "page_size": 2, **overrides})
        client = SlackClient.from_config(config, name="slk", sleep=sleeps, pace=False)
        connector = SlackConnector(config, name="slk", client=client, clock=lambda: NOW)
        built.append(connector)
        return connector

    yield make
    for connector in built:
        connector.close()


def _docs(run: Drained) -> dict[str, object]:
    return {doc.id: doc for doc in run.docs}


def _principals(connector: SlackConnector, user: str) -> frozenset[str]:
    """What the bot resolves for the asker: public, their verified email, the Slack source's principals."""
    email = PEOPLE[user]
    found = connector.principals(LinkedIdentity(source="slk", account=email))
    return frozenset({PUBLIC, f"user:{email}", *found})


def test_a_thread_is_one_document_with_its_permalink_authors_and_dates(
    make_connector: Callable[..., SlackConnector], threads: dict[str, str], slack: SlackEmulator
) -> None:
    run = drain(make_connector().pull(None))
    docs = _docs(run)
    vpn = docs[f"slk:C1:{threads['vpn']}"]
    assert vpn.title == "How do I reset the VPN token?"
    assert vpn.url == f"https://acme.slack.com/archives/C1/p{threads['vpn'].replace('.', '')}"
    assert (
        vpn.url == slack.api.chat_get_permalink({"channel": "C1", "message_ts": threads["vpn"]})["permalink"]
    )
    assert "Run `vpnctl reset` then log in again, see the VPN page (https://wiki/vpn)." in vpn.text
    assert "Comment by ann on 2023-11-14: Thanks @bob, that worked & it stays." in vpn.text
    assert [m["author"] for m in vpn.metadata["messages"]] == ["ann", "bob", "ann"]
    assert vpn.metadata["messages"][0]["date"].startswith("2023-11-14T22:13")
    assert vpn.kind == "thread" and vpn.metadata["replies"] == 2
    note = docs[f"slk:C1:{threads['note']}"]
    assert [link.target for link in note.links] == ["ENG-142"]
    indexed = {doc_id.rpartition(":")[2] for doc_id in docs}
    assert {threads["asked"], threads["bot"], threads["random"]}.isdisjoint(
        indexed
    )  # Sleuth's, a bot's, unpicked
    assert threads["launch"] in indexed  # the private channel the bot is in
    assert not any(doc_id.startswith("slk:G2:") for doc_id in docs)  # the one it is not in
    assert len(slack.calls_to("conversations.history")) > 2  # paged (page_size 2)
    assert [(f.id, f.reason.split(":")[0]) for f in run.failures] == [
        ("slk:C3", "the bot is not in this channel")
    ]


def test_channel_acls_public_for_members_and_invited_guests_private_for_members(
    make_connector: Callable[..., SlackConnector], threads: dict[str, str]
) -> None:
    connector = make_connector()
    docs = _docs(drain(connector.pull(None)))
    assert docs[f"slk:C1:{threads['vpn']}"].acl == {"group:slk:members", "user:slk:u3"}
    assert docs[f"slk:G1:{threads['launch']}"].acl == {"user:slk:u1"}
    assert _principals(connector, "U1") >= {"user:slk:u1", "group:slk:members"}
    assert "group:slk:members" not in _principals(connector, "U3")  # a guest is not every member
    assert connector.principals(LinkedIdentity(source="slk", account="nobody@acme.io")) == set()
    assert set(connector.people()) == set(PEOPLE.values())


def test_unchanged_source_makes_no_call_beyond_the_change_listing(
    make_connector: Callable[..., SlackConnector], threads: dict[str, str], slack: SlackEmulator
) -> None:
    connector = make_connector()
    first = drain(connector.pull(None))
    slack.calls.clear()
    second = drain(connector.pull(first.cursor))
    assert second.docs == [] and not any(isinstance(i, Deleted) for i in second.items)
    called = {c.method for c in slack.calls}
    assert called == {"auth.test", "conversations.list", "conversations.history"}
    histories = slack.calls_to("conversations.history")
    assert all(float(c["oldest"]) == NOW - 14 * 86_400 for c in histories)
    assert {c["channel"] for c in histories} == {"C1", "G1"}


def test_edits_replies_and_deletions_reach_the_index_after_one_sync(
    make_connector: Callable[..., SlackConnector],
    threads: dict[str, str],
    slack: SlackEmulator,
    make_store: Callable[..., KnowledgeStore],
) -> None:
    connector, store = make_connector(), make_store()
    sync_source(store, connector)
    ann = _principals(connector, "U1")
    vpn, note = f"slk:C1:{threads['vpn']}", f"slk:C1:{threads['note']}"
    slack.edit_as_user("U1", "C1", threads["vpn"], "How do I reset the hardware VPN token?")
    slack.post_as_user("U2", "C1", "Or ask #it-desk for a new YubiKey.", threads["vpn"])
    slack.delete_as_user("U2", "C1", threads["note"])
    summary = sync_source(store, connector)
    assert (summary.updated, summary.deleted, summary.added) == (1, 1, 0)
    record = store.document(vpn, ann)
    assert record is not None and record.title == "How do I reset the hardware VPN token?"
    assert any(h.doc_id == vpn for h in store.search_text("YubiKey", ann, 5, mode="bm25"))
    assert visible_ids(store, note, ann, "Deploy freeze Friday") == set()
    assert len(slack.calls_to("conversations.replies")) >= 1


def test_private_thread_never_reaches_a_non_member_and_leaves_with_them_at_permission_sync(
    make_connector: Callable[..., SlackConnector],
    threads: dict[str, str],
    slack: SlackEmulator,
    make_store: Callable[..., KnowledgeStore],
) -> None:
    connector, store = make_connector(), make_store()
    sync_source(store, connector)
    launch = f"slk:G1:{threads['launch']}"
    query = "Launch codename Bluebird"
    assert visible_ids(store, launch, _principals(connector, "U1"), query) == {"document", "bm25", "dense"}
    for outsider in ("U2", "U3"):
        assert visible_ids(store, launch, _principals(connector, outsider), query) == set()
    embedded = store.vectors.count()
    slack.leave_channel("U1", "G1")
    summary = sync_permissions(store, make_connector())  # a fresh process's connector: no pull first
    assert summary.ok and summary.changed == 1
    assert visible_ids(store, launch, _principals(connector, "U1"), query) == set()
    assert store.vectors.count() == embedded  # ACLs rewritten, nothing re-embedded
    vpn = f"slk:C1:{threads['vpn']}"
    assert "document" in visible_ids(store, vpn, _principals(connector, "U1"), "VPN token")


def test_a_deleted_channel_leaves_its_threads_to_nobody_then_removes_them(
    make_connector: Callable[..., SlackConnector],
    threads: dict[str, str],
    slack: SlackEmulator,
    make_store: Callable[..., KnowledgeStore],
) -> None:
    connector, store = make_connector(), make_store()
    sync_source(store, connector)
    launch = f"slk:G1:{threads['launch']}"
    slack.delete_channel("G1")
    assert sync_permissions(store, make_connector()).changed == 1
    assert store.acls("slk")[launch] == frozenset()
    assert sync_source(store, connector).deleted == 1
    assert launch not in store.acls("slk")


def test_rate_limits_and_server_errors_are_waited_out(
    make_connector: Callable[..., SlackConnector],
    threads: dict[str, str],
    slack: SlackEmulator,
    sleeps: SleepLog,
) -> None:
    slack.fail_next("conversations.history", "ratelimited", 429, retry_after=0)
    slack.fail_next("conversations.replies", "ratelimited", 429, retry_after=2)
    slack.fail_next("users.list", "service_unavailable", 503)
    slack.fail_next("conversations.list", "internal_error", 200)  # Slack's own transient error body
    assert len(drain(make_connector().pull(None)).docs) == 6
    assert sorted(sleeps.waits) == [0.0, 0.5, 0.5, 2.0]


def test_a_long_retry_after_stops_the_run(
    make_connector: Callable[..., SlackConnector], threads: dict[str, str], slack: SlackEmulator
) -> None:
    from connectors.base import RateLimited

    slack.fail_next("conversations.history", "ratelimited", 429, retry_after=120)
    with pytest.raises(RateLimited) as limited:
        drain(make_connector().pull(None))
    assert limited.value.retry_after == 120


def test_slack_error_codes_become_typed_errors(
    make_connector: Callable[..., SlackConnector], slack: SlackEmulator
) -> None:
    slack.fail_next("auth.test", "invalid_auth", 200)
    with pytest.raises(AuthExpired):
        drain(make_connector().pull(None))
    slack.fail_next("auth.test", "missing_scope", 200)
    with pytest.raises(Forbidden):
        drain(make_connector().pull(None))
    slack.fail_next("auth.test", "fatal_error", 200, times=5)
    with pytest.raises(SourceUnavailable):
        drain(make_connector().pull(None))


def test_a_channel_the_bot_cannot_read_is_a_failure_and_keeps_its_threads(
    make_connector: Callable[..., SlackConnector], threads: dict[str, str], slack: SlackEmulator
) -> None:
    connector = make_connector()
    first = drain(connector.pull(None))
    slack.fail_next("conversations.history", "not_in_channel", 200)
    second = drain(connector.pull(first.cursor))
    assert [f.reason for f in second.failures][-1] == "channel history unreadable: not_in_channel"
    assert not any(isinstance(i, Deleted) for i in second.items)
    assert set(connector.list_ids()) == {d.id for d in first.docs}
