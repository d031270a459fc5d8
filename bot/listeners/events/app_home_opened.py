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


def handle_app_home_opened(event: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    if event.get("tab") == "messages":
        client.assistant_threads_setSuggestedPrompts(
            channel_id=event["channel"], title=SUGGESTED_TITLE, prompts=SUGGESTED_PROMPTS
        )
        return
    linking = deps.linker is not None
    if is_admin(deps, event["user"]):
        client.views_publish(user_id=event["user"], view=admin_home(deps, linking=linking))
        return
    sources = [entry.name for entry in deps.runtime.sources()]
    client.views_publish(user_id=event["user"], view=home_view(sources, linking=linking))


def register(app: App, deps: BotDeps) -> None:
    app.event("app_home_opened")(functools.partial(handle_app_home_opened, deps=deps))
