"""The visible acknowledgement: before Slack gets its ack, the question's thread shows Sleuth took it, whatever
the workers are doing; while every worker is busy it says the question is queued."""

from __future__ import annotations

from bot.jobs import DONE
from bot.local_slack import GENERAL
from bot.receipt import PLACEHOLDER
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory

QUESTIONS = ("why did the 4.2 Android release slip?", "who owns OPS-31?", "what is the P1 response time?")


def test_a_placeholder_is_there_when_the_ack_is_and_says_queued_behind_others(make_env: EnvFactory) -> None:
    env = make_env(workers=0)  # nobody is working: the acknowledgement does not depend on workers

    threads = [env.mention("alice@acme.io", q) for q in QUESTIONS]

    first, second, third = ([m["text"] for m in env.slack.bot_messages(GENERAL, ts)] for ts in threads)
    assert first == [PLACEHOLDER]  # one worker's worth of room: started next
    assert second == ["Queued: 1 question ahead of yours. I'll start on it shortly…"]
    assert third == ["Queued: 2 questions ahead of yours. I'll start on it shortly…"]

    env.bot.pool.start()
    for ts in threads:
        [answer] = env.wait_answers(GENERAL, ts)
        assert "*Sources*" in format_message(answer) and len(env.slack.bot_messages(GENERAL, ts)) == 1
    queued_placeholders = {env.slack.bot_messages(GENERAL, ts)[0]["ts"] for ts in threads[1:]}
    switched = {c["ts"] for c in env.slack.calls_to("chat.update") if c.get("text") == PLACEHOLDER}
    assert switched == queued_placeholders  # "queued" became "looking into it" when a worker started
    assert env.bot.jobs.counts() == {DONE: 3}


def test_a_bot_user_without_bot_id_gets_no_acknowledgement_and_no_answer(make_env: EnvFactory) -> None:
    env = make_env()
    env.slack.add_user("U0WFBOT", "workflowbot", is_bot=True)
    env.slack.workspace.channels[GENERAL].members.append("U0WFBOT")

    ts = env.slack.post_as_user("U0WFBOT", GENERAL, f"<@{env.slack.bot_user_id}> {QUESTIONS[0]}")

    assert env.bot.jobs.counts() == {} and env.slack.bot_messages(GENERAL, ts) == []
