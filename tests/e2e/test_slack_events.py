"""Slack's events reach the Slack source, end to end on the emulator with the real Bolt app: someone who leaves a
private channel stops getting its threads in answers at once (no scheduled permission sync runs here), an
edited reply's new text is what the next sync indexes, and a deleted thread is gone after the sync its event
started. The threads are older than the source's lookback window, as the emulator's clock is years behind:
only the events lead the sync to them."""

from __future__ import annotations

from typing import Any

from bot.local_slack import GENERAL
from tests.e2e.conftest import WAIT_S, EnvFactory, SlackEnv

ENG_HELP, VPN_ADMINS = "C0ENGHELP", "G0VPNADMIN"


def _slack_source(env: SlackEnv) -> dict[str, str]:
    """#eng-help with an answered thread and a note, a private channel of dana's, synced as source `slk`."""
    slack, ids = env.slack, env.ids
    slack.add_channel(ENG_HELP, "eng-help", members=list(ids.values()))
    found = {"vpn": slack.post_as_user(ids["alice@acme.io"], ENG_HELP, "How do I reset the VPN token?")}
    found["reply"] = slack.post_as_user(
        ids["dana@acme.io"], ENG_HELP, "Run `vpnctl reset --token` and sign in again.", found["vpn"]
    )
    found["freeze"] = slack.post_as_user(
        ids["dana@acme.io"], ENG_HELP, "The deploy freeze starts Friday at 18:00 in the Lisbon office."
    )
    slack.add_channel(VPN_ADMINS, "vpn-admins", members=[ids["dana@acme.io"]], is_private=True)
    slack.post_as_user(ids["dana@acme.io"], VPN_ADMINS, "VPN token master reset PIN is 4417 for laptops.")
    rt = env.bot.runtime
    config = {"token": slack.bot_token, "base_url": slack.api_url, "channels": ["eng-help"]}
    rt.catalog.add("slk", "slack", config, added_by="test")
    summary = rt.sync_service.run("slk")
    assert summary.ok and summary.added == 3, summary
    return found


def _answer(env: SlackEnv, who: str, question: str) -> dict[str, Any]:
    """Asked in a new thread of #general (no earlier evidence), answered by the real flow."""
    ts = env.mention(who, question)
    env.wait_answers(GENERAL, ts)
    job = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)[0]
    return dict(job.result["answer"])


def _cited(answer: dict[str, Any]) -> set[str]:
    return {source["doc_id"] for source in answer["sources"]}


def test_a_member_who_leaves_a_private_channel_stops_getting_its_threads_at_once(
    make_env: EnvFactory,
) -> None:
    env = make_env(slack_event_permission_delay_s=0.0, slack_event_content_sync=False)
    _slack_source(env)
    question = "what is the VPN token master reset PIN?"
    assert "4417" in _answer(env, "dana@acme.io", question)["text"]
    assert env.bot.runtime.store.ledger.permissions_finished("slk") is None  # no permission sync yet

    env.slack.leave_channel(env.ids["dana@acme.io"], VPN_ADMINS)  # member_left_channel, signed, to the app
    assert env.bot.sync_trigger.settle(WAIT_S)

    assert (
        env.bot.runtime.store.ledger.permissions_finished("slk") is not None
    )  # the event's, not the clock's
    answer = _answer(env, "dana@acme.io", question)
    assert "4417" not in str(answer)
    assert not any(doc_id.startswith(f"slk:{VPN_ADMINS}") for doc_id in _cited(answer))


def test_an_edited_reply_is_what_the_next_sync_indexes(make_env: EnvFactory) -> None:
    env = make_env(slack_event_content_sync=False)  # no event-started content sync: the next one, by hand
    found = _slack_source(env)
    vpn = f"slk:{ENG_HELP}:{found['vpn']}"
    env.slack.edit_as_user(
        env.ids["dana@acme.io"], ENG_HELP, found["reply"], "Run `vpnctl rotate --laptop` and sign in again."
    )
    env.slack.calls.clear()

    summary = env.bot.runtime.sync_service.run("slk")

    assert summary.updated == 1, summary
    assert [c["ts"] for c in env.slack.calls_to("conversations.replies")] == [found["vpn"]]
    answer = _answer(env, "bob@acme.io", "how do I reset the VPN token on my laptop?")
    assert vpn in _cited(answer)
    assert "vpnctl rotate" in answer["text"] and "vpnctl reset" not in answer["text"]


def test_a_deleted_thread_is_gone_after_the_sync_its_event_started(make_env: EnvFactory) -> None:
    env = make_env(slack_event_content_delay_s=0.0)
    found = _slack_source(env)
    freeze = f"slk:{ENG_HELP}:{found['freeze']}"
    question = "when does the deploy freeze start in the Lisbon office?"
    assert freeze in _cited(_answer(env, "bob@acme.io", question))

    env.slack.delete_as_user(env.ids["dana@acme.io"], ENG_HELP, found["freeze"])  # message_deleted
    assert env.bot.sync_trigger.settle(WAIT_S)

    assert freeze not in env.bot.runtime.store.acls("slk")
    answer = _answer(env, "bob@acme.io", question)
    assert freeze not in _cited(answer) and "Lisbon" not in answer["text"]
