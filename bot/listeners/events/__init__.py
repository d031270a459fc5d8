from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps
from bot.listeners.events import app_home_opened, app_mention, channel_gone, channel_members


def register(app: App, deps: BotDeps) -> None:
    app_mention.register(app, deps)
    app_home_opened.register(app, deps)
    channel_members.register(app, deps)
    channel_gone.register(app, deps)
