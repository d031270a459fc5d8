"""The model's fallback rate where an operator and an asker can see it: the admin App Home sums the recent
answers' traces, and an answer's trace says how many of its steps the model answered and which fell back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.local_slack import GENERAL
from bot.render import SHOW_TRACE_ACTION
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory
from tests.servers.model_brains import Faithful, step_of
from tests.servers.model_sim import ModelSimulator, Turn, serve

QUESTION = "why did the 4.2 Android release slip?"


@pytest.fixture
def sim() -> Iterator[ModelSimulator]:
    with serve() as server:
        yield server


def test_the_admin_home_and_the_trace_show_the_model_fallback_rate(
    make_env: EnvFactory, sim: ModelSimulator
) -> None:
    faithful = Faithful()

    def compose_unreadable(turn: Turn) -> object:  # plan and reflect fine; compose never readable
        return "Sorry, I can't help with that." if step_of(turn) == "compose" else faithful(turn)

    sim.respond = compose_unreadable
    env = make_env(llm_model="openai:sim", llm_base_url=sim.base_url("openai"), llm_api_key="k")
    dana, alice = env.ids["dana@acme.io"], env.ids["alice@acme.io"]
    env.bot.settings.admin_users.append(dana)

    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)
    shown_answer = format_message(answer)
    assert "*Sources*" in shown_answer  # the offline reasoner composed it: never a silent "not found"
    assert "answered by the offline reader: the model gave replies Sleuth could not use" in shown_answer

    env.slack.open_app_home(dana)
    home = format_message(env.slack.wait_for(lambda: env.slack.home_view(dana)))
    assert "Model (admin)" in home and "`openai:sim`" in home
    assert (
        "Last 1 answer(s): fallback rate *" in home and "(1 of " in home and "compose: invalid reply" in home
    )

    env.slack.click_button(alice, answer["ts"], GENERAL, SHOW_TRACE_ACTION)
    [trace] = env.slack.ephemeral_messages(alice, GENERAL)
    shown = format_message(trace)
    assert "*Model* ·" in shown and "1 of " in shown and "fell back to the offline reasoner" in shown


def test_without_a_model_the_admin_home_says_answers_are_offline(make_env: EnvFactory) -> None:
    env = make_env()
    dana = env.ids["dana@acme.io"]
    env.bot.settings.admin_users.append(dana)
    env.slack.open_app_home(dana)
    home = format_message(env.slack.wait_for(lambda: env.slack.home_view(dana)))
    assert "None configured: every answer comes from the offline reasoner." in home


def test_an_answer_from_the_model_has_no_fallback_line(make_env: EnvFactory, sim: ModelSimulator) -> None:
    sim.respond = Faithful()
    env = make_env(llm_model="openai:sim", llm_base_url=sim.base_url("openai"), llm_api_key="k")
    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)
    shown = format_message(answer)
    assert "Confidence" in shown and "offline reader" not in shown and "the model" not in shown
