"""The "Connect <source>" link button opens the browser; Slack still sends the click, which needs an ack."""

from __future__ import annotations

from slack_bolt import Ack, App

from bot.deps import BotDeps

LINK_OPEN_ACTION = "sleuth_link_open"


def handle_link_open(ack: Ack) -> None:
    ack()


def register(app: App, deps: BotDeps) -> None:
    app.action(LINK_OPEN_ACTION)(handle_link_open)
