"""The (legacy) assistant panel: a new assistant thread gets suggested prompts; context changes need nothing."""

from __future__ import annotations

from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.deps import BotDeps
from bot.listeners.views.builders import SUGGESTED_PROMPTS, SUGGESTED_TITLE


def handle_assistant_thread_started(event: dict[str, Any], client: WebClient) -> None:
    thread = event.get("assistant_thread") or {}
    client.assistant_threads_setSuggestedPrompts(
        channel_id=thread["channel_id"],
        thread_ts=thread["thread_ts"],
        title=SUGGESTED_TITLE,
        prompts=SUGGESTED_PROMPTS,
    )


def handle_assistant_thread_context_changed() -> None:
    """Sleuth does not use the channel the user is looking at; acknowledged so Slack does not retry."""


def register(app: App, deps: BotDeps) -> None:
    app.event("assistant_thread_started")(handle_assistant_thread_started)
    app.event("assistant_thread_context_changed")(handle_assistant_thread_context_changed)
