"""Slack listeners, one handler per module, grouped by kind; `register` wires them all into a Bolt app."""

from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps
from bot.listeners import actions, commands, events, messages, views


def register(app: App, deps: BotDeps) -> None:
    events.register(app, deps)
    messages.register(app, deps)
    commands.register(app, deps)
    actions.register(app, deps)
    views.register(app, deps)
