"""Who an answer in a channel is for. Per channel, set by an admin:

- `asker` (default): retrieval uses the asker's permissions; an answer that relies on any non-public document
  is sent to the asker privately, and the thread gets a short note instead.
- `channel`: retrieval uses only what every member of the channel may see (the principals they all hold), so
  the answer can be posted for everyone.

DMs are always `asker`: the only audience is the asker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from slack_sdk import WebClient
from sqlalchemy import Column, DateTime, Engine, MetaData, String, Table, delete, insert, select

from bot.askers import AskerDirectory
from connectors.base import PUBLIC

Policy = Literal["asker", "channel"]
POLICIES: tuple[Policy, ...] = ("asker", "channel")
PRIVATE_NOTE = (
    "I've sent you the answer privately: it relies on documents not everyone in this channel can open."
)

_metadata = MetaData()
channel_policies = Table(
    "channel_policies",
    _metadata,
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
    ) -> None:
        self._engine, self._client, self._askers, self._is_public = engine, client, askers, is_public
        _metadata.create_all(engine)

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
            if member.startswith(("B", "USLACKBOT")):
                continue
            shared &= self._askers.resolve(team, member).principals
        return frozenset(shared | {PUBLIC})

    def needs_private(self, team: str, channel: str, answer: dict[str, Any]) -> bool:
        """Under `asker`, an answer in a channel that cites anything non-public goes to the asker only."""
        if _is_dm(channel) or self.policy(team, channel) == "channel":
            return False
        return not all(self._is_public(s["doc_id"]) for s in _cited(answer))

    def _members(self, channel: str) -> Iterable[str]:
        cursor = None
        while True:
            page = self._client.conversations_members(channel=channel, cursor=cursor, limit=200)
            yield from page.get("members", [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return


def _cited(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return list(answer.get("sources") or [])


def _is_dm(channel: str) -> bool:
    return channel.startswith("D")
