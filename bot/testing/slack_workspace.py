"""In-memory Slack workspace behind the emulator: users, conversations, messages and app surfaces.

Kept apart from HTTP so the Web API handlers and the user-side actions share one model of what Slack stores.
Callers hold `SlackWorkspace.lock` while they read or change it; the emulator's HTTP threads and the test
thread both touch it.
"""

from __future__ import annotations

import copy
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

BASE_TS_S = 1_700_000_000


@dataclass
class User:
    """A workspace member; `to_api` gives the users.info shape Sleuth reads (email, admin flag)."""

    id: str
    name: str
    real_name: str
    email: str | None = None
    is_bot: bool = False
    is_admin: bool = False
    bot_id: str | None = None
    team_id: str = ""
    is_restricted: bool = False  # a guest: sees only the channels they are invited to
    deleted: bool = False  # deactivated

    def to_api(self) -> dict[str, Any]:
        profile: dict[str, Any] = {
            "real_name": self.real_name,
            "real_name_normalized": self.real_name,
            "display_name": self.name,
            "display_name_normalized": self.name,
            "team": self.team_id,
        }
        if self.email is not None:
            profile["email"] = self.email
        if self.bot_id is not None:
            profile["bot_id"] = self.bot_id
        return {
            "id": self.id,
            "team_id": self.team_id,
            "name": self.name,
            "real_name": self.real_name,
            "deleted": self.deleted,
            "is_admin": self.is_admin,
            "is_owner": False,
            "is_primary_owner": False,
            "is_restricted": self.is_restricted,
            "is_ultra_restricted": False,
            "is_bot": self.is_bot,
            "is_app_user": False,
            "tz": "Europe/London",
            "tz_offset": 0,
            "updated": BASE_TS_S,
            "profile": profile,
        }


@dataclass
class Channel:
    """A conversation; `messages` holds top-level messages and thread replies in ts order."""

    id: str
    name: str
    members: list[str]
    is_im: bool = False
    is_private: bool = False
    im_user: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    is_archived: bool = False

    @property
    def channel_type(self) -> str:
        """The `channel_type` Slack puts on message events for this conversation."""
        if self.is_im:
            return "im"
        return "group" if self.is_private else "channel"

    def find(self, ts: str) -> dict[str, Any] | None:
        return next((m for m in self.messages if m["ts"] == ts), None)

    def to_api(self, bot_user_id: str) -> dict[str, Any]:
        if self.is_im:
            return {
                "id": self.id,
                "created": BASE_TS_S,
                "is_im": True,
                "is_org_shared": False,
                "user": self.im_user,
                "is_user_deleted": False,
                "priority": 0,
            }
        return {
            "id": self.id,
            "name": self.name,
            "name_normalized": self.name,
            "created": BASE_TS_S,
            "creator": self.members[0] if self.members else "",
            "is_channel": not self.is_private,
            "is_group": self.is_private,
            "is_im": False,
            "is_mpim": False,
            "is_private": self.is_private,
            "is_archived": self.is_archived,
            "is_general": False,
            "is_shared": False,
            "is_ext_shared": False,
            "is_org_shared": False,
            "is_pending_ext_shared": False,
            "is_member": bot_user_id in self.members,
            "num_members": len(self.members),
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "", "creator": "", "last_set": 0},
            "previous_names": [],
        }


class SlackWorkspace:
    """What Slack stores for one team and one installed app (the bot)."""

    def __init__(self, *, team_id: str, team_name: str, bot_user_id: str, bot_id: str, app_id: str) -> None:
        self.lock = threading.RLock()
        self.team_id = team_id
        self.team_name = team_name
        self.domain = team_name.lower().replace(" ", "-")
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.app_id = app_id
        self.users: dict[str, User] = {}
        self.channels: dict[str, Channel] = {}
        self.ephemeral: list[dict[str, Any]] = []
        self.home_views: dict[str, dict[str, Any]] = {}
        self.views: dict[str, dict[str, Any]] = {}
        self.open_modals: list[str] = []
        self.statuses: dict[tuple[str, str], list[str]] = {}
        self.titles: dict[tuple[str, str], list[str]] = {}
        self.suggested_prompts: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
        self.feedback: list[dict[str, Any]] = []
        self.streams: dict[tuple[str, str], dict[str, Any]] = {}
        self._ts_counter = itertools.count(100)
        self._id_counter = itertools.count(1)
        self.add_user(bot_user_id, "sleuth", real_name="Sleuth", is_bot=True, bot_id=bot_id)

    # -- identifiers -------------------------------------------------------------------------------------

    def next_ts(self) -> str:
        """A unique, increasing message ts like Slack's ("1700000000.000100"), so ordering tests are exact."""
        n = next(self._ts_counter)
        return f"{BASE_TS_S + n // 1_000_000}.{n % 1_000_000:06d}"

    def next_id(self, prefix: str, width: int = 8) -> str:
        return f"{prefix}{next(self._id_counter):0{width}X}"

    # -- directory ---------------------------------------------------------------------------------------

    def add_user(
        self,
        user_id: str,
        name: str,
        *,
        real_name: str | None = None,
        email: str | None = None,
        is_bot: bool = False,
        is_admin: bool = False,
        bot_id: str | None = None,
        is_restricted: bool = False,
    ) -> User:
        with self.lock:
            user = User(
                user_id, name, real_name or name, email, is_bot, is_admin, bot_id, self.team_id, is_restricted
            )
            self.users[user_id] = user
            return user

    def add_channel(
        self, channel_id: str, name: str, *, members: list[str] | None = None, is_private: bool = False
    ) -> Channel:
        with self.lock:
            channel = Channel(channel_id, name, list(members or []), is_private=is_private)
            self.channels[channel_id] = channel
            return channel

    def open_dm(self, user_id: str) -> Channel:
        """The bot's DM with a user, created on first use as Slack does for conversations.open."""
        with self.lock:
            for channel in self.channels.values():
                if channel.is_im and channel.im_user == user_id:
                    return channel
            channel_id = self.next_id("D")
            channel = Channel(
                channel_id, channel_id, [user_id, self.bot_user_id], is_im=True, im_user=user_id
            )
            self.channels[channel_id] = channel
            return channel

    def channel_type(self, channel_id: str) -> str:
        channel = self.channels.get(channel_id)
        return channel.channel_type if channel else "channel"

    # -- messages ----------------------------------------------------------------------------------------

    def store_message(self, channel: Channel, message: dict[str, Any]) -> dict[str, Any]:
        """Append a message, keeping its thread parent's reply fields as conversations.replies shows them."""
        thread_ts = message.get("thread_ts")
        if thread_ts and thread_ts != message["ts"]:
            parent = channel.find(thread_ts)
            if parent is not None:
                parent["thread_ts"] = thread_ts
                parent["reply_count"] = parent.get("reply_count", 0) + 1
                users = parent.setdefault("reply_users", [])
                author = message.get("user") or message.get("bot_id")
                if author and author not in users:
                    users.append(author)
                parent["reply_users_count"] = len(users)
                parent["latest_reply"] = message["ts"]
                message.setdefault("parent_user_id", parent.get("user", ""))
        channel.messages.append(message)
        return message

    def remove_message(self, channel: Channel, ts: str) -> dict[str, Any] | None:
        message = channel.find(ts)
        if message is None:
            return None
        channel.messages.remove(message)
        thread_ts = message.get("thread_ts")
        parent = channel.find(thread_ts) if thread_ts and thread_ts != ts else None
        if parent is not None and parent.get("reply_count"):
            parent["reply_count"] -= 1
        return message

    def thread(self, channel_id: str, thread_ts: str) -> list[dict[str, Any]]:
        """Parent then replies, oldest first, as copies the caller may keep."""
        with self.lock:
            channel = self.channels.get(channel_id)
            if channel is None:
                return []
            return [
                copy.deepcopy(m)
                for m in channel.messages
                if m["ts"] == thread_ts or m.get("thread_ts") == thread_ts
            ]

    def history(self, channel_id: str) -> list[dict[str, Any]]:
        """Top-level messages and broadcast replies, newest first, as conversations.history returns them."""
        with self.lock:
            channel = self.channels.get(channel_id)
            if channel is None:
                return []
            top = [
                m
                for m in channel.messages
                if m.get("thread_ts") in (None, m["ts"]) or m.get("subtype") == "thread_broadcast"
            ]
            return [copy.deepcopy(m) for m in reversed(top)]
