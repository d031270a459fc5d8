"""What Slack sends to an app: signed requests, event envelopes, message events and interactive payloads.

Shapes follow ../shared/specs/slack/slack_common_event_wrapper_schema.json and Slack's Events API and
interactivity docs, so the real Bolt app parses them exactly as it parses Slack's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import uuid
from typing import Any

from bot.testing.slack_workspace import SlackWorkspace

_MENTION = re.compile(r"<@([A-Z0-9]+)>")
VERIFICATION_TOKEN = "emulator-verification-token"


def sign(signing_secret: str, body: bytes, timestamp: int) -> dict[str, str]:
    """Slack's v0 request signature headers for `body`."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    digest = hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Signature": f"v0={digest}", "X-Slack-Request-Timestamp": str(timestamp)}


def rich_text_blocks(text: str) -> list[dict[str, Any]]:
    """The rich_text block Slack attaches to a typed message, with mentions as user elements."""
    elements: list[dict[str, Any]] = []
    position = 0
    for match in _MENTION.finditer(text):
        if match.start() > position:
            elements.append({"type": "text", "text": text[position : match.start()]})
        elements.append({"type": "user", "user_id": match.group(1)})
        position = match.end()
    if position < len(text):
        elements.append({"type": "text", "text": text[position:]})
    return [
        {
            "type": "rich_text",
            "block_id": uuid.uuid4().hex[:5],
            "elements": [{"type": "rich_text_section", "elements": elements}],
        }
    ]


def mentions(text: str) -> list[str]:
    return _MENTION.findall(text)


def event_envelope(
    ws: SlackWorkspace, event: dict[str, Any], *, event_id: str, event_time: int
) -> dict[str, Any]:
    """The `event_callback` wrapper around one event, addressed to the installed bot."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": ws.team_id,
        "context_team_id": ws.team_id,
        "context_enterprise_id": None,
        "api_app_id": ws.app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": event_time,
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": ws.team_id,
                "user_id": ws.bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-{event_id}",
    }


def user_message(
    ws: SlackWorkspace, user_id: str, text: str, ts: str, thread_ts: str | None
) -> dict[str, Any]:
    """A stored message typed by a person, as conversations.history returns it."""
    message: dict[str, Any] = {
        "type": "message",
        "user": user_id,
        "text": text,
        "ts": ts,
        "team": ws.team_id,
        "client_msg_id": str(uuid.uuid4()),
        "blocks": rich_text_blocks(text),
    }
    if thread_ts:
        message["thread_ts"] = thread_ts
    return message


def message_event(message: dict[str, Any], channel_id: str, channel_type: str) -> dict[str, Any]:
    """The `message` event for a stored message (message.channels / message.im subscriptions)."""
    event = {key: value for key, value in message.items() if key not in ("reply_count", "reply_users")}
    event.update({"channel": channel_id, "event_ts": message["ts"], "channel_type": channel_type})
    return event


def app_mention_event(message: dict[str, Any], channel_id: str) -> dict[str, Any]:
    event = {
        key: message[key]
        for key in ("user", "text", "ts", "team", "client_msg_id", "blocks", "thread_ts", "parent_user_id")
        if key in message
    }
    return {"type": "app_mention", **event, "channel": channel_id, "event_ts": message["ts"]}


def user_ref(ws: SlackWorkspace, user_id: str) -> dict[str, Any]:
    user = ws.users[user_id]
    return {"id": user.id, "username": user.name, "name": user.name, "team_id": ws.team_id}


def team_ref(ws: SlackWorkspace) -> dict[str, Any]:
    return {"id": ws.team_id, "domain": ws.domain}


def block_actions_payload(
    ws: SlackWorkspace,
    *,
    user_id: str,
    channel_id: str,
    message: dict[str, Any],
    is_ephemeral: bool,
    action: dict[str, Any],
    trigger_id: str,
    response_url: str,
) -> dict[str, Any]:
    channel = ws.channels[channel_id]
    return {
        "type": "block_actions",
        "user": user_ref(ws, user_id),
        "api_app_id": ws.app_id,
        "token": VERIFICATION_TOKEN,
        "container": {
            "type": "message",
            "message_ts": message["ts"],
            "channel_id": channel_id,
            "is_ephemeral": is_ephemeral,
            **({"thread_ts": message["thread_ts"]} if message.get("thread_ts") else {}),
        },
        "trigger_id": trigger_id,
        "team": team_ref(ws),
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": channel.name if not channel.is_im else "directmessage"},
        "message": message,
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [action],
    }


def view_submission_payload(
    ws: SlackWorkspace, *, user_id: str, view: dict[str, Any], trigger_id: str
) -> dict[str, Any]:
    return {
        "type": "view_submission",
        "team": team_ref(ws),
        "user": user_ref(ws, user_id),
        "api_app_id": ws.app_id,
        "token": VERIFICATION_TOKEN,
        "trigger_id": trigger_id,
        "view": view,
        "response_urls": [],
        "enterprise": None,
        "is_enterprise_install": False,
    }


def slash_command_form(
    ws: SlackWorkspace,
    *,
    user_id: str,
    channel_id: str,
    command: str,
    text: str,
    trigger_id: str,
    response_url: str,
) -> dict[str, str]:
    channel = ws.channels[channel_id]
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": ws.team_id,
        "team_domain": ws.domain,
        "channel_id": channel_id,
        "channel_name": "directmessage" if channel.is_im else channel.name,
        "user_id": user_id,
        "user_name": ws.users[user_id].name,
        "command": command,
        "text": text,
        "api_app_id": ws.app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }
