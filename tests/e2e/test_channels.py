"""Per-channel setup on the emulator with the real Bolt app: a `questions` channel answers questions posted
without a mention (and nothing else), a scoped channel reads only its sources, `post_only_when_confident`
keeps quiet, the escalation button pings once, a person's reply cancels Sleuth's, "remove" deletes it."""

from __future__ import annotations

from typing import Any

from bot.channel_activity import ANSWERED, CANCELLED, ESCALATED, REMOVED, SEEN, SILENT
from bot.channels import ChannelConfig
from bot.listeners.views.channel_setup import SETUP_CHANNEL
from bot.local_slack import GENERAL
from bot.render_channel import ESCALATE_ACTION, REMOVE_ACTION
from bot.testing.slack_render import format_message
from tests.e2e.conftest import WAIT_S, EnvFactory, SlackEnv

QUESTION = "when is the weekly on-call handoff?"
TRAVEL = "above what trip cost do I need my manager's pre-approval before booking?"
UNANSWERABLE = "is there parking at the Oakland office, and do we reimburse it?"
ADMIN = "UADMIN000"


def _questions_channel(env: SlackEnv, **config: Any) -> None:
    env.bot.channels.set(GENERAL, ChannelConfig(answer="questions", **config), by=ADMIN)


def _ask_channel(env: SlackEnv, email: str, text: str, thread_ts: str | None = None) -> str:
    """A person posts in #general without mentioning Sleuth."""
    ts = env.slack.post_as_user(env.ids[email], GENERAL, text, thread_ts)
    env.settle()
    return ts


def _reactions(env: SlackEnv, ts: str) -> list[dict[str, Any]]:
    message = env.slack.workspace.channels[GENERAL].find(ts) or {}
    return [r for r in message.get("reactions", []) if r.get("count")]


def _kinds(env: SlackEnv, ts: str) -> set[str]:
    return {kind for kind in (SEEN, ANSWERED, SILENT, CANCELLED, REMOVED, ESCALATED)
            if env.bot.activity.happened(GENERAL, ts, kind)}  # fmt: skip


def test_a_question_posted_without_a_mention_is_answered_in_its_thread(env: SlackEnv) -> None:
    _questions_channel(env)
    ts = _ask_channel(env, "sam@acme.io", QUESTION)
    assert env.slack.calls_to("reactions.add")  # it works visibly, without posting a placeholder

    [answer] = env.wait_answers(GENERAL, ts)

    assert "*Sources*" in format_message(answer)
    assert not _reactions(env, ts)  # the working reaction is gone once the answer is out
    assert _kinds(env, ts) == {SEEN, ANSWERED}
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    assert job.unsolicited and job.status == "done" and job.result["answer"]["answered"]


def test_statements_bots_replies_edits_joins_and_files_are_not_answered(make_env: EnvFactory) -> None:
    env = make_env()
    _questions_channel(env)
    statement = _ask_channel(env, "sam@acme.io", "The coffee machine on floor 3 is broken again.")
    env.slack.post_as_other_bot("B0OTHER", GENERAL, QUESTION)
    _ask_channel(env, "bob@acme.io", "how do I report that to facilities?", thread_ts=statement)
    env.slack.edit_as_user(env.ids["sam@acme.io"], GENERAL, statement, "where is the coffee machine manual?")
    sam = env.ids["sam@acme.io"]
    env.slack.deliver({"type": "message", "subtype": "channel_join", "user": sam, "channel": GENERAL,
                       "channel_type": "channel", "text": f"<@{sam}> has joined the channel",
                       "ts": env.slack.workspace.next_ts()})  # fmt: skip
    env.slack.deliver({"type": "message", "subtype": "file_share", "user": sam, "channel": GENERAL,
                       "channel_type": "channel", "text": "", "files": [{"id": "F1", "name": "log.txt"}],
                       "ts": env.slack.workspace.next_ts()})  # fmt: skip
    env.settle()

    assert env.bot.jobs.counts() == {}  # nothing was queued (listeners finish before the ack)
    assert not env.slack.bot_messages(GENERAL) and not env.slack.calls_to("reactions.add")


def test_channels_without_settings_still_need_a_mention(make_env: EnvFactory) -> None:
    env = make_env()
    _ask_channel(env, "sam@acme.io", QUESTION)

    assert env.bot.jobs.counts() == {}


def test_a_scoped_channel_never_cites_another_source(make_env: EnvFactory) -> None:
    """alice may open the travel policy (wiki/finance): asked elsewhere it is cited; in a channel scoped to
    the engineering wiki it is not, and nothing outside wiki/eng is."""
    env = make_env()
    env.slack.add_channel("C0ENG", "eng-questions", members=[*env.ids.values(), env.slack.bot_user_id])
    env.bot.channels.set("C0ENG", ChannelConfig(sources=("acme/wiki/eng",)), by=ADMIN)
    team = env.slack.workspace.team_id

    open_ts = env.mention("alice@acme.io", TRAVEL)
    env.wait_answers(GENERAL, open_ts)
    scoped_ts = env.mention("alice@acme.io", TRAVEL, channel="C0ENG")
    env.wait_answers("C0ENG", scoped_ts)

    [open_job] = env.bot.jobs.for_message(team, GENERAL, open_ts)
    [scoped_job] = env.bot.jobs.for_message(team, "C0ENG", scoped_ts)
    assert "acme:wiki/finance/travel-expense-policy" in {
        s["doc_id"] for s in open_job.result["answer"]["sources"]
    }
    shown = {s["doc_id"] for s in scoped_job.result["answer"]["sources"]}
    shown |= {r.get("doc_id") for r in scoped_job.result["answer"].get("related") or []}
    assert all(doc.startswith("acme:wiki/eng/") for doc in shown if doc), shown


def test_post_only_when_confident_stays_silent_unless_mentioned(make_env: EnvFactory) -> None:
    env = make_env()
    _questions_channel(env, post_only_when_confident=True)
    silent = _ask_channel(env, "dana@acme.io", UNANSWERABLE)
    if not env.bot.jobs.wait_idle(WAIT_S):
        raise TimeoutError("jobs still running")

    assert env.slack.bot_messages(GENERAL, silent) == [] and not _reactions(env, silent)
    assert _kinds(env, silent) == {SEEN, SILENT}

    asked = env.mention("dana@acme.io", UNANSWERABLE)
    [decline] = env.wait_answers(GENERAL, asked)
    assert "*Open gaps*" in format_message(decline)  # asked of Sleuth: the decline with what it found


def test_the_escalation_button_pings_the_group_once_with_a_summary(make_env: EnvFactory) -> None:
    env = make_env()
    _questions_channel(env, escalate_to=("S0HELPERS", "UHELPER01"))
    ts = _ask_channel(env, "sam@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)
    sam, bob = env.ids["sam@acme.io"], env.ids["bob@acme.io"]

    env.slack.click_button(sam, answer["ts"], GENERAL, ESCALATE_ACTION)
    env.slack.click_button(bob, answer["ts"], GENERAL, ESCALATE_ACTION)

    pings = [m for m in env.slack.bot_messages(GENERAL, ts) if "<!subteam^S0HELPERS>" in m.get("text", "")]
    assert len(pings) == 1
    text = pings[0]["text"]
    assert "<@UHELPER01>" in text and f"<@{sam}>" in text and QUESTION in text and "I found:" in text
    assert [m["text"] for m in env.slack.ephemeral_messages(bob, GENERAL)][-1].startswith("Someone already")
    assert ESCALATED in _kinds(env, ts)


def test_a_person_replying_first_cancels_sleuths_answer(make_env: EnvFactory) -> None:
    env = make_env(workers=0)
    _questions_channel(env)
    ts = _ask_channel(env, "sam@acme.io", QUESTION)
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    assert job.status == "pending"

    _ask_channel(env, "bob@acme.io", "Mondays at 10, see the on-call page", thread_ts=ts)
    env.bot.pool.start()
    if not env.bot.jobs.wait_idle(WAIT_S):
        raise TimeoutError("jobs still running")

    assert env.bot.jobs.get(job.id).status == "cancelled"
    assert env.slack.bot_messages(GENERAL, ts) == [] and not _reactions(env, ts)
    assert CANCELLED in _kinds(env, ts)
    _ask_channel(env, "sam@acme.io", "thanks! and who approved that?", thread_ts=ts)
    assert len(env.bot.jobs.of_thread(job.thread_id)) == 1  # no mention: Sleuth stays out of the thread


def test_not_helpful_remove_deletes_the_reply(make_env: EnvFactory) -> None:
    env = make_env()
    _questions_channel(env)
    ts = _ask_channel(env, "sam@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)
    sam, bob = env.ids["sam@acme.io"], env.ids["bob@acme.io"]

    env.slack.click_button(bob, answer["ts"], GENERAL, REMOVE_ACTION)
    assert len(env.slack.bot_messages(GENERAL, ts)) == 1  # not bob's question: refused
    env.slack.click_button(sam, answer["ts"], GENERAL, REMOVE_ACTION)

    assert env.slack.bot_messages(GENERAL, ts) == []
    assert REMOVED in _kinds(env, ts)


def test_an_admin_sets_a_channel_up_in_app_home(make_env: EnvFactory) -> None:
    env = make_env(admin_users=[])
    dana, bob = env.ids["dana@acme.io"], env.ids["bob@acme.io"]
    env.bot.settings.admin_users.append(dana)
    env.slack.open_app_home(dana)
    env.slack.click_home_button(dana, f"{SETUP_CHANNEL}:new")
    [modal] = env.slack.wait_for(lambda: env.slack.open_modals() or None, timeout=WAIT_S)

    bad = env.slack.submit_view(dana, modal, _setup_values(groups="eng-helpers"))
    assert bad.json()["response_action"] == "errors" and env.bot.channels.own(GENERAL) is None
    env.slack.submit_view(dana, modal, _setup_values(groups="S0HELPERS"))

    assert env.bot.channels.own(GENERAL) == ChannelConfig(
        answer="questions", sources=("acme/wiki/eng",), post_only_when_confident=True,
        escalate_to=(bob, "S0HELPERS"), reply="thread",
    )  # fmt: skip
    home = format_message(env.slack.home_view(dana) or {})
    assert "answer=questions" in home and f"Edit {GENERAL}" in home
    env.slack.open_app_home(bob)  # not an admin: the channel settings are not shown
    assert "Channels (admin)" not in format_message(env.slack.home_view(bob) or {})


def _setup_values(*, groups: str) -> dict[str, dict[str, Any]]:
    bob = "U0BOB"
    return {
        "channel": {"value": {"type": "conversations_select", "selected_conversation": GENERAL}},
        "answer": {"value": {"type": "static_select", "selected_option": {"value": "questions"}}},
        "sources": {"value": "acme/wiki/eng"},
        "confident": {"value": {"type": "checkboxes", "selected_options": [{"value": "yes"}]}},
        "people": {"value": {"type": "multi_users_select", "selected_users": [bob]}},
        "groups": {"value": groups},
        "reply": {"value": {"type": "radio_buttons", "selected_option": {"value": "thread"}}},
    }
