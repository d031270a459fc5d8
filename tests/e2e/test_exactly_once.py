"""Retries, duplicate event kinds, crashed workers, edits and deletions: one answer per question, or none."""

from __future__ import annotations

import pytest

from bot.answering import PLACEHOLDER, WITHDRAWN
from bot.jobs import DONE, PENDING
from bot.local_slack import GENERAL
from bot.render import UPDATE_NOTE
from bot.testing.slack_render import format_message
from graph_flows.flow import thread_id
from tests.e2e.conftest import EnvFactory, SlackEnv

QUESTION = "why did the 4.2 Android release slip?"

# The answer posted the ordinary way, into the placeholder (streamed answers: test_streaming.py).
POSTED = {"slack_stream_answers": False}


def _posts_in_thread(env: SlackEnv, ts: str) -> int:
    return sum(1 for c in env.slack.calls_to("chat.postMessage") if c.get("thread_ts") == ts)


def test_the_same_event_delivered_three_times_is_answered_once(make_env: EnvFactory) -> None:
    env = make_env(workers=0)
    ts = env.mention("alice@acme.io", QUESTION)
    mention = next(d.payload for d in env.slack.deliveries if d.payload["event"]["type"] == "app_mention")

    for retry in (1, 2):
        response = env.slack.deliver(mention["event"], event_id=mention["event_id"], retry_num=retry)
        assert response.status_code == 200

    assert env.bot.jobs.counts() == {PENDING: 1}
    env.bot.pool.start()
    env.wait_answers(GENERAL, ts)
    assert env.bot.jobs.counts() == {DONE: 1}
    assert _posts_in_thread(env, ts) == 1 and len(env.slack.bot_messages(GENERAL, ts)) == 1


def test_a_worker_that_dies_mid_answer_is_replaced_and_the_placeholder_updated(make_env: EnvFactory) -> None:
    env = make_env(**POSTED, workers=0, lease_s=60)
    ts = env.mention("alice@acme.io", QUESTION)
    job = env.bot.jobs.claim("doomed-worker")
    assert job is not None
    job = env.bot.answerer.ensure_placeholder(job, "doomed-worker")  # ... and then the worker dies
    [placeholder] = env.slack.bot_messages(GENERAL, ts)
    assert placeholder["text"] == PLACEHOLDER and job.placeholder_ts == placeholder["ts"]

    assert not env.bot.pool.run_once("rescuer")  # the lease still holds
    env.clock.advance(61)
    assert env.bot.pool.run_once("rescuer")

    [answer] = env.slack.bot_messages(GENERAL, ts)
    assert answer["ts"] == placeholder["ts"] and "*Sources*" in format_message(answer)
    assert _posts_in_thread(env, ts) == 1
    assert any(c["ts"] == placeholder["ts"] for c in env.slack.calls_to("chat.update"))
    done = env.bot.jobs.get(job.id)
    assert done is not None and (done.status, done.attempts, done.claimed_by) == (DONE, 2, "rescuer")


class WorkerDied(BaseException):
    """Stands for the process dying: not an `Exception`, so no handler turns it into an apology."""


def test_a_worker_that_dies_after_posting_does_not_post_or_investigate_again(
    make_env: EnvFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_env(**POSTED, workers=0, lease_s=60)
    ts = env.mention("alice@acme.io", QUESTION)

    def die(job_id: int, worker: str) -> bool:
        raise WorkerDied

    with monkeypatch.context() as patch:
        patch.setattr(env.bot.jobs, "complete", die)  # the answer is posted, "done" is never written
        with pytest.raises(WorkerDied):
            env.bot.pool.run_once("first")
    env.clock.advance(61)
    assert env.bot.pool.run_once("second")

    assert _posts_in_thread(env, ts) == 1 and len(env.slack.bot_messages(GENERAL, ts)) == 1
    assert env.bot.jobs.counts() == {DONE: 1}
    history = env.bot.runtime.investigator.history(thread_id(env.slack.workspace.team_id, GENERAL, ts))
    assert history["turn"] == 1  # the saved result was reused, not investigated twice


def test_an_edited_question_is_answered_again_once_as_an_update(env: SlackEnv) -> None:
    alice = env.ids["alice@acme.io"]
    ts = env.mention("alice@acme.io", QUESTION)
    env.wait_answers(GENERAL, ts)

    env.slack.edit_as_user(
        alice, GENERAL, ts, f"<@{env.slack.bot_user_id}> why did the iOS 4.2 release slip?"
    )
    edit = env.slack.deliveries[-1].payload
    env.slack.deliver(edit["event"], event_id=edit["event_id"], retry_num=1)

    _, update = env.wait_answers(GENERAL, ts, count=2)
    assert UPDATE_NOTE in format_message(update) and update["thread_ts"] == ts
    assert len(env.slack.bot_messages(GENERAL, ts)) == 2


def test_deleting_the_question_withdraws_the_answer(env: SlackEnv) -> None:
    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)

    env.slack.delete_as_user(env.ids["alice@acme.io"], GENERAL, ts)

    [withdrawn] = env.slack.bot_messages(GENERAL, ts)
    assert withdrawn["ts"] == answer["ts"] and withdrawn["text"] == WITHDRAWN


def test_deleting_a_question_before_it_is_answered_cancels_it(make_env: EnvFactory) -> None:
    env = make_env(workers=0)
    ts = env.mention("alice@acme.io", QUESTION)

    env.slack.delete_as_user(env.ids["alice@acme.io"], GENERAL, ts)

    assert not env.bot.pool.run_once("w")
    assert env.bot.jobs.counts() == {"cancelled": 1}
    [note] = env.slack.bot_messages(GENERAL)  # the intake's placeholder, withdrawn
    assert note["text"] == WITHDRAWN
