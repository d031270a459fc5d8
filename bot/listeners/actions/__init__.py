from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps
from bot.listeners.actions import admin_trace, escalate, feedback, link_open, remove_answer, show_trace


def register(app: App, deps: BotDeps) -> None:
    feedback.register(app, deps)
    show_trace.register(app, deps)
    link_open.register(app, deps)
    admin_trace.register(app, deps)
    escalate.register(app, deps)
    remove_answer.register(app, deps)
