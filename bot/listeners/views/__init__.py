"""View builders (App Home, prompts). Sleuth has no modal submissions yet, so there is nothing to register."""

from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps


def register(app: App, deps: BotDeps) -> None:
    """Nothing to register yet; kept so `listeners.register` treats every kind alike."""
