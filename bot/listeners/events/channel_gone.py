"""A channel was deleted or archived, or the bot left a private channel: the Slack sources' permissions are
re-read now (its threads become nobody's at once) and, for a channel the bot can no longer read, their content
too (the threads are removed). An archived channel stays readable to its members, as in Slack."""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App

from bot.deps import BotDeps

UNREADABLE = {"channel_deleted", "group_deleted", "group_left"}  # the bot reads nothing there any more


def handle_channel_gone(event: dict[str, Any], *, deps: BotDeps) -> None:
    channel = event.get("channel")
    channel_id = channel.get("id") if isinstance(channel, dict) else channel  # `channel_deleted` sends the id
    if deps.source_events is None or not channel_id:
        return
    deps.source_events.members_changed(str(channel_id), bot_itself=event.get("type") in UNREADABLE)


def register(app: App, deps: BotDeps) -> None:
    listener = functools.partial(handle_channel_gone, deps=deps)
    app.event("channel_deleted")(listener)
    app.event("group_deleted")(listener)
    app.event("channel_archive")(listener)
    app.event("group_archive")(listener)
    app.event("group_left")(listener)
