"""The Web API methods Sleuth calls, answering with Slack's response shapes over a `SlackWorkspace`.

Shapes follow the examples in ../shared/specs/slack/slack_web_openapi_v2.json; the assistant and streaming
methods (newer than that spec) follow slack_sdk's signatures and Slack's method docs.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from bot.testing import slack_listings as listings
from bot.testing.slack_limits import (
    MAX_MARKDOWN_TEXT_CHARS,
    MAX_MESSAGE_TEXT_CHARS,
    MAX_VIEW_BLOCKS,
    ApiError,
    validate_blocks,
)
from bot.testing.slack_oidc import SlackOidc
from bot.testing.slack_workspace import Channel, SlackWorkspace

Params = dict[str, Any]
JSON_PARAMS = ("blocks", "attachments", "view", "prompts", "chunks", "loading_messages", "metadata")


def normalize_params(params: Params) -> Params:
    """Form-encoded calls carry lists and objects as JSON strings; decode them as Slack does."""
    out = dict(params)
    for key in JSON_PARAMS:
        value = out.get(key)
        if isinstance(value, str) and value.strip():
            try:
                out[key] = json.loads(value)
            except json.JSONDecodeError as exc:
                code = "invalid_blocks_format" if key == "blocks" else "invalid_arguments"
                raise ApiError(code) from exc
    return out


def _flag(value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1")


def _required(params: Params, name: str) -> Any:
    value = params.get(name)
    if value in (None, ""):
        raise ApiError(
            "invalid_arguments", response_metadata={"messages": [f"missing required field: {name}"]}
        )
    return value


class SlackWebApi:
    """Dispatches `method` + params to a handler; every handler returns a body or raises `ApiError`."""

    def __init__(self, workspace: SlackWorkspace, *, is_trigger_valid: Callable[[str], str | None]) -> None:
        self.ws = workspace
        self._is_trigger_valid = is_trigger_valid
        self.oidc = SlackOidc(workspace)  # Sign in with Slack
        self.methods: dict[str, Callable[[Params], dict[str, Any]]] = {
            "api.test": lambda p: {"args": p},
            "auth.test": self.auth_test,
            "chat.postMessage": self.chat_post_message,
            "chat.update": self.chat_update,
            "chat.delete": self.chat_delete,
            "chat.postEphemeral": self.chat_post_ephemeral,
            "chat.getPermalink": self.chat_get_permalink,
            "chat.startStream": self.chat_start_stream,
            "chat.appendStream": self.chat_append_stream,
            "chat.stopStream": self.chat_stop_stream,
            "conversations.replies": self.conversations_replies,
            "conversations.history": self.conversations_history,
            "conversations.info": self.conversations_info,
            "conversations.list": lambda p: listings.conversations_list(self.ws, p),
            "users.list": lambda p: listings.users_list(self.ws, p),
            "conversations.members": self.conversations_members,
            "conversations.open": self.conversations_open,
            "users.info": self.users_info,
            "users.lookupByEmail": self.users_lookup_by_email,
            "views.publish": self.views_publish,
            "views.open": self.views_open,
            "views.push": self.views_open,
            "views.update": self.views_update,
            "reactions.add": self.reactions_add,
            "reactions.remove": self.reactions_remove,
            "assistant.threads.setStatus": self.assistant_set_status,
            "assistant.threads.setSuggestedPrompts": self.assistant_set_suggested_prompts,
            "assistant.threads.setTitle": self.assistant_set_title,
            "openid.connect.token": self.oidc.token,
            "openid.connect.userInfo": self.oidc.user_info,
        }

    def call(self, method: str, params: Params) -> dict[str, Any]:
        handler = self.methods.get(method)
        if handler is None:
            raise ApiError("unknown_method")
        with self.ws.lock:
            body = handler(normalize_params(params))
        return {"ok": True, **body}

    # -- lookups -----------------------------------------------------------------------------------------

    def _channel(self, channel_id: Any, *, readable: bool = True) -> Channel:
        channel = self.ws.channels.get(str(channel_id or ""))
        if channel is None or (channel.is_private and self.ws.bot_user_id not in channel.members):
            raise ApiError("channel_not_found")
        if readable and self.ws.bot_user_id not in channel.members:
            raise ApiError("not_in_channel")
        return channel

    def _message(self, channel: Channel, ts: Any) -> dict[str, Any]:
        message = channel.find(str(ts or ""))
        if message is None:
            raise ApiError("message_not_found")
        return message

    def _content(self, params: Params, *, require: bool = True) -> tuple[str, list[dict[str, Any]] | None]:
        """Text and blocks of a message, with Slack's limits applied (text truncated, blocks rejected)."""
        text = params.get("text")
        blocks = params.get("blocks")
        markdown = params.get("markdown_text")
        if markdown is not None:
            if text is not None or blocks:
                raise ApiError("markdown_text_conflict")
            if len(markdown) > MAX_MARKDOWN_TEXT_CHARS:
                raise ApiError("msg_too_long")
            return markdown, [{"type": "markdown", "text": markdown}]
        if blocks:
            blocks = copy.deepcopy(validate_blocks(blocks))
            for block in blocks:
                block.setdefault("block_id", self.ws.next_id("b", 5))
        elif require and not text and not params.get("attachments"):
            raise ApiError("no_text")
        return str(text or "")[:MAX_MESSAGE_TEXT_CHARS], blocks or None

    def bot_message(self, ts: str, text: str, blocks: list[dict[str, Any]] | None) -> dict[str, Any]:
        message: dict[str, Any] = {
            "type": "message",
            "user": self.ws.bot_user_id,
            "bot_id": self.ws.bot_id,
            "app_id": self.ws.app_id,
            "text": text,
            "ts": ts,
            "team": self.ws.team_id,
            "bot_profile": {
                "id": self.ws.bot_id,
                "app_id": self.ws.app_id,
                "name": "Sleuth",
                "team_id": self.ws.team_id,
                "deleted": False,
            },
        }
        if blocks:
            message["blocks"] = blocks
        return message

    def _public(self, message: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(message)

    # -- auth and chat -----------------------------------------------------------------------------------

    def auth_test(self, params: Params) -> dict[str, Any]:
        bot = self.ws.users[self.ws.bot_user_id]
        return {
            "url": f"https://{self.ws.domain}.slack.com/",
            "team": self.ws.team_name,
            "user": bot.name,
            "team_id": self.ws.team_id,
            "user_id": bot.id,
            "bot_id": self.ws.bot_id,
            "is_enterprise_install": False,
        }

    def chat_post_message(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"))
        text, blocks = self._content(params)
        message = self.bot_message(self.ws.next_ts(), text, blocks)
        thread_ts = params.get("thread_ts")
        if thread_ts:
            message["thread_ts"] = str(thread_ts)
            if _flag(params.get("reply_broadcast")):
                message["subtype"] = "thread_broadcast"
        if params.get("metadata"):
            message["metadata"] = params["metadata"]
        self.ws.store_message(channel, message)
        return {"channel": channel.id, "ts": message["ts"], "message": self._public(message)}

    def chat_update(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"))
        message = self._message(channel, params.get("ts"))
        if message.get("user") != self.ws.bot_user_id:
            raise ApiError("cant_update_message")
        text, blocks = self._content(params, require=False)
        if params.get("text") is not None or params.get("markdown_text") is not None:
            message["text"] = text
        if blocks is not None or "blocks" in params:
            message["blocks"] = blocks or []
        message["edited"] = {"user": self.ws.bot_user_id, "ts": self.ws.next_ts()}
        return {
            "channel": channel.id,
            "ts": message["ts"],
            "text": message["text"],
            "message": self._public(message),
        }

    def chat_delete(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"))
        message = self._message(channel, params.get("ts"))
        if message.get("user") != self.ws.bot_user_id:
            raise ApiError("cant_delete_message")
        self.ws.remove_message(channel, message["ts"])
        return {"channel": channel.id, "ts": message["ts"]}

    def chat_post_ephemeral(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"), readable=False)
        user = str(params.get("user") or "")
        if user not in self.ws.users:
            raise ApiError("user_not_found")
        if user not in channel.members:
            raise ApiError("user_not_in_channel")
        text, blocks = self._content(params)
        message = self.bot_message(self.ws.next_ts(), text, blocks)
        message.update({"channel": channel.id, "recipient": user})
        if params.get("thread_ts"):
            message["thread_ts"] = str(params["thread_ts"])
        self.ws.ephemeral.append(message)
        return {"message_ts": message["ts"]}

    def chat_get_permalink(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"), readable=False)
        message = self._message(channel, params.get("message_ts"))
        link = f"https://{self.ws.domain}.slack.com/archives/{channel.id}/p{message['ts'].replace('.', '')}"
        thread_ts = message.get("thread_ts")
        if thread_ts and thread_ts != message["ts"]:
            link += f"?thread_ts={thread_ts}&cid={channel.id}"
        return {"channel": channel.id, "permalink": link}

    # -- streaming ---------------------------------------------------------------------------------------

    def _chunks_text(self, params: Params) -> str:
        text = str(params.get("markdown_text") or "")
        for chunk in params.get("chunks") or []:
            if isinstance(chunk, dict) and chunk.get("type") == "markdown_text":
                text += str(chunk.get("text", ""))
        if len(text) > MAX_MARKDOWN_TEXT_CHARS:
            raise ApiError("msg_too_long")
        return text

    def _stream(self, params: Params) -> tuple[Channel, dict[str, Any], dict[str, Any]]:
        channel = self._channel(params.get("channel"))
        message = self._message(channel, params.get("ts"))
        stream = self.ws.streams.get((channel.id, message["ts"]))
        if stream is None or stream["state"] != "streaming":
            raise ApiError("message_not_in_streaming_state")
        return channel, message, stream

    def chat_start_stream(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"))
        thread_ts = str(_required(params, "thread_ts"))
        if not channel.is_im:
            if not params.get("recipient_team_id"):
                raise ApiError("missing_recipient_team_id")
            if not params.get("recipient_user_id"):
                raise ApiError("missing_recipient_user_id")
        message = self.bot_message(self.ws.next_ts(), self._chunks_text(params), None)
        message["thread_ts"] = thread_ts
        self.ws.store_message(channel, message)
        self.ws.streams[(channel.id, message["ts"])] = {
            "state": "streaming",
            "chunks": list(params.get("chunks") or []),
            "recipient_user_id": params.get("recipient_user_id"),
        }
        return {"channel": channel.id, "ts": message["ts"]}

    def chat_append_stream(self, params: Params) -> dict[str, Any]:
        channel, message, stream = self._stream(params)
        message["text"] += self._chunks_text(params)
        stream["chunks"].extend(params.get("chunks") or [])
        return {"channel": channel.id, "ts": message["ts"]}

    def chat_stop_stream(self, params: Params) -> dict[str, Any]:
        channel, message, stream = self._stream(params)
        message["text"] += self._chunks_text(params)
        stream["chunks"].extend(params.get("chunks") or [])
        streamed = [{"type": "markdown", "text": message["text"]}] if message["text"] else []
        if params.get("blocks"):  # shown below the streamed text, as Slack does
            message["blocks"] = [*streamed, *copy.deepcopy(validate_blocks(params["blocks"]))]
        elif streamed:
            message["blocks"] = streamed
        if params.get("metadata"):
            message["metadata"] = params["metadata"]
        stream["state"] = "stopped"
        return {"channel": channel.id, "ts": message["ts"], "message": self._public(message)}

    # -- conversations and users -------------------------------------------------------------------------

    def conversations_replies(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"))
        ts = str(_required(params, "ts"))
        parent = channel.find(ts)
        if parent is None:
            raise ApiError("thread_not_found")
        root = parent.get("thread_ts") or ts
        thread = self.ws.thread(channel.id, root)
        messages = thread[:1] + listings.in_window(thread[1:], params)  # the parent comes first, always
        page, cursor = listings.page(messages, params, lambda m: m["ts"], default_limit=1000)
        return listings.paged("messages", page, cursor)

    def conversations_history(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"))
        messages = listings.in_window(self.ws.history(channel.id), params)
        page, cursor = listings.page(messages, params, lambda m: m["ts"], default_limit=100)
        return {**listings.paged("messages", page, cursor), "pin_count": 0}

    def conversations_info(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"), readable=False)
        return {"channel": channel.to_api(self.ws.bot_user_id)}

    def conversations_members(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel"), readable=False)
        members = list(channel.members)
        page, cursor = listings.page(members, params, lambda m: m, default_limit=100)
        return {"members": page, "response_metadata": {"next_cursor": cursor}}

    def conversations_open(self, params: Params) -> dict[str, Any]:
        if params.get("channel"):
            channel = self._channel(params["channel"], readable=False)
            return {"channel": {"id": channel.id}, "no_op": True, "already_open": True}
        users = [u for u in str(params.get("users") or "").split(",") if u]
        if not users:
            raise ApiError("users_list_not_supplied")
        if len(users) > 1:
            raise ApiError("not_supported")
        if users[0] not in self.ws.users:
            raise ApiError("user_not_found")
        existed = any(c.is_im and c.im_user == users[0] for c in self.ws.channels.values())
        channel = self.ws.open_dm(users[0])
        body: dict[str, Any] = {"channel": {"id": channel.id}}
        if existed:
            body.update({"no_op": True, "already_open": True})
        return body

    def users_info(self, params: Params) -> dict[str, Any]:
        user = self.ws.users.get(str(params.get("user") or ""))
        if user is None:
            raise ApiError("user_not_found")
        return {"user": user.to_api()}

    def users_lookup_by_email(self, params: Params) -> dict[str, Any]:
        email = str(params.get("email") or "").lower()
        user = next((u for u in self.ws.users.values() if (u.email or "").lower() == email), None)
        if user is None:
            raise ApiError("users_not_found")
        return {"user": user.to_api()}

    # -- views -------------------------------------------------------------------------------------------

    def store_view(self, view: Any, kind: str | None, view_id: str | None = None) -> dict[str, Any]:
        if not isinstance(view, dict) or view.get("type") not in ("home", "modal"):
            raise ApiError("invalid_arguments", response_metadata={"messages": ["invalid `view`"]})
        if kind is not None and view["type"] != kind:
            raise ApiError("invalid_arguments", response_metadata={"messages": [f"view type must be {kind}"]})
        blocks = copy.deepcopy(validate_blocks(view.get("blocks") or [], max_blocks=MAX_VIEW_BLOCKS))
        view_id = view_id or self.ws.next_id("V")
        stored = {
            "id": view_id,
            "team_id": self.ws.team_id,
            "app_id": self.ws.app_id,
            "bot_id": self.ws.bot_id,
            "type": view["type"],
            "blocks": blocks,
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "external_id": view.get("external_id", ""),
            "state": {"values": {}},
            "hash": self.ws.next_id("h", 12),
            "title": view.get("title"),
            "submit": view.get("submit"),
            "close": view.get("close"),
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "previous_view_id": None,
            "root_view_id": view_id,
        }
        self.ws.views[view_id] = stored
        return stored

    def views_publish(self, params: Params) -> dict[str, Any]:
        user_id = str(params.get("user_id") or "")
        if user_id not in self.ws.users:
            raise ApiError("invalid_arguments", response_metadata={"messages": ["invalid `user_id`"]})
        previous = self.ws.home_views.get(user_id)
        stored = self.store_view(params.get("view"), "home", previous["id"] if previous else None)
        self.ws.home_views[user_id] = stored
        return {"view": copy.deepcopy(stored)}

    def views_open(self, params: Params) -> dict[str, Any]:
        problem = self._is_trigger_valid(str(params.get("trigger_id") or ""))
        if problem is not None:
            raise ApiError(problem, response_metadata={"messages": ["invalid `trigger_id`"]})
        stored = self.store_view(params.get("view"), "modal")
        self.ws.open_modals.append(stored["id"])
        return {"view": copy.deepcopy(stored)}

    def views_update(self, params: Params) -> dict[str, Any]:
        view_id = params.get("view_id")
        if not view_id and params.get("external_id"):
            view_id = next(
                (v["id"] for v in self.ws.views.values() if v["external_id"] == params["external_id"]), None
            )
        current = self.ws.views.get(str(view_id or ""))
        if current is None:
            raise ApiError("not_found")
        if params.get("hash") and params["hash"] != current["hash"]:
            raise ApiError("hash_conflict")
        stored = self.store_view(params.get("view"), current["type"], current["id"])
        for user_id, home in list(self.ws.home_views.items()):
            if home["id"] == stored["id"]:
                self.ws.home_views[user_id] = stored
        return {"view": copy.deepcopy(stored)}

    # -- reactions and assistant threads -----------------------------------------------------------------

    def reactions_add(self, params: Params) -> dict[str, Any]:
        message = self._message(self._channel(params.get("channel")), params.get("timestamp"))
        name = str(_required(params, "name"))
        reactions = message.setdefault("reactions", [])
        reaction = next((r for r in reactions if r["name"] == name), None)
        if reaction is None:
            reaction = {"name": name, "users": [], "count": 0}
            reactions.append(reaction)
        if self.ws.bot_user_id in reaction["users"]:
            raise ApiError("already_reacted")
        reaction["users"].append(self.ws.bot_user_id)
        reaction["count"] += 1
        return {}

    def reactions_remove(self, params: Params) -> dict[str, Any]:
        message = self._message(self._channel(params.get("channel")), params.get("timestamp"))
        name = str(_required(params, "name"))
        reactions = message.get("reactions", [])
        reaction = next((r for r in reactions if r["name"] == name), None)
        if reaction is None or self.ws.bot_user_id not in reaction["users"]:
            raise ApiError("no_reaction")
        reaction["users"].remove(self.ws.bot_user_id)
        reaction["count"] -= 1
        if not reaction["count"]:
            reactions.remove(reaction)
        if not reactions:
            message.pop("reactions", None)
        return {}

    def _thread_key(self, params: Params) -> tuple[str, str]:
        channel = self._channel(params.get("channel_id"))
        return channel.id, str(_required(params, "thread_ts"))

    def assistant_set_status(self, params: Params) -> dict[str, Any]:
        key = self._thread_key(params)
        self.ws.statuses.setdefault(key, []).append(str(params.get("status", "")))
        return {}

    def assistant_set_title(self, params: Params) -> dict[str, Any]:
        key = self._thread_key(params)
        self.ws.titles.setdefault(key, []).append(str(_required(params, "title")))
        return {}

    def assistant_set_suggested_prompts(self, params: Params) -> dict[str, Any]:
        channel = self._channel(params.get("channel_id"))
        prompts = params.get("prompts")
        if not isinstance(prompts, list) or not prompts:
            raise ApiError(
                "invalid_arguments", response_metadata={"messages": ["missing required field: prompts"]}
            )
        key = (channel.id, params.get("thread_ts"))
        self.ws.suggested_prompts.setdefault(key, []).append(
            {"title": params.get("title"), "prompts": prompts}
        )
        return {}
