"""What Sleuth must refuse, ignore or answer briefly, each without crashing."""

from __future__ import annotations

import time

import pytest

from bot.answering import EMPTY_HINT, TOO_LONG
from bot.local_slack import GENERAL
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory, SlackEnv


@pytest.mark.parametrize(("sign", "age_s"), [(False, 0), (True, 600)], ids=["unsigned", "stale-timestamp"])
def test_unsigned_or_stale_requests_get_401_and_do_nothing(
    make_env: EnvFactory, sign: bool, age_s: int
) -> None:
    env = make_env()  # HTTP: Socket Mode has no signatures
    event = {"type": "app_mention", "user": env.ids["alice@acme.io"], "text": "<@UBOT> hi", "ts": "1700000009.000001",
             "channel": GENERAL, "event_ts": "1700000009.000001"}  # fmt: skip

    response = env.slack.deliver(event, sign=sign, timestamp=time.time() - age_s)

    assert response.status_code == 401
    assert env.bot.jobs.counts() == {} and env.slack.calls_to("chat.postMessage") == []


def test_an_empty_mention_gets_a_hint(env: SlackEnv) -> None:
    ts = env.mention("alice@acme.io", "   ")
    [reply] = env.wait_answers(GENERAL, ts)
    assert reply["text"] == EMPTY_HINT


def test_a_40000_character_question_gets_a_clear_reply(env: SlackEnv) -> None:
    ts = env.mention("alice@acme.io", "why " * 10_000)
    [reply] = env.wait_answers(GENERAL, ts)
    assert reply["text"] == TOO_LONG


def test_another_bots_message_is_ignored(env: SlackEnv) -> None:
    env.slack.post_as_other_bot("B0OTHER", GENERAL, f"<@{env.slack.bot_user_id}> {'why?'}")
    assert all(d.status_code == 200 for d in env.slack.deliveries)
    assert env.bot.jobs.counts() == {} and env.slack.bot_messages(GENERAL) == []


def test_another_bots_mention_is_answered_when_answer_bots_is_on(make_env: EnvFactory) -> None:
    env = make_env(answer_bots=True)
    ts = env.slack.post_as_other_bot("B0OTHER", GENERAL, f"<@{env.slack.bot_user_id}> why did 4.2 slip?")
    [reply] = env.wait_answers(GENERAL, ts)
    assert "Confidence" in format_message(reply)


def test_a_reply_in_a_thread_sleuth_never_joined_is_ignored(env: SlackEnv) -> None:
    root = env.slack.post_as_user(env.ids["alice@acme.io"], GENERAL, "lunch at noon?")
    env.slack.post_as_user(env.ids["bob@acme.io"], GENERAL, "sure, why not", thread_ts=root)
    assert all(d.status_code == 200 for d in env.slack.deliveries)
    assert env.bot.jobs.counts() == {} and env.slack.bot_messages(GENERAL) == []
