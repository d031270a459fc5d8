"""App Home for admins: the channels' settings (`bot.channels`), one modal per channel.

The home lists each configured channel with an "Edit" button and offers "Set up a channel": the modal picks the
channel (or the default for channels without their own), then the fields. Non-admins are refused, as for
sources.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any

from pydantic import ValidationError
from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.channel_activity import weekly_lines
from bot.channels import DEFAULT_CHANNEL, ChannelConfig
from bot.deps import BotDeps
from bot.listeners.views.admin_sources import NOT_ADMIN, admin_home, is_admin

log = logging.getLogger(__name__)

SETUP_CHANNEL = "admin_channel_setup"  # action_id prefix of "Set up a channel" and each "Edit <channel>"
SETUP_VIEW = "admin_channel_setup_view"  # callback_id of the modal
CHANNEL, ANSWER, SOURCES, CONFIDENT, PEOPLE, GROUPS, REPLY = (
    "channel", "answer", "sources", "confident", "people", "groups", "reply",
)  # fmt: skip
MAX_EDIT_BUTTONS = 20
WEEKS_SHOWN = 8


def _text(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text[:150]}


def _option(value: str, label: str) -> dict[str, Any]:
    return {"text": _text(label), "value": value}


def _channel_name(channel: str) -> str:
    return "the default (channels without their own)" if channel == DEFAULT_CHANNEL else f"<#{channel}>"


def channel_section(deps: BotDeps) -> list[dict[str, Any]]:
    """The admin home's channel settings: one line and one Edit button per configured channel, and the
    questions each saw, answered, removed and escalated by week."""
    found = deps.channels.all() if deps.channels is not None else {}
    lines = [f"• {_channel_name(c)}: `{config.summary()}`" for c, config in found.items()]
    text = "*Channels (admin)*\n" + ("\n".join(lines) or "None set up: every channel answers when mentioned.")
    counts = weekly_lines(deps.activity.weekly())[:WEEKS_SHOWN] if deps.activity is not None else []
    if counts:
        text += "\n*Questions by week*\n" + "\n".join(counts)
    buttons = [{"type": "button", "action_id": f"{SETUP_CHANNEL}:new", "value": "",
                "text": _text("Set up a channel")}]  # fmt: skip
    buttons += [
        {"type": "button", "action_id": f"{SETUP_CHANNEL}:{c}", "value": c,
         "text": _text("Edit default" if c == DEFAULT_CHANNEL else f"Edit {c}")}
        for c in list(found)[:MAX_EDIT_BUTTONS]
    ]  # fmt: skip
    return [
        {"type": "divider"},
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}},
        {"type": "actions", "block_id": "admin_channels", "elements": buttons[:25]},
    ]


def _input(block_id: str, label: str, element: dict[str, Any], *, optional: bool = True) -> dict[str, Any]:
    return {"type": "input", "block_id": block_id, "optional": optional, "label": _text(label),
            "element": {"action_id": "value", **element}}  # fmt: skip


def channel_modal(channel: str | None, config: ChannelConfig) -> dict[str, Any]:
    """The settings of one channel (`channel` None: pick it first, or leave it empty for the default)."""
    answers = [_option("mention", "When mentioned"), _option("questions", "Questions, without a mention"),
               _option("off", "Off")]  # fmt: skip
    replies = [_option("thread", "In the thread"), _option("ephemeral", "Only to the asker")]
    confident = _option("yes", "Post only answers, not declines, to questions asked of the channel")
    people = [r for r in config.escalate_to if not r.startswith("S")]
    groups = [r for r in config.escalate_to if r.startswith("S")]
    blocks: list[dict[str, Any]] = []
    if channel is None:
        blocks.append(_input(CHANNEL, "Channel (empty: the default)", {"type": "conversations_select"}))
    blocks += [
        _input(ANSWER, "Answer", {"type": "static_select", "options": answers,
               "initial_option": next(o for o in answers if o["value"] == config.answer)}, optional=False),
        _input(SOURCES, "Sources (comma-separated; empty: all)", {"type": "plain_text_input",
               **({"initial_value": ", ".join(config.sources)} if config.sources else {})}),
        _input(CONFIDENT, "Confidence", {"type": "checkboxes", "options": [confident],
               **({"initial_options": [confident]} if config.post_only_when_confident else {})}),
        _input(PEOPLE, "Get help from these people", {"type": "multi_users_select",
               **({"initial_users": people} if people else {})}),
        _input(GROUPS, "…and these user group ids (S...)", {"type": "plain_text_input",
               **({"initial_value": ", ".join(groups)} if groups else {})}),
        _input(REPLY, "Reply", {"type": "radio_buttons", "options": replies,
               "initial_option": next(o for o in replies if o["value"] == config.reply)}, optional=False),
    ]  # fmt: skip
    title = "Default channel setup" if channel == DEFAULT_CHANNEL else "Channel setup"
    return {"type": "modal", "callback_id": SETUP_VIEW, "private_metadata": json.dumps({"channel": channel}),
            "title": _text(title[:24]), "submit": _text("Save"), "blocks": blocks}  # fmt: skip


def _value(values: dict[str, Any], block: str) -> dict[str, Any]:
    return (values.get(block) or {}).get("value") or {}


def config_from_state(values: dict[str, Any]) -> dict[str, Any]:
    """The submitted fields as ChannelConfig's input."""
    sources = str(_value(values, SOURCES).get("value") or "")
    groups = str(_value(values, GROUPS).get("value") or "")
    people = list(_value(values, PEOPLE).get("selected_users") or [])
    return {
        "answer": (_value(values, ANSWER).get("selected_option") or {}).get("value") or "mention",
        "sources": [s for s in re.split(r"[,\s]+", sources) if s],
        "post_only_when_confident": bool(_value(values, CONFIDENT).get("selected_options")),
        "escalate_to": [*people, *(g for g in re.split(r"[,\s]+", groups) if g)],
        "reply": (_value(values, REPLY).get("selected_option") or {}).get("value") or "thread",
    }


def handle_setup(ack: Ack, body: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    ack()
    user = body["user"]["id"]
    if not is_admin(deps, user) or deps.channels is None:
        dm = client.conversations_open(users=user)["channel"]["id"]
        client.chat_postMessage(channel=dm, text=NOT_ADMIN)
        return
    channel = str(body["actions"][0].get("value") or "") or None
    config = (deps.channels.own(channel) if channel else None) or ChannelConfig()
    client.views_open(trigger_id=body["trigger_id"], view=channel_modal(channel, config))


def handle_setup_submit(ack: Ack, body: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    user, view = body["user"]["id"], body["view"]
    if not is_admin(deps, user) or deps.channels is None:
        ack(response_action="errors", errors={ANSWER: NOT_ADMIN})
        return
    values = view["state"]["values"]
    channel = json.loads(view.get("private_metadata") or "{}").get("channel")
    channel = channel or _value(values, CHANNEL).get("selected_conversation") or DEFAULT_CHANNEL
    try:
        config = ChannelConfig.model_validate(config_from_state(values))
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0]) if exc.errors()[0].get("loc") else ANSWER
        block = {"escalate_to": GROUPS, "sources": SOURCES}.get(field, ANSWER)
        ack(response_action="errors", errors={block: exc.errors()[0]["msg"][:150]})
        return
    ack()
    deps.channels.set(channel, config, by=user)
    log.info("channel settings saved from slack", extra={"channel": channel, "answer": config.answer})
    view_home = admin_home(deps, linking=deps.linker is not None)
    view_home["blocks"] += channel_section(deps)
    client.views_publish(user_id=user, view=view_home)


def register(app: App, deps: BotDeps) -> None:
    app.action(re.compile(rf"^{SETUP_CHANNEL}:"))(functools.partial(handle_setup, deps=deps))
    app.view(SETUP_VIEW)(functools.partial(handle_setup_submit, deps=deps))
