"""Channel audience policy over real HTTP: restricted answers go to the asker privately by default; a channel
set to `channel` is answered only from what every member may see."""

from __future__ import annotations

from bot.audience import PRIVATE_NOTE
from bot.local_slack import GENERAL
from bot.testing.slack_render import format_message
from graph_flows.flow import thread_id
from tests.e2e.conftest import EnvFactory

FINANCE = "what is the unit price of a KM-40 rev C motor?"
FINANCE_ONLY = {"acme:wiki/finance/supplier-contract-terms", "acme:FIN-7", "acme:FIN-9", "acme:FIN-12"}


def test_an_answer_from_restricted_documents_goes_to_the_asker_privately(make_env: EnvFactory) -> None:
    env = make_env()
    bob = env.ids["bob@acme.io"]
    ts = env.mention("bob@acme.io", FINANCE)

    [public] = env.wait_answers(GENERAL, ts)

    assert PRIVATE_NOTE in format_message(public) and "*Sources*" not in format_message(public)
    private = [m for m in env.slack.ephemeral_messages(bob, GENERAL) if "*Sources*" in format_message(m)]
    assert private, "bob got no private answer"
    job = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)[0]
    assert {s["doc_id"] for s in job.result["answer"]["sources"]} & FINANCE_ONLY


def test_a_channel_policy_answers_only_from_what_every_member_may_see(make_env: EnvFactory) -> None:
    env = make_env(admin_users=[])
    env.bot.settings.admin_users.append(env.ids["dana@acme.io"])
    team = env.slack.workspace.team_id
    refused = env.slack.slash_command(env.ids["bob@acme.io"], GENERAL, "/sleuth", "policy channel")
    assert "Only Sleuth admins" in refused.text
    env.slack.slash_command(env.ids["dana@acme.io"], GENERAL, "/sleuth", "policy channel")
    assert env.bot.audience.policy(team, GENERAL) == "channel"

    ts = env.mention("bob@acme.io", FINANCE)
    [answer] = env.wait_answers(GENERAL, ts)

    used = set(env.bot.runtime.investigator.history(thread_id(team, GENERAL, ts))["principals"])
    assert "group:acme:finance" not in used  # carol (no groups) is in #general
    assert PRIVATE_NOTE not in format_message(answer)
    job = env.bot.jobs.for_message(team, GENERAL, ts)[0]
    assert not {s["doc_id"] for s in job.result["answer"]["sources"]} & FINANCE_ONLY
