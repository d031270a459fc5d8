"""Questions reach Sleuth every way a person asks, and the answer lands in the right thread, cited."""

from __future__ import annotations

from bot.jobs import DONE
from bot.listeners.commands import replies
from bot.local_slack import GENERAL
from bot.receipt import PLACEHOLDER
from bot.render_insights import NO_GAPS
from bot.testing.slack_render import format_message
from graph_flows.flow import thread_id
from tests.e2e.conftest import EnvFactory, SlackEnv

CROSS = "why did the 4.2 Android release slip?"
FINANCE = "what is the unit price of a KM-40 rev C motor?"
UNANSWERABLE = "is there parking at the Oakland office, and do we reimburse it?"


def _sources(env: SlackEnv, channel: str, message_ts: str) -> list[str]:
    jobs = env.bot.jobs.for_message(env.slack.workspace.team_id, channel, message_ts)
    return [s["doc_id"] for job in jobs if job.result for s in job.result["answer"]["sources"]]


def _hidden_from(env: SlackEnv, email: str, doc_ids: list[str]) -> list[str]:
    rt = env.bot.runtime
    principals = rt.principals_for_email(email)
    return [d for d in doc_ids if rt.store.document(d, principals) is None]


def _principals_used(env: SlackEnv, thread_ts: str) -> set[str]:
    history = env.bot.runtime.investigator.history(thread_id(env.slack.workspace.team_id, GENERAL, thread_ts))
    return set(history["principals"])


def test_mention_gets_one_threaded_answer_with_citations(env: SlackEnv) -> None:
    ts = env.mention("alice@acme.io", CROSS)

    [answer] = env.wait_answers(GENERAL, ts)
    shown = format_message(answer)
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    sources = job.result["answer"]["sources"] if job.result else []
    assert sources and all(f"[{s['n']}] {s['title']}" in shown for s in sources)
    assert (
        "*Sources*" in shown
        and "Confidence" in shown
        and "[1]" in format_message({"blocks": answer["blocks"][:1]})
    )
    assert len(env.slack.bot_messages(GENERAL, ts)) == 1  # the placeholder became the answer
    assert [d.kind for d in env.slack.deliveries].count("events") == 2  # app_mention + message: one job
    statuses = env.slack.wait_for(lambda: (s := env.slack.statuses(GENERAL, ts)) and s[-1] == "" and s)
    assert statuses[0] == PLACEHOLDER  # later lines are coalesced and rate limited (tests/integration)
    assert all(s.startswith(("Round ", "Planning", "Writing")) for s in statuses[1:-1])


def test_a_question_the_corpus_cannot_answer_lists_open_gaps(env: SlackEnv) -> None:
    ts = env.mention("dana@acme.io", UNANSWERABLE)

    [answer] = env.wait_answers(GENERAL, ts)
    assert "*Open gaps*\n• " in format_message(answer)


def test_follow_up_without_mention_continues_the_thread(env: SlackEnv) -> None:
    ts = env.mention("alice@acme.io", CROSS)
    env.wait_answers(GENERAL, ts)

    env.slack.post_as_user(
        env.ids["alice@acme.io"], GENERAL, "which company makes those motors?", thread_ts=ts
    )

    _, second = env.wait_answers(GENERAL, ts, count=2)
    assert second["thread_ts"] == ts
    history = env.bot.runtime.investigator.history(thread_id(env.slack.workspace.team_id, GENERAL, ts))
    assert history["turn"] == 2


def test_a_reply_by_someone_else_is_answered_with_their_permissions(env: SlackEnv) -> None:
    ts = env.mention("bob@acme.io", FINANCE)
    env.wait_answers(GENERAL, ts)
    assert "group:acme:finance" in _principals_used(env, ts)

    reply = env.slack.post_as_user(env.ids["carol@acme.io"], GENERAL, FINANCE, thread_ts=ts)

    env.wait_answers(GENERAL, ts, count=2)
    assert _principals_used(env, ts) == set(env.bot.runtime.principals_for_email("carol@acme.io"))
    assert not _hidden_from(env, "carol@acme.io", _sources(env, GENERAL, reply))


def test_restricted_question_in_separate_threads(env: SlackEnv) -> None:
    bob_ts, carol_ts = env.mention("bob@acme.io", FINANCE), env.mention("carol@acme.io", FINANCE)
    env.wait_answers(GENERAL, bob_ts)
    env.wait_answers(GENERAL, carol_ts)
    assert "group:acme:finance" in _principals_used(env, bob_ts)
    assert "group:acme:finance" not in _principals_used(env, carol_ts)
    assert not _hidden_from(env, "carol@acme.io", _sources(env, GENERAL, carol_ts))


def test_dm_question_is_answered_in_the_dm(env: SlackEnv) -> None:
    dm = env.slack.open_dm(env.ids["alice@acme.io"])

    ts = env.slack.post_as_user(env.ids["alice@acme.io"], dm, CROSS)

    [answer] = env.wait_answers(dm, ts)
    assert "*Sources*" in format_message(answer)


def _top_level(env: SlackEnv) -> list[dict]:
    return [m for m in env.slack.bot_messages(GENERAL) if m.get("thread_ts", m["ts"]) == m["ts"]]


def test_slash_command_ask_answers_in_a_thread_under_its_visible_echo(env: SlackEnv) -> None:
    alice = env.ids["alice@acme.io"]

    response = env.slack.slash_command(alice, GENERAL, "/sleuth", f"ask {CROSS}")

    assert response.status_code == 200
    assert env.slack.ephemeral_messages(alice, GENERAL)[-1]["text"] == replies.ASKING
    env.settle()
    [echo] = _top_level(env)  # posted right after the ack
    assert format_message(echo) == f"<@{alice}> asked: {CROSS}"
    [answer] = env.wait_answers(GENERAL, echo["ts"])
    assert "*Sources*" in format_message(answer) and answer["thread_ts"] == echo["ts"]
    assert [m["ts"] for m in _top_level(env)] == [echo["ts"]]
    assert env.bot.jobs.counts() == {DONE: 1}


def test_slash_command_help_sources_and_gaps(make_env: EnvFactory) -> None:
    env = make_env(admin_users=["U0DANA"])
    alice, dana = env.ids["alice@acme.io"], env.ids["dana@acme.io"]
    for text, user, expected in [
        ("", alice, "/sleuth ask"),
        ("help", alice, "/sleuth link"),
        ("sources", alice, "`acme` (folder)"),
        ("gaps", alice, NO_GAPS),  # a non-admin reads only their own gaps
        ("gaps", dana, NO_GAPS),
        ("forget", alice, replies.forgotten_text(0, 0)),
        ("link", alice, replies.NOTHING_TO_LINK),
    ]:
        assert env.slack.slash_command(user, GENERAL, "/sleuth", text).status_code == 200
        assert expected in env.slack.ephemeral_messages(user, GENERAL)[-1]["text"], text
