"""App Home: the Messages tab (agent view) gets suggested prompts; the Home tab gets Sleuth's home view.

Under `agent_view` opening the Messages tab replaces the legacy `assistant_thread_started` event, and the prompts
call takes no `thread_ts` (Slack documents that one makes it fail silently for agent apps).
"""

from __future__ import annotations

import functools
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.deps import BotDeps
from bot.listeners.views.admin_sources import admin_home, is_admin
from bot.listeners.views.builders import SUGGESTED_PROMPTS, SUGGESTED_TITLE, home_view
from bot.listeners.views.channel_setup import channel_section
from bot.listeners.views.insights_home import insights_section

HOME_BLOCKS = 100  # Slack's limit for a Home tab view


def handle_app_home_opened(
    event: dict[str, Any], body: dict[str, Any], client: WebClient, *, deps: BotDeps
) -> None:
    if event.get("tab") == "messages":
        client.assistant_threads_setSuggestedPrompts(
            channel_id=event["channel"], title=SUGGESTED_TITLE, prompts=SUGGESTED_PROMPTS
        )
        return
    linking, user = deps.linker is not None, event["user"]
    if is_admin(deps, user):
        view = admin_home(deps, linking=linking)
        view["blocks"] += channel_section(deps)
    else:
        view = home_view([entry.name for entry in deps.runtime.sources()], linking=linking)
    room = HOME_BLOCKS - len(view["blocks"])
    view["blocks"] += insights_section(deps, str(body.get("team_id") or ""), user, room=room)
    client.views_publish(user_id=user, view=view)


def register(app: App, deps: BotDeps) -> None:
    app.event("app_home_opened")(functools.partial(handle_app_home_opened, deps=deps))
