"""`sleuth demo`, Slack part: the real app and the local Slack emulator on 127.0.0.1, a scripted conversation
among the people of examples/acme, and the bot's replies printed as Slack would show them.

Script: alice asks a cross-document question; follows up in the thread without mentioning Sleuth; bob
(finance) and then carol (no groups) ask a question about a finance-only page, each in their own thread; dana
asks something the corpus does not answer.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from bot.audience import PRIVATE_NOTE
from bot.local_slack import GENERAL, add_people, local_bot
from bot.receipt import is_placeholder
from bot.runtime import Runtime
from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_render import format_message

REPLY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Line:
    email: str
    text: str
    follow_up: bool = False  # a reply in the previous thread, without mentioning Sleuth
    note: str = ""


SCRIPT = (
    Line(
        "alice@acme.io",
        "how does the iOS Crash Triage process differ from Android Crash Triage?",
        note="a comparison across two documents",
    ),
    Line("alice@acme.io", "what is on the iOS release checklist?", note="a simple lookup (fast path)"),
    Line(
        "alice@acme.io",
        "and for the Android app?",
        follow_up=True,
        note="a follow-up in the thread, no mention",
    ),
    Line(
        "carol@acme.io",
        "what is the meal per diem when travelling?",
        note="an outdated policy next to its replacement: both shown, with dates",
    ),
    Line(
        "bob@acme.io",
        "what is the unit price of a KM-40 rev C motor?",
        note="a finance-only answer, asked by finance",
    ),
    Line(
        "carol@acme.io",
        "what is the unit price of a KM-40 rev C motor?",
        note="the same, asked by someone without access",
    ),
    Line(
        "dana@acme.io",
        "is there parking at the Oakland office, and do we reimburse it?",
        note="not in the corpus",
    ),
)


def _private_answer(slack: SlackEmulator, user: str) -> dict | None:
    found = [m for m in slack.ephemeral_messages(user, GENERAL) if "Sources" in format_message(m)]
    return found[-1] if found else None


def _answered(slack: SlackEmulator, thread_ts: str, count: int) -> bool:
    replies = slack.bot_messages(GENERAL, thread_ts)
    return len(replies) >= count and all(m.get("blocks") and not is_placeholder(m["text"]) for m in replies)


def run_slack_demo(rt: Runtime, console: Console) -> None:
    """Runs the script and prints each question and Sleuth's reply; raises TimeoutError if a reply never comes."""
    people = rt.settings.examples_dir / "people.json"
    # a fresh team id per run: the emulator's ts and event ids repeat, and the job table remembers them
    with SlackEmulator(team_id=f"TDEMO{uuid.uuid4().hex[:6].upper()}") as slack, local_bot(rt, slack):
        ids = add_people(slack, people)
        names = {uid: email.split("@")[0] for email, uid in ids.items()}
        console.print(f"[dim]Slack emulator at {slack.base_url}; Sleuth's app is connected to it.[/]")
        thread_ts, replies = "", 0
        for line in SCRIPT:
            user = ids[line.email]
            if line.follow_up:
                slack.post_as_user(user, GENERAL, line.text, thread_ts=thread_ts)
            else:
                thread_ts, replies = (
                    slack.post_as_user(user, GENERAL, f"<@{slack.bot_user_id}> {line.text}"),
                    0,
                )
            replies += 1
            console.print(f"\n[bold]#general · {names[user]}[/] ({line.note}): {escape(line.text)}")
            slack.wait_for(lambda ts=thread_ts, n=replies: _answered(slack, ts, n), timeout=REPLY_TIMEOUT_S)
            reply = slack.bot_messages(GENERAL, thread_ts)[-1]
            console.print(Panel(escape(format_message(reply)), title="Sleuth", title_align="left"))
            if PRIVATE_NOTE in reply.get("text", "") or PRIVATE_NOTE in format_message(reply):
                private = slack.wait_for(lambda u=user: _private_answer(slack, u), timeout=REPLY_TIMEOUT_S)
                title = f"Sleuth (only visible to {names[user]})"
                console.print(Panel(escape(format_message(private)), title=title, title_align="left"))
