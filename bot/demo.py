"""`make demo`: the embedded default end to end, offline. Indexes examples/acme, then plays a scripted thread
through the real Bolt app on a local Slack emulator (`bot.demo_slack`), printing replies as Slack shows them."""

from __future__ import annotations

from rich.console import Console

from bot.runtime import Runtime


def run_demo(rt: Runtime, console: Console) -> None:
    from bot.cli import run_sync
    from bot.demo_slack import run_slack_demo

    for entry in rt.sources():
        run_sync(rt, entry.name)
    run_slack_demo(rt, console)
