"""The visible acknowledgement: right after Slack gets its ack (never before: no Web API call delays the ack),
the question's thread shows Sleuth took it, whatever the workers are doing; while every worker is busy it says
the question is queued; each question is acknowledged once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from bot.jobs import CANCELLED, DONE, PENDING
from bot.local_slack import GENERAL
from bot.receipt import PLACEHOLDER
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory, SlackEnv

QUESTIONS = ("why did the 4.2 Android release slip?", "who owns OPS-31?", "what is the P1 response time?")


def test_a_placeholder_is_there_when_the_ack_is_and_says_queued_behind_others(make_env: EnvFactory) -> None:
    env = make_env(workers=0)  # nobody is working: the acknowledgement does not depend on workers

    threads = [env.mention("alice@acme.io", q) for q in QUESTIONS]

    first, second, third = ([m["text"] for m in env.slack.bot_messages(GENERAL, ts)] for ts in threads)
    assert first == [PLACEHOLDER]  # one worker's worth of room: started next
    assert second == ["Queued: 1 question ahead of yours. I'll start on it shortly…"]
    assert third == ["Queued: 2 questions ahead of yours. I'll start on it shortly…"]

    queued_placeholders = {env.slack.bot_messages(GENERAL, ts)[0]["ts"] for ts in threads[1:]}
    env.bot.pool.start()
    for ts in threads:
        [answer] = env.wait_answers(GENERAL, ts)
        assert "*Sources*" in format_message(answer) and len(env.slack.bot_messages(GENERAL, ts)) == 1
    switched = {c["ts"] for c in env.slack.calls_to("chat.update") if c.get("text") == PLACEHOLDER}
    assert switched == queued_placeholders  # "queued" became "looking into it" when a worker started
    assert env.bot.jobs.counts() == {DONE: 3}


def test_a_bot_user_without_bot_id_gets_no_acknowledgement_and_no_answer(make_env: EnvFactory) -> None:
    env = make_env()
    env.slack.add_user("U0WFBOT", "workflowbot", is_bot=True)
    env.slack.workspace.channels[GENERAL].members.append("U0WFBOT")

    ts = env.slack.post_as_user("U0WFBOT", GENERAL, f"<@{env.slack.bot_user_id}> {QUESTIONS[0]}")
    env.settle()

    assert env.bot.jobs.counts() == {CANCELLED: 1} and env.slack.bot_messages(GENERAL, ts) == []
    assert env.bot.pool.run_once("w") is False


def test_slack_gets_its_ack_while_the_placeholder_is_still_on_its_way(make_env: EnvFactory) -> None:
    """The ack waits for no Web API call: Slack holds the placeholder's post, and the delivery is acked anyway."""
    env = make_env(workers=0)
    release = env.slack.hold_next("chat.postMessage")

    ts = env.slack.post_as_user(
        env.ids["alice@acme.io"], GENERAL, f"<@{env.slack.bot_user_id}> {QUESTIONS[0]}"
    )

    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    assert (
        job.acked_at is None
    )  # both deliveries acked (post_as_user returned); the acknowledgement is not done
    assert env.slack.wait_for(lambda: env.slack.held("chat.postMessage") == 1)
    release.set()
    env.settle()
    env.bot.pool.start()
    [answer] = env.wait_answers(GENERAL, ts)
    assert env.slack.bot_messages(GENERAL, ts) == [answer]  # acknowledged once, answered once
    assert env.bot.jobs.counts() == {DONE: 1}


def test_a_burst_is_acknowledged_once_per_question_saying_how_many_are_ahead(make_env: EnvFactory) -> None:
    env = make_env(workers=0)
    asked = [f"{QUESTIONS[n % 3]} ({n})" for n in range(12)]

    with ThreadPoolExecutor(max_workers=len(asked)) as people:  # all at once, each delivery twice
        threads = list(
            people.map(
                lambda q: env.slack.post_as_user(env.ids["bob@acme.io"], GENERAL, q),
                [f"<@{env.slack.bot_user_id}> {q}" for q in asked],
            )
        )
    env.settle()

    texts = sorted(m["text"] for ts in threads for m in env.slack.bot_messages(GENERAL, ts))
    queued = [
        f"Queued: {n} question{'s' if n > 1 else ''} ahead of yours. I'll start on it shortly…"
        for n in range(1, 12)
    ]
    assert texts == sorted([PLACEHOLDER, *queued])  # one each; the queue position as of the question


def _one_message_after_a_late_placeholder(env: SlackEnv, release: threading.Event, ts: str) -> dict:
    """Lets the held placeholder land, waits for the intake to settle it, and returns the thread's one message."""
    release.set()
    env.settle()  # the late post answered and was kept or deleted
    [message] = env.slack.bot_messages(GENERAL, ts)
    return message


def test_a_placeholder_slower_than_the_intake_timeout_lands_after_the_answer_and_is_removed(
    make_env: EnvFactory,
) -> None:
    """Slack takes the intake's post only after the worker answered: the late "Looking into it…" is deleted."""
    env = make_env(slack_stream_answers=False)  # the answer replaces the worker's placeholder in place
    release = env.slack.hold_next("chat.postMessage")  # taken (and posted) only once released

    ts = env.slack.post_as_user(
        env.ids["alice@acme.io"], GENERAL, f"<@{env.slack.bot_user_id}> {QUESTIONS[0]}"
    )
    [answer] = env.wait_answers(GENERAL, ts)  # the worker posted its own placeholder, then answered
    assert env.slack.held("chat.postMessage") == 1

    assert _one_message_after_a_late_placeholder(env, release, ts)["ts"] == answer["ts"]
    assert "*Sources*" in format_message(answer) and env.bot.jobs.counts() == {DONE: 1}
    assert len(env.slack.calls_to("chat.delete")) == 1  # the late one, once it existed


def test_a_placeholder_slower_than_the_intake_timeout_is_kept_when_it_lands_first(
    make_env: EnvFactory,
) -> None:
    """The late post lands before any worker started: it is the placeholder, and the answer replaces it."""
    env = make_env(workers=0, slack_stream_answers=False)
    release = env.slack.hold_next("chat.postMessage")
    ts = env.slack.post_as_user(
        env.ids["alice@acme.io"], GENERAL, f"<@{env.slack.bot_user_id}> {QUESTIONS[0]}"
    )
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    assert env.slack.wait_for(lambda: (env.bot.jobs.get(job.id) or job).acked_at is not None, timeout=10)

    placeholder = _one_message_after_a_late_placeholder(env, release, ts)
    assert (
        placeholder["text"] == PLACEHOLDER
        and (env.bot.jobs.get(job.id) or job).placeholder_ts == placeholder["ts"]
    )
    env.bot.pool.start()
    [answer] = env.wait_answers(GENERAL, ts)
    assert env.slack.bot_messages(GENERAL, ts) == [answer] and answer["ts"] == placeholder["ts"]
    assert env.slack.calls_to("chat.delete") == []


def test_no_web_api_call_comes_before_the_placeholder(make_env: EnvFactory) -> None:
    """`users.info` (who asks, and whether a bot) waits until the placeholder is posted: a slow one delays
    nothing the asker sees."""
    env = make_env(workers=0)
    release = env.slack.hold_next("users.info")

    ts = env.slack.post_as_user(env.ids["bob@acme.io"], GENERAL, f"<@{env.slack.bot_user_id}> {QUESTIONS[1]}")
    assert env.slack.wait_for(lambda: env.slack.held("users.info") == 1, timeout=10)

    assert [m["text"] for m in env.slack.bot_messages(GENERAL, ts)] == [PLACEHOLDER]  # shown while it waits
    release.set()
    env.settle()
    calls = [
        c.method for c in env.slack.calls if c.method != "auth.test"
    ]  # a held call is recorded when taken
    assert calls == ["chat.postMessage", "users.info"]
    assert env.bot.jobs.counts() == {PENDING: 1}  # and the question waits for a worker, not dropped
