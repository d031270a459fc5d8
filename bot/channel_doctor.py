"""`sleuth doctor --slack`, for channel setup: every channel set to answer questions without a mention must
have Sleuth as a member, or Slack never sends it the channel's messages (`bot.channels`)."""

from __future__ import annotations

from collections.abc import Iterable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.channels import DEFAULT_CHANNEL
from bot.settings import Settings
from bot.slack_doctor import HTTP_TIMEOUT_S, Check


def check_question_channels(settings: Settings, channels: Iterable[str]) -> list[Check]:
    """One check per channel set to `questions`: ok when the bot is a member, else how to invite it."""
    wanted = [c for c in channels if c != DEFAULT_CHANNEL]
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
    if not wanted or not token:
        return []
    client = WebClient(token=token, base_url=settings.slack_api_url, timeout=int(HTTP_TIMEOUT_S))
    return [_membership(client, channel) for channel in wanted]


def _membership(client: WebClient, channel: str) -> Check:
    name = f"channel {channel}"
    try:
        info = client.conversations_info(channel=channel)["channel"]
    except SlackApiError as exc:
        error = exc.response.get("error")
        return Check(name, "fail", f"set to answer questions, but Slack says {error}",
                     f"check the id, or `sleuth channels unset {channel}`")  # fmt: skip
    label = f"#{info.get('name') or channel}"
    if info.get("is_member"):
        return Check(name, "ok", f"{label} answers questions; Sleuth is a member")
    return Check(name, "fail", f"{label} is set to answer questions, but Sleuth is not a member of it",
                 f"in {label}, type `/invite @Sleuth`")  # fmt: skip
