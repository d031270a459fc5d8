"""The person's side of Slack interactivity: button clicks, modal submissions, slash commands, response_url.

A mixin of `SlackEmulator` (split out to keep each module readable); it relies on the emulator's workspace,
its condition, its Web API and its signed `_post_form`.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from typing import Any

import httpx

from bot.testing import slack_payloads as payloads
from bot.testing.slack_http import Reply
from bot.testing.slack_web_api import SlackWebApi
from bot.testing.slack_workspace import SlackWorkspace


class InteractivityMixin:
    """Triggers, response URLs and interactive payloads; each trigger_id opens one view, as on Slack."""

    workspace: SlackWorkspace
    api: SlackWebApi
    responses: list[dict[str, Any]]
    _changed: threading.Condition
    _triggers: dict[str, bool]
    _response_urls: dict[str, dict[str, Any]]

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    def _post_form(self, kind: str, payload: dict[str, Any], form: dict[str, str]) -> httpx.Response:
        raise NotImplementedError

    def _issue_trigger(self) -> str:
        with self._changed:
            trigger_id = f"{time.time_ns() // 1000}.{self.workspace.next_id('', 6)}.emulator"
            self._triggers[trigger_id] = False
            return trigger_id

    def issue_trigger(self) -> str:
        """A fresh trigger id, as Slack puts in an interactive payload (for payloads a test builds itself)."""
        return self._issue_trigger()

    def issue_response_url(self, user_id: str, channel: str) -> str:
        """A fresh `response_url` for a private reply to `user_id` in `channel` (for payloads a test builds)."""
        return self._issue_response_url(user=user_id, channel=channel, message_ts=None, ephemeral=True)

    def _use_trigger(self, trigger_id: str) -> str | None:
        """None when the trigger may open a view; Slack's error code otherwise (each works once)."""
        if trigger_id not in self._triggers:
            return "invalid_arguments"
        if self._triggers[trigger_id]:
            return "exchanged_trigger_id"
        self._triggers[trigger_id] = True
        return None

    def _issue_response_url(self, **context: Any) -> str:
        with self._changed:
            url_id = self.workspace.next_id("R", 10)
            self._response_urls[url_id] = context
            return f"{self.base_url}/response/{url_id}"

    def _find_clickable(self, user_id: str, channel: str, message_ts: str) -> tuple[dict[str, Any], bool]:
        found = self.workspace.channels.get(channel)
        message = found.find(message_ts) if found else None
        if message is not None:
            return message, False
        for ephemeral in self.workspace.ephemeral:
            if (
                ephemeral["ts"] == message_ts
                and ephemeral["recipient"] == user_id
                and ephemeral["channel"] == channel
            ):
                return ephemeral, True
        raise LookupError(f"no message {message_ts} in {channel} visible to {user_id}")

    def click_button(
        self,
        user_id: str,
        message_ts: str,
        channel: str,
        action_id: str,
        value: str | None = None,
        block_id: str | None = None,
    ) -> httpx.Response:
        """Click a button (or a feedback button) the bot rendered; POSTs the `block_actions` payload."""
        with self._changed:
            message, is_ephemeral = self._find_clickable(user_id, channel, message_ts)
            block, element = _find_element(message, action_id, block_id)
            action: dict[str, Any] = {
                "action_id": action_id,
                "block_id": block.get("block_id", block_id or ""),
                "type": element.get("type", "button"),
                "action_ts": f"{time.time():.6f}",
            }
            if element.get("type") == "feedback_buttons":
                chosen = value if value is not None else element["positive_button"]["value"]
                action["value"] = chosen
                self.workspace.feedback.append(
                    {"user": user_id, "channel": channel, "message_ts": message_ts, "value": chosen}
                )
            else:
                action["value"] = value if value is not None else element.get("value", "")
                if "text" in element:
                    action["text"] = element["text"]
            public = {k: v for k, v in message.items() if k not in ("recipient", "channel")}
            context = {
                "user": user_id,
                "channel": channel,
                "message_ts": message_ts,
                "ephemeral": is_ephemeral,
            }
        payload = payloads.block_actions_payload(
            self.workspace,
            user_id=user_id,
            channel_id=channel,
            message=copy.deepcopy(public),
            is_ephemeral=is_ephemeral,
            action=action,
            trigger_id=self._issue_trigger(),
            response_url=self._issue_response_url(**context),
        )
        return self._post_form("interactivity", payload, {"payload": json.dumps(payload)})

    def click_home_button(self, user_id: str, action_id: str, value: str | None = None) -> httpx.Response:
        """Click a button in the user's App Home view (a `block_actions` payload with a view container)."""
        with self._changed:
            view = copy.deepcopy(self.workspace.home_views.get(user_id))
        if view is None:
            raise LookupError(f"no home view published for {user_id}")
        block, element = _find_element(view, action_id, None)
        action = {
            "action_id": action_id,
            "block_id": block.get("block_id", ""),
            "type": element.get("type", "button"),
            "value": value if value is not None else element.get("value", ""),
            "action_ts": f"{time.time():.6f}",
        }
        payload = {
            "type": "block_actions",
            "user": payloads.user_ref(self.workspace, user_id),
            "api_app_id": self.workspace.app_id,
            "token": payloads.VERIFICATION_TOKEN,
            "container": {"type": "view", "view_id": view.get("id", "")},
            "trigger_id": self._issue_trigger(),
            "team": payloads.team_ref(self.workspace),
            "view": view,
            "actions": [action],
        }
        return self._post_form("interactivity", payload, {"payload": json.dumps(payload)})

    def submit_view(
        self, user_id: str, view: dict[str, Any] | str, values: dict[str, dict[str, Any]]
    ) -> httpx.Response:
        """Submit an open modal; `values` maps block_id -> action_id -> a string or a full state value."""
        view_id = view if isinstance(view, str) else view["id"]
        with self._changed:
            submitted = copy.deepcopy(self.workspace.views[view_id])
        state: dict[str, dict[str, Any]] = {}
        for block_id, actions in values.items():
            state[block_id] = {
                action_id: v if isinstance(v, dict) else {"type": "plain_text_input", "value": v}
                for action_id, v in actions.items()
            }
        submitted["state"] = {"values": state}
        payload = payloads.view_submission_payload(
            self.workspace, user_id=user_id, view=submitted, trigger_id=self._issue_trigger()
        )
        response = self._post_form("interactivity", payload, {"payload": json.dumps(payload)})
        self._apply_view_ack(view_id, response)
        return response

    def _apply_view_ack(self, view_id: str, response: httpx.Response) -> None:
        """Close, keep or replace the modal according to the app's `response_action`, as Slack would."""
        if response.status_code != 200:
            return
        try:
            ack = response.json() if response.content else {}
        except json.JSONDecodeError:
            ack = {}
        action = ack.get("response_action") if isinstance(ack, dict) else None
        with self._changed:
            modals = self.workspace.open_modals
            if action == "clear":
                modals.clear()
            elif action in ("update", "push"):
                stored = self.api.store_view(ack["view"], "modal", view_id if action == "update" else None)
                if action == "push":
                    modals.append(stored["id"])
            elif action != "errors" and view_id in modals:
                modals.remove(view_id)
            self._changed.notify_all()

    def slash_command(self, user_id: str, channel: str, command: str, text: str = "") -> httpx.Response:
        """Run `/command text`; an immediate ack body is shown to the person as Slack shows it."""
        context = {"user": user_id, "channel": channel, "message_ts": None, "ephemeral": True}
        form = payloads.slash_command_form(
            self.workspace,
            user_id=user_id,
            channel_id=channel,
            command=command,
            text=text,
            trigger_id=self._issue_trigger(),
            response_url=self._issue_response_url(**context),
        )
        response = self._post_form("commands", dict(form), form)
        if response.status_code == 200 and response.content:
            try:
                ack = response.json()
            except json.JSONDecodeError:
                ack = {"text": response.text}
            with self._changed:
                self._apply_response(context, ack if isinstance(ack, dict) else {"text": str(ack)})
                self._changed.notify_all()
        return response

    def _apply_response(self, context: dict[str, Any], body: dict[str, Any]) -> None:
        """What Slack does with a response_url post (or a command's ack body)."""
        ws = self.workspace
        channel = ws.channels.get(context["channel"])
        original = channel.find(context["message_ts"]) if channel and context.get("message_ts") else None
        if body.get("delete_original") and original is not None and channel is not None:
            ws.remove_message(channel, original["ts"])
            return
        text = str(body.get("text", ""))
        blocks = body.get("blocks")
        if body.get("replace_original") and original is not None:
            original["text"] = text
            if blocks is not None:
                original["blocks"] = blocks
            return
        if channel is None or not (text or blocks):
            return
        message = self.api.bot_message(ws.next_ts(), text, blocks)
        if body.get("thread_ts"):
            message["thread_ts"] = body["thread_ts"]
        if body.get("response_type") == "in_channel":
            ws.store_message(channel, message)
        else:
            message.update(channel=channel.id, recipient=context["user"])
            ws.ephemeral.append(message)

    def handle_response_url(self, url_id: str, body: dict[str, Any]) -> Reply:
        with self._changed:
            context = self._response_urls.get(url_id)
            if context is None:
                return 404, {"ok": False, "error": "expired_url"}, {}
            self.responses.append({"url": f"{self.base_url}/response/{url_id}", "body": body, **context})
            self._apply_response(context, body)
            self._changed.notify_all()
        return 200, {"ok": True}, {}


def _find_element(
    message: dict[str, Any], action_id: str, block_id: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    for block in message.get("blocks") or []:
        if block_id is not None and block.get("block_id") != block_id:
            continue
        elements = list(block.get("elements") or [])
        if isinstance(block.get("accessory"), dict):
            elements.append(block["accessory"])
        for element in elements:
            if isinstance(element, dict) and element.get("action_id") == action_id:
                return block, element
    raise LookupError(f"no element with action_id {action_id!r} in message {message.get('ts')}")
