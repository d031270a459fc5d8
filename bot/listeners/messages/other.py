"""Every other message event (joins, topic changes, replies broadcast by Slack...): acknowledged, not answered.

Without a listener Bolt answers 404, and Slack would retry the delivery.
"""

from __future__ import annotations

from slack_bolt import App

from bot.deps import BotDeps


def handle_other_message() -> None:
    """Nothing to do."""


def register(app: App, deps: BotDeps) -> None:
    app.event("message")(handle_other_message)
