"""Slack connector: threads of picked public channels and of the private channels the bot is in."""

from __future__ import annotations

from connectors.sources.slack.config import SlackSourceConfig
from connectors.sources.slack.connector import SlackConnector

__all__ = ["SlackConnector", "SlackSourceConfig"]
