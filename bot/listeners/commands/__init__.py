from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps
from bot.listeners.commands import sleuth


def register(app: App, deps: BotDeps) -> None:
    sleuth.register(app, deps)
