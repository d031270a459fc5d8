"""View handlers: the admin "Add source" and "Channel setup" modals (App Home builders live in builders.py)."""

from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps
from bot.listeners.views import admin_sources, channel_setup


def register(app: App, deps: BotDeps) -> None:
    admin_sources.register(app, deps)
    channel_setup.register(app, deps)
