from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps
from bot.listeners.messages import deleted, edited, other, question


def register(app: App, deps: BotDeps) -> None:
    question.register(app, deps)
    edited.register(app, deps)
    deleted.register(app, deps)
    other.register(app, deps)  # last: Bolt runs the first listener that matches
