"""The final answer streamed with chat.startStream / appendStream / stopStream where it is safe: in DMs, and in
channels once the audience is known to be the thread (never for an answer that goes privately); posted the
ordinary way where Slack has no streaming; exactly once whatever the streaming calls do on the wire."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest

from bot.audience import PRIVATE_NOTE
from bot.jobs import DONE
from bot.local_slack import GENERAL
from bot.posting import EVENT_TYPE
from bot.receipt import PLACEHOLDER
from bot.render import answer_markdown
from bot.streaming import chunks
from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_render import format_message, markdown_shown
from tests.e2e.conftest import EnvFactory, SlackEnv

QUESTION = "why did the 4.2 Android release slip?"
FINANCE = "what is the unit price of a KM-40 rev C motor?"  # bob's answer cites finance-only documents
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
TIMEOUT_S = 1.0


def _streamed_answer(env: SlackEnv, channel: str, ts: str, *, finished_later: bool = False) -> dict:
    """The one answer in the thread; streamed whole, or (`finished_later`: a redelivery finished the stream)
    written whole into the streamed message."""
    [answer] = env.wait_answers(channel, ts)
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, channel, ts)
    assert job.result is not None
    shown, text = format_message(answer), job.result["answer"]["text"]
    if not finished_later:
        text = answer_markdown(job.result["answer"])  # the checked answer, escaped, as markdown
        assert answer["text"] == text
        text = markdown_shown(text)
        assert shown.startswith(text)
    assert shown.count(text[:60]) == 1  # whole, and no piece of it twice
    assert "*Sources*" in shown and "Confidence" in shown
    assert (answer["metadata"] or {}).get("event_type") == EVENT_TYPE
    assert env.slack.bot_messages(channel, ts) == [answer]  # the placeholder made way for it
    assert job.placeholder_ts == answer["ts"] and env.bot.jobs.counts() == {DONE: 1}
    return answer


def test_a_dm_answer_is_streamed_without_a_recipient(make_env: EnvFactory) -> None:
    env = make_env()
    dm = env.slack.open_dm(env.ids["alice@acme.io"])
    ts = env.slack.post_as_user(env.ids["alice@acme.io"], dm, QUESTION)

    answer = _streamed_answer(env, dm, ts)

    [start] = env.slack.calls_to("chat.startStream")
    assert start["thread_ts"] == ts and "recipient_user_id" not in start
    appended = [c["markdown_text"] for c in env.slack.calls_to("chat.appendStream")]
    assert [start["markdown_text"], *appended] == chunks(answer["text"])  # a few sentences a call
    assert len(env.slack.calls_to("chat.stopStream")) == 1


def test_a_channel_answer_is_streamed_to_the_asker_once_it_is_for_the_thread(make_env: EnvFactory) -> None:
    env = make_env()
    ts = env.mention("alice@acme.io", QUESTION)

    _streamed_answer(env, GENERAL, ts)

    [start] = env.slack.calls_to("chat.startStream")
    assert (start["recipient_user_id"], start["recipient_team_id"]) == (
        env.ids["alice@acme.io"],
        env.slack.workspace.team_id,
    )


def test_an_answer_that_goes_privately_is_never_streamed(make_env: EnvFactory) -> None:
    env = make_env()
    ts = env.mention("bob@acme.io", FINANCE)

    [public] = env.wait_answers(GENERAL, ts)

    assert PRIVATE_NOTE in format_message(public)
    assert all(env.slack.calls_to(m) == [] for m in STREAM_METHODS)


def test_without_streaming_in_slack_the_answer_is_posted_the_ordinary_way(make_env: EnvFactory) -> None:
    env = make_env()
    for method in STREAM_METHODS:
        env.slack.remove_method(method)
    first = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, first)

    [placeholder_update] = [c for c in env.slack.calls_to("chat.update") if c["ts"] == answer["ts"]]
    assert "*Sources*" in format_message(answer) and placeholder_update
    second = env.mention("carol@acme.io", QUESTION)
    env.wait_answers(GENERAL, second)
    assert len(env.slack.calls_to("chat.startStream")) == 1  # tried once in this process, then not again


def test_a_stream_slack_refuses_is_posted_instead_and_streaming_stays_on(make_env: EnvFactory) -> None:
    env = make_env()
    env.slack.fail_next("chat.startStream", "invalid_arguments", status=200)
    first = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, first)
    assert "*Sources*" in format_message(answer) and env.bot.jobs.counts() == {DONE: 1}  # not an apology
    assert any(c["ts"] == answer["ts"] for c in env.slack.calls_to("chat.update"))

    second = env.mention("carol@acme.io", QUESTION)
    env.wait_answers(GENERAL, second)
    assert len(env.slack.calls_to("chat.stopStream")) == 1  # the next answer streams again


Fault = Callable[[SlackEmulator, str], None]
FAULTS: dict[str, Fault] = {
    "http-500": lambda slack, method: slack.fail_next(method, "internal_error", status=500),
    "fatal_error": lambda slack, method: slack.fail_next(method, "fatal_error", status=200),
    "429x3": lambda slack, method: slack.fail_next(method, retry_after=0, times=3),
    "timeout": lambda slack, method: slack.slow_next(method, TIMEOUT_S + 1.5),
}


@pytest.mark.parametrize("method", STREAM_METHODS)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_streaming_call_that_fails_still_gives_exactly_one_whole_answer(
    make_env: EnvFactory, method: str, fault: str
) -> None:
    env = make_env(slack_timeout_s=TIMEOUT_S)
    FAULTS[fault](env.slack, method)
    ts = env.mention("alice@acme.io", QUESTION)

    def settled() -> bool:  # answered, and every deferred retry done
        messages = env.slack.bot_messages(GENERAL, ts)
        return env.bot.jobs.counts() == {DONE: 1} and all(m["text"] != PLACEHOLDER for m in messages)

    for _ in range(8):  # a deferred job is due again after its backoff: move the clock past it
        with contextlib.suppress(TimeoutError):
            env.slack.wait_for(settled, timeout=3)
            break
        env.clock.advance(61)
        env.bot.jobs.wake_all()
    _streamed_answer(env, GENERAL, ts, finished_later=True)
