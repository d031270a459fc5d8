"""`make demo`: the embedded default end to end, offline. Indexes examples/acme, then plays a scripted thread.

When the Slack pieces are present the thread is played through the real Bolt app on a local Slack emulator
(`bot.demo_slack`); otherwise through the investigation directly, printed as the CLI prints answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.rule import Rule

from bot.runtime import Runtime
from bot.terminal import render_answer


@dataclass(frozen=True)
class DemoStep:
    user: str
    question: str
    thread: str
    why: str


SCRIPT = [
    DemoStep(
        "alice@acme.io",
        "Who is the person to chase at the supplier in OPS-31 about the shipment?",
        "demo:C1:1",
        "cross-document: OPS-31 names the supplier only as 'S-8'; the graph leads to its page",
    ),
    DemoStep(
        "alice@acme.io", "What is on the iOS release checklist?", "demo:C1:2", "a simple lookup (fast path)"
    ),
    DemoStep("alice@acme.io", "and for the Android app?", "demo:C1:2", "a follow-up in the same thread"),
    DemoStep(
        "carol@acme.io",
        "What is the meal per diem when travelling?",
        "demo:C1:3",
        "an outdated policy next to its replacement: both reported, with dates",
    ),
    DemoStep(
        "bob@acme.io",
        "What is the total operating budget for Q3 2026?",
        "demo:C1:4",
        "a restricted answer, asked by finance (bob)",
    ),
    DemoStep(
        "carol@acme.io",
        "What is the total operating budget for Q3 2026?",
        "demo:C1:5",
        "the same question by carol, who may not see finance pages: not found looks like not yours",
    ),
    DemoStep(
        "alice@acme.io",
        "Is there parking at the Oakland office, and do we reimburse it?",
        "demo:C1:6",
        "not in the corpus: what is known, plus the gaps, and no invention",
    ),
]


def run_demo(rt: Runtime, console: Console) -> None:
    from bot.cli import run_sync

    for entry in rt.sources():
        run_sync(rt, entry.name)
    try:
        from bot.demo_slack import run_slack_demo
    except ImportError:
        run_slack_demo = None
    if run_slack_demo is not None:
        run_slack_demo(rt, console)
        return
    for step in SCRIPT:
        console.print(Rule(f"{step.user}: {step.why}"))
        out = rt.investigator.ask(
            step.thread, step.question, asker=step.user, principals=rt.principals_for_email(step.user)
        )
        console.print(render_answer(out))
