"""Buttons on the answer, App Home and the agent view's suggested prompts."""

from __future__ import annotations

from bot.listeners.actions.feedback import THANKS
from bot.local_slack import GENERAL
from bot.render import FEEDBACK_ACTION, SHOW_TRACE_ACTION
from bot.render_trace import NOT_YOURS
from graph_flows.flow import thread_id
from tests.e2e.conftest import SlackEnv

QUESTION = "why did the 4.2 Android release slip?"


def test_feedback_click_is_recorded_with_thread_and_trace(env: SlackEnv) -> None:
    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)
    alice = env.ids["alice@acme.io"]

    response = env.slack.click_button(alice, answer["ts"], GENERAL, FEEDBACK_ACTION)

    assert response.status_code == 200
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    [feedback] = env.bot.feedback.all()
    assert (feedback.value, feedback.user, feedback.trace_id) == ("good", alice, job.trace_id)
    assert feedback.thread_id == thread_id(env.slack.workspace.team_id, GENERAL, ts)
    assert env.slack.ephemeral_messages(alice, GENERAL)[-1]["text"] == THANKS


def test_show_trace_is_private_to_the_asker(env: SlackEnv) -> None:
    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)
    alice, bob = env.ids["alice@acme.io"], env.ids["bob@acme.io"]

    env.slack.click_button(alice, answer["ts"], GENERAL, SHOW_TRACE_ACTION)
    env.slack.click_button(bob, answer["ts"], GENERAL, SHOW_TRACE_ACTION)

    [trace] = env.slack.ephemeral_messages(alice, GENERAL)
    assert trace["text"] == "How I answered"
    assert any("Round 1 · retrieve" in b.get("text", {}).get("text", "") for b in trace["blocks"])
    assert [m["text"] for m in env.slack.ephemeral_messages(bob, GENERAL)] == [NOT_YOURS]


def test_messages_tab_gets_suggested_prompts_and_home_tab_a_view(env: SlackEnv) -> None:
    alice = env.ids["alice@acme.io"]

    assert env.slack.open_app_home(alice, tab="messages").status_code == 200
    assert env.slack.open_app_home(alice, tab="home").status_code == 200

    [prompts] = env.slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert prompts["prompts"][0]["message"]
    assert "thread_ts" not in prompts  # Slack: a thread_ts makes the call fail silently for agent apps
    view = env.slack.home_view(alice)
    assert view is not None and "acme" in view["blocks"][0]["text"]["text"]
