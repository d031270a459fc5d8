"""Someone joined or left a channel: the Slack sources' permissions are re-read now (bot.source_events), so a
person who left a private channel stops getting its threads without waiting for the scheduled permission sync.
When the bot itself was added or removed, the sources' content follows too."""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App, BoltContext

from bot.deps import BotDeps


def handle_member_changed(event: dict[str, Any], context: BoltContext, *, deps: BotDeps) -> None:
    if deps.source_events is None or not event.get("channel"):
        return
    bot_itself = bool(context.bot_user_id) and event.get("user") == context.bot_user_id
    deps.source_events.members_changed(str(event["channel"]), bot_itself=bot_itself)


def register(app: App, deps: BotDeps) -> None:
    listener = functools.partial(handle_member_changed, deps=deps)
    app.event("member_joined_channel")(listener)
    app.event("member_left_channel")(listener)
