"""Slack failing while Sleuth answers: every transient fault on every write method ends in exactly one answer.

Faults come from the emulator, on the wire: HTTP 500/503, `fatal_error` (HTTP 200, ok=false), runs of 429 with
`Retry-After`, and timeouts where the call took effect but its response never arrived in time.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.answering import GIVE_UP_S, UNDELIVERED
from bot.jobs import DONE, FAILED, PENDING
from bot.local_slack import GENERAL
from bot.receipt import PLACEHOLDER
from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_render import format_message
from graph_flows.flow import thread_id
from tests.e2e.conftest import EnvFactory, SlackEnv

QUESTION = "why did the 4.2 Android release slip?"
TIMEOUT_S = 1.0  # the bot's Web API timeout in these tests; slow faults answer later than this
WRITE_METHODS = ("chat.postMessage", "chat.update", "assistant.threads.setStatus")

Fault = Callable[[SlackEmulator, str], None]
FAULTS: dict[str, Fault] = {
    "http-500": lambda slack, method: slack.fail_next(method, "internal_error", status=500),
    "http-503": lambda slack, method: slack.fail_next(method, "service_unavailable", status=503),
    "fatal_error": lambda slack, method: slack.fail_next(method, "fatal_error", status=200),
    "429x3": lambda slack, method: slack.fail_next(method, retry_after=0, times=3),
    "429x5": lambda slack, method: slack.fail_next(method, retry_after=0, times=5),
    "timeout": lambda slack, method: slack.slow_next(method, TIMEOUT_S + 1.5),
}

# The answer posted the ordinary way (placeholder updated): faults on the streaming calls are in test_streaming.py.
POSTED = {"slack_stream_answers": False}


def _bot_messages_in_thread(env: SlackEnv, ts: str) -> list[dict]:
    return [m for m in env.slack.bot_messages(GENERAL, ts) if m["ts"] != ts]


@pytest.mark.parametrize("method", WRITE_METHODS)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_transient_fault_on_a_write_still_gives_exactly_one_answer(
    make_env: EnvFactory, method: str, fault: str
) -> None:
    env = make_env(**POSTED, slack_timeout_s=TIMEOUT_S)
    FAULTS[fault](env.slack, method)

    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)

    assert "*Sources*" in format_message(answer)
    assert _bot_messages_in_thread(env, ts) == [answer]  # the placeholder became the answer; nothing else
    assert env.bot.jobs.counts() == {DONE: 1}


def test_an_update_that_keeps_failing_is_redelivered_from_the_job_table(make_env: EnvFactory) -> None:
    env = make_env(**POSTED, workers=0)
    ts = env.mention("alice@acme.io", QUESTION)
    env.slack.fail_next("chat.update", "internal_error", status=500, times=50)

    assert env.bot.pool.run_once("first")  # investigates, saves the answer, Slack refuses it: deferred

    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    assert job.status == PENDING and job.result is not None and job.failing_since is not None
    [placeholder] = _bot_messages_in_thread(env, ts)
    assert placeholder["text"] == PLACEHOLDER
    assert not env.bot.pool.run_once("early")  # not due yet: backing off

    env.slack.clear_faults()
    env.clock.advance(61)
    assert env.bot.pool.run_once("next-tick")

    [answer] = _bot_messages_in_thread(env, ts)
    assert answer["ts"] == placeholder["ts"] and "*Sources*" in format_message(answer)
    assert env.bot.jobs.counts() == {DONE: 1}
    history = env.bot.runtime.investigator.history(thread_id(env.slack.workspace.team_id, GENERAL, ts))
    assert history["turn"] == 1  # the saved answer was delivered, not investigated again


def test_a_rate_limit_longer_than_the_inline_wait_is_waited_out_in_the_table(make_env: EnvFactory) -> None:
    env = make_env(**POSTED, workers=0)
    ts = env.mention("alice@acme.io", QUESTION)
    env.slack.fail_next("chat.update", retry_after=45)

    assert env.bot.pool.run_once("first")

    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    assert job.status == PENDING
    env.clock.advance(30)
    assert not env.bot.pool.run_once("too-early")  # Retry-After: 45 is honoured
    env.clock.advance(16)
    assert env.bot.pool.run_once("after")
    assert len(env.answers(GENERAL, ts)) == 1 and env.bot.jobs.counts() == {DONE: 1}


def test_after_the_give_up_time_the_thread_is_told_once(make_env: EnvFactory) -> None:
    env = make_env(**POSTED, workers=0)
    ts = env.mention("alice@acme.io", QUESTION)
    env.slack.fail_next("chat.update", "fatal_error", status=200, times=100)

    assert env.bot.pool.run_once("first")
    env.clock.advance(GIVE_UP_S + 1)
    assert env.bot.pool.run_once("last")

    placeholder, told = _bot_messages_in_thread(env, ts)
    assert placeholder["text"] == PLACEHOLDER and told["text"] == UNDELIVERED
    assert env.bot.jobs.counts() == {FAILED: 1}
    env.clock.advance(GIVE_UP_S)
    assert not env.bot.pool.run_once("after") and len(_bot_messages_in_thread(env, ts)) == 2


def test_a_long_answer_whose_second_part_timed_out_is_not_posted_twice(make_env: EnvFactory) -> None:
    """The second part's post took effect but its response was lost; the retry finds it instead."""
    env = make_env(**POSTED, workers=0, slack_timeout_s=TIMEOUT_S)
    ts = env.mention("alice@acme.io", QUESTION)
    env.slack.clear_faults()
    job = env.bot.jobs.claim("w")
    assert job is not None
    parts = [{"text": f"part {n}", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": f"part {n}"}}]}
             for n in range(3)]  # fmt: skip
    env.slack.slow_next("chat.postMessage", TIMEOUT_S + 1.5)

    env.bot.answerer._publish(job, "w", parts)

    texts = [m["text"] for m in _bot_messages_in_thread(env, ts)]
    assert texts == ["part 0", "part 1", "part 2"]
    assert env.bot.jobs.counts() == {DONE: 1}
