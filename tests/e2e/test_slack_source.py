"""Slack as a source, end to end on the emulator: a thread answered three weeks ago in #eng-help answers a
question asked in #general, cited by that thread's permalink, and a private channel's thread reaches only its
members."""

from __future__ import annotations

from bot.local_slack import GENERAL
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory, SlackEnv

ENG_HELP = "C0ENGHELP"
QUESTION = "how do I reset the VPN token on my laptop?"


def _slack_source(env: SlackEnv) -> str:
    """#eng-help with an answered thread, a private channel with one member, both synced as a Slack source."""
    slack, ids = env.slack, env.ids
    slack.add_channel(ENG_HELP, "eng-help", members=list(ids.values()))
    parent = slack.post_as_user(ids["alice@acme.io"], ENG_HELP, "How do I reset the VPN token on my laptop?")
    slack.post_as_user(ids["dana@acme.io"], ENG_HELP, "Run `vpnctl reset --token` and sign in again.", parent)
    slack.add_channel("G0VPNADMIN", "vpn-admins", members=[ids["dana@acme.io"]], is_private=True)
    slack.post_as_user(ids["dana@acme.io"], "G0VPNADMIN", "VPN token master reset PIN is 4417 for laptops.")
    rt = env.bot.runtime
    config = {"token": slack.bot_token, "base_url": slack.api_url, "channels": ["eng-help"]}
    rt.catalog.add("slk", "slack", config, added_by="test")
    summary = rt.sync_service.run("slk")
    assert summary.ok and summary.added == 2, summary
    return parent


def test_a_question_is_answered_from_an_earlier_thread_citing_its_permalink(make_env: EnvFactory) -> None:
    env = make_env()
    parent = _slack_source(env)
    permalink = f"https://acme.slack.com/archives/{ENG_HELP}/p{parent.replace('.', '')}"
    bob = env.ids["bob@acme.io"]

    ts = env.mention("bob@acme.io", QUESTION)
    env.wait_answers(GENERAL, ts)

    job = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)[0]
    sources = job.result["answer"]["sources"]
    assert sources[0]["doc_id"] == f"slk:{ENG_HELP}:{parent}" and sources[0]["url"] == permalink
    assert "vpnctl reset" in job.result["answer"]["text"]
    shown = [format_message(m) for m in env.slack.ephemeral_messages(bob, GENERAL)]  # not public: to bob
    assert any(permalink in text and "vpnctl reset" in text for text in shown)
    assert not any("4417" in text for text in shown)  # the private channel's thread is not bob's


def test_a_private_channel_thread_answers_only_its_members(make_env: EnvFactory) -> None:
    env = make_env()
    _slack_source(env)
    team = env.slack.workspace.team_id
    asked = {
        who: env.mention(who, "what is the VPN token master reset PIN?")
        for who in ("bob@acme.io", "dana@acme.io")
    }
    for ts in asked.values():
        env.wait_answers(GENERAL, ts)
    answers = {
        who: env.bot.jobs.for_message(team, GENERAL, ts)[0].result["answer"] for who, ts in asked.items()
    }
    assert "4417" in answers["dana@acme.io"]["text"]
    assert "4417" not in str(answers["bob@acme.io"])
    assert not any(s["doc_id"].startswith("slk:G0VPNADMIN") for s in answers["bob@acme.io"]["sources"])
