"""What users tell Sleuth reaches the admins, on the Slack emulator over signed HTTP with the real Bolt app:
not-helpful clicks in `sleuth feedback` and the admin's App Home (never in another user's), recurring gaps,
the weekly digest DM (once, with two workers), and `/sleuth forget`. Every view is read with the reader's own
permissions: a document the admin cannot open is counted, never named."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from typer.testing import CliRunner

from bot.app import make_client
from bot.cli import app as cli_app
from bot.feedback import slack_feedback
from bot.listeners.commands import replies
from bot.local_slack import GENERAL
from bot.render import FEEDBACK_ACTION
from bot.render_insights import ADMIN_TRACE_ACTION
from bot.runtime import Runtime
from bot.scheduler import SyncScheduler
from bot.server import SlackBot
from bot.testing.slack_render import format_message
from graph_flows.gaplog import gap_entries
from tests.e2e.conftest import WAIT_S, EnvFactory, SlackEnv

FINANCE = "what is the unit price of a KM-40 rev C motor?"  # answered from finance-only pages
PARKING = [
    ("alice@acme.io", "Is there parking at the Oakland office?"),
    ("bob@acme.io", "Where do I park at the Oakland office?"),
    ("carol@acme.io", "Oakland office parking?"),
    ("alice@acme.io", "Can I park my car at the Oakland office?"),
    ("bob@acme.io", "Is parking free at the Oakland office?"),
    ("carol@acme.io", "Where is parking for the Oakland office?"),
    ("alice@acme.io", "Does the Oakland office have parking?"),
    ("bob@acme.io", "Who do I ask about parking at the Oakland office?"),
    ("carol@acme.io", "Is there a parking garage at the Oakland office?"),
    ("alice@acme.io", "How does parking work at the Oakland office?"),
]
DANA = "U0DANA"  # the admin: ops and leadership, not finance


def _ask_and_judge(env: SlackEnv, email: str, question: str, verdict: str = "bad") -> tuple[str, Any]:
    """Asks in #general, waits for the answer, clicks a verdict on it; returns the question's ts and its job."""
    ts = env.mention(email, question)
    [answer] = env.wait_answers(GENERAL, ts)
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    user = env.ids[email]
    rated = [m for m in [answer, *env.slack.ephemeral_messages(user, GENERAL)] if _has_feedback(m)]
    value = f"{verdict}:{job.trace_id}"  # a restricted answer goes to the asker privately: rate that one
    response = env.slack.click_button(user, rated[-1]["ts"], GENERAL, FEEDBACK_ACTION, value=value)
    assert response.status_code == 200
    return ts, job


def _has_feedback(message: dict[str, Any]) -> bool:
    return FEEDBACK_ACTION in json.dumps(message.get("blocks") or [])


def _hidden_titles(env: SlackEnv, job: Any, email: str) -> list[str]:
    """Titles the answer cited that `email` may not open."""
    rt = env.bot.runtime
    principals = rt.principals_for_email(email)
    return [
        s["title"]
        for s in job.result["answer"]["sources"]
        if rt.store.document(s["doc_id"], principals) is None
    ]


def _cli(env: SlackEnv, *args: str) -> str:
    settings = env.bot.runtime.settings
    environ = {
        "SLEUTH_DATA_DIR": str(settings.data_dir),
        "SLEUTH_EMBEDDER__KIND": "hash",
        "SLEUTH_DEFAULT_ASKER": None,
    }
    result = CliRunner().invoke(cli_app, list(args), env=environ)
    assert result.exit_code == 0, result.output
    return result.output


def _home(env: SlackEnv, email: str) -> str:
    user = env.ids[email]
    env.slack.open_app_home(user)
    view = env.slack.home_view(user)
    assert view is not None
    return format_message(view)


def test_a_not_helpful_click_reaches_sleuth_feedback_and_the_admins_home_not_a_non_admins(
    make_env: EnvFactory,
) -> None:
    env = make_env(admin_users=[DANA])
    ts, job = _ask_and_judge(env, "bob@acme.io", FINANCE)
    secret = _hidden_titles(env, job, "dana@acme.io")
    assert secret, "the answer should cite a finance page the admin cannot open"

    out = json.loads(_cli(env, "feedback", "--since", "7d", "--json", "--as", "dana@acme.io"))
    [item] = out["not_helpful"]
    assert (item["trace_id"], item["question"], item["asker"]) == (
        job.trace_id,
        FINANCE,
        env.ids["bob@acme.io"],
    )
    assert item["cited"]["hidden"] == len(secret) and not any(t in json.dumps(out) for t in secret)
    assert out["helpful_rate"]["weeks"][0]["not_helpful"] == 1
    assert "you cannot open" in _cli(env, "feedback", "--as", "dana@acme.io")

    admin_home = _home(env, "dana@acme.io")
    assert "Feedback and gaps (admin)" in admin_home and FINANCE in admin_home
    assert "you cannot open" in admin_home and not any(t in admin_home for t in secret)
    carol_home = _home(env, "carol@acme.io")
    assert FINANCE not in carol_home and "Feedback and gaps (admin)" not in carol_home
    assert FINANCE in _home(env, "bob@acme.io")  # his own click, his own question

    env.slack.click_home_button(env.ids["dana@acme.io"], ADMIN_TRACE_ACTION, value=job.trace_id)
    [modal] = env.slack.wait_for(lambda: env.slack.open_modals() or None, timeout=WAIT_S)
    shown = format_message(modal)
    assert "Round 1" in shown and not any(t in shown for t in secret)

    env.slack.delete_as_user(env.ids["bob@acme.io"], GENERAL, ts)  # the answer is withdrawn...
    env.slack.wait_for(lambda: "deleted" in json.dumps(env.slack.bot_messages(GENERAL, ts)), timeout=WAIT_S)
    again = json.loads(_cli(env, "feedback", "--json", "--as", "dana@acme.io"))
    assert [i["trace_id"] for i in again["not_helpful"]] == [
        job.trace_id
    ]  # ...its feedback stays on the trace


def test_ten_similar_unanswerable_questions_from_three_users_are_one_recurring_gap(
    make_env: EnvFactory,
) -> None:
    env = make_env(admin_users=[DANA])
    threads = [env.mention(email, question) for email, question in PARKING]
    for ts in threads:
        env.wait_answers(GENERAL, ts)

    [group] = env.bot.runtime.gap_log.summary()
    assert (group.count, len(group.askers)) == (10, 3)
    env.slack.slash_command(DANA, GENERAL, "/sleuth", "gaps")
    reply = env.slack.ephemeral_messages(DANA, GENERAL)[-1]["text"]
    assert "10 questions in 2 weeks (from 3 people) asked about" in reply
    assert "Oakland Office Guide (acme)" in reply and "nothing answers them" in reply
    cli = _cli(env, "gaps", "--as", "dana@acme.io")
    assert "10 questions in 30 days" in cli and "Oakland Office Guide" in cli
    notes = env.bot.runtime.settings.data_dir / "notes"
    _cli(env, "gaps", "--export", str(notes), "--as", "dana@acme.io")
    lines = [
        line for note in notes.glob("gaps-*.md") for line in note.read_text(encoding="utf-8").splitlines()
    ]
    assert sum(line.startswith("- ") for line in lines) == 10  # one dated note per day (two if past midnight)

    carol = env.ids["carol@acme.io"]  # a non-admin sees only her own three, and nobody's name
    env.slack.slash_command(carol, GENERAL, "/sleuth", "gaps")
    own = env.slack.ephemeral_messages(carol, GENERAL)[-1]["text"]
    assert "3 questions in 2 weeks asked about" in own and "people" not in own


def test_the_weekly_digest_reaches_the_admin_once_with_two_workers(make_env: EnvFactory) -> None:
    env = make_env(admin_users=[DANA], digest={"enabled": True, "weekday": 0, "hour": 0})
    _, job = _ask_and_judge(env, "bob@acme.io", FINANCE)
    secret = _hidden_titles(env, job, "dana@acme.io")
    env.mention("carol@acme.io", PARKING[0][1])
    env.bot.jobs.wait_idle(WAIT_S)
    second = Runtime(env.bot.runtime.settings)  # another `sleuth serve` on the same database
    other = SlackBot(second, client=make_client(env.bot.settings), settings=env.bot.settings, workers=1)
    now = datetime.now(UTC)
    schedulers = [
        SyncScheduler(bot.runtime.sync_service, clock=lambda: now, also=[bot.digest.run_due])
        for bot in (env.bot, other)
    ]
    start = threading.Barrier(2)

    def tick(scheduler: SyncScheduler) -> None:
        start.wait()
        scheduler.run_once()

    workers = [threading.Thread(target=tick, args=(s,)) for s in schedulers]
    for w in workers:
        w.start()
    for w in workers:
        w.join(WAIT_S)
    for s in schedulers:  # a later tick in the same week sends nothing more
        s.run_once()

    dm = env.slack.open_dm(DANA)
    [digest] = env.slack.bot_messages(dm)
    text = format_message(digest)
    assert "Sleuth this past a week" in text and FINANCE in text and "Oakland office" in text
    assert "you cannot open" in text and not any(t in json.dumps(digest) for t in secret)
    traces = [
        b["accessory"]["value"]
        for b in digest["blocks"]
        if b.get("accessory", {}).get("action_id") == ADMIN_TRACE_ACTION
    ]
    assert job.trace_id in traces and len(traces) >= 2  # the not-helpful answer and the recurring gap
    env.slack.click_button(DANA, digest["ts"], dm, ADMIN_TRACE_ACTION, value=job.trace_id)
    [modal] = env.slack.wait_for(lambda: env.slack.open_modals() or None, timeout=WAIT_S)
    assert "Round 1" in format_message(modal) and not any(t in json.dumps(modal) for t in secret)
    second.engine.dispose()


def test_forget_removes_the_users_gap_entries_and_feedback_rows(make_env: EnvFactory) -> None:
    env = make_env()
    alice, bob = env.ids["alice@acme.io"], env.ids["bob@acme.io"]
    _ask_and_judge(env, "alice@acme.io", PARKING[0][1])
    _ask_and_judge(env, "bob@acme.io", PARKING[1][1])
    engine = env.bot.runtime.engine

    def rows() -> dict[str, int]:
        with engine.connect() as conn:
            gaps, clicks = (select(func.count()).select_from(t) for t in (gap_entries, slack_feedback))
            return {
                "alice_gaps": conn.execute(gaps.where(gap_entries.c.asker == "alice@acme.io")).scalar_one(),
                "bob_gaps": conn.execute(gaps.where(gap_entries.c.asker == "bob@acme.io")).scalar_one(),
                "alice_feedback": conn.execute(clicks.where(slack_feedback.c.user == alice)).scalar_one(),
                "bob_feedback": conn.execute(clicks.where(slack_feedback.c.user == bob)).scalar_one(),
            }

    before = rows()
    assert before["alice_gaps"] >= 1 and before["alice_feedback"] == 1

    env.slack.slash_command(alice, GENERAL, "/sleuth", "forget")

    assert env.slack.ephemeral_messages(alice, GENERAL)[-1]["text"] == replies.forgotten_text(
        before["alice_gaps"], 1, 1
    )
    assert rows() == {**before, "alice_gaps": 0, "alice_feedback": 0}


def test_feedback_on_an_answer_whose_question_was_edited_stays_on_that_answers_trace(
    make_env: EnvFactory,
) -> None:
    env = make_env(admin_users=[DANA])
    alice = env.ids["alice@acme.io"]
    ts, job = _ask_and_judge(env, "alice@acme.io", PARKING[0][1])

    env.slack.edit_as_user(alice, GENERAL, ts, f"<@{env.slack.bot_user_id}> {PARKING[3][1]}")
    env.wait_answers(GENERAL, ts, count=2)

    out = json.loads(_cli(env, "feedback", "--json", "--as", "dana@acme.io"))
    [item] = out["not_helpful"]
    assert (item["trace_id"], item["question"], item["edited"]) == (job.trace_id, PARKING[0][1], True)
    _home(env, "dana@acme.io")
    env.slack.click_home_button(DANA, ADMIN_TRACE_ACTION, value=job.trace_id)
    [modal] = env.slack.wait_for(lambda: env.slack.open_modals() or None, timeout=WAIT_S)
    assert PARKING[0][1] in format_message(modal)  # the trace of the answer that was judged, not of the edit
