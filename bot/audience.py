"""Who an answer in a channel is for. Per channel, set by an admin:

- `asker` (default): retrieval uses the asker's permissions; an answer that relies on any non-public document
  is sent to the asker privately, and the thread gets a short note instead.
- `channel`: retrieval uses only what every member of the channel may see (the principals they all hold), so
  the answer can be posted for everyone.

DMs are always `asker`: the only audience is the asker.

A channel's member list is cached for `MEMBERS_TTL_S` (one `conversations.members` walk per channel, however
many questions arrive at once); a member who joined since may read an answer computed without them for at most
that long. A member Slack will not describe counts as seeing only public documents, which narrows, never widens.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from cachetools import TTLCache, cached
from slack_sdk import WebClient
from sqlalchemy import Column, DateTime, Engine, String, delete, insert, select

from bot.askers import AskerDirectory, UnknownAsker
from connectors.base import PUBLIC
from connectors.database import create_tables, owned_table

log = logging.getLogger(__name__)

Policy = Literal["asker", "channel"]
POLICIES: tuple[Policy, ...] = ("asker", "channel")
MEMBERS_TTL_S = 60.0
MAX_CACHED_CHANNELS = 10_000
PRIVATE_NOTE = (
    "I've sent you the answer privately: it relies on documents not everyone in this channel can open."
)

channel_policies = owned_table(
    "channel_policies",
    Column("team", String, primary_key=True),
    Column("channel", String, primary_key=True),
    Column("policy", String, nullable=False),
    Column("set_by", String, nullable=False),
    Column("set_at", DateTime(timezone=True), nullable=False),
)


class ChannelAudience:
    def __init__(
        self,
        engine: Engine,
        client: WebClient,
        askers: AskerDirectory,
        is_public: Callable[[str], bool],
        *,
        ttl_s: float = MEMBERS_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine, self._client, self._askers, self._is_public = engine, client, askers, is_public
        members: TTLCache[str, tuple[str, ...]] = TTLCache(MAX_CACHED_CHANNELS, ttl_s, timer=clock)
        self._members = cached(members, condition=threading.Condition())(self._fetch_members)
        self._self_id: str | None = None
        create_tables(channel_policies.metadata, engine)

    def policy(self, team: str, channel: str) -> Policy:
        if _is_dm(channel):
            return "asker"
        with self._engine.connect() as conn:
            found = conn.execute(
                select(channel_policies.c.policy).where(
                    channel_policies.c.team == team, channel_policies.c.channel == channel
                )
            ).scalar()
        return "channel" if found == "channel" else "asker"

    def set_policy(self, team: str, channel: str, policy: Policy, *, by: str) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy is one of {', '.join(POLICIES)}")
        with self._engine.begin() as conn:
            conn.execute(
                delete(channel_policies).where(
                    channel_policies.c.team == team, channel_policies.c.channel == channel
                )
            )
            conn.execute(
                insert(channel_policies).values(
                    team=team, channel=channel, policy=policy, set_by=by, set_at=datetime.now(UTC)
                )
            )

    def principals(self, team: str, channel: str, asker_principals: frozenset[str]) -> frozenset[str]:
        """What retrieval may use: the asker's principals, or under `channel` those every member holds."""
        if self.policy(team, channel) != "channel":
            return asker_principals
        shared = set(asker_principals)
        for member in self._members(channel):
            if member.startswith(("B", "USLACKBOT")) or member == self._own_user_id():
                continue
            shared &= self._member_principals(team, member)
        return frozenset(shared | {PUBLIC})

    def _own_user_id(self) -> str:
        """Sleuth's own bot user is a member of every channel it answers in; it is not an audience."""
        if self._self_id is None:
            self._self_id = str(self._client.auth_test()["user_id"])
        return self._self_id

    def _member_principals(self, team: str, member: str) -> frozenset[str]:
        try:
            return self._askers.resolve(team, member, notes=False).principals
        except UnknownAsker:
            log.warning("channel member not resolved; counted as public only", extra={"member": member})
            return frozenset({PUBLIC})

    def nameable(self, team: str, channel: str) -> Callable[[str], bool] | None:
        """Which documents a line everyone in the channel sees (the progress status, the placeholder) may
        name: under `asker`, only public ones (every member may open them); None where the asker is the only
        reader (a DM) or retrieval already used what every member may see (`channel`)."""
        if _is_dm(channel) or self.policy(team, channel) == "channel":
            return None
        return self._is_public

    def needs_private(self, team: str, channel: str, answer: dict[str, Any]) -> bool:
        """Under `asker`, an answer in a channel that cites anything non-public goes to the asker only."""
        if _is_dm(channel) or self.policy(team, channel) == "channel":
            return False
        return not all(self._is_public(s["doc_id"]) for s in _cited(answer))

    def _fetch_members(self, channel: str) -> tuple[str, ...]:
        members: list[str] = []
        cursor = None
        while True:
            page = self._client.conversations_members(channel=channel, cursor=cursor, limit=200)
            members += page.get("members", [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return tuple(members)


def _cited(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return list(answer.get("sources") or [])


def _is_dm(channel: str) -> bool:
    return channel.startswith("D")
