"""Who is asking, and what they may see: the Slack user's verified email (from the bot's own `users.info`
call) gives the directory-trusted principals, linked OAuth accounts add theirs. Nothing in the question, and
nothing the model says, can change whose identity is used.

`users.info` answers are cached for `USER_TTL_S` (Tier 4, but a `channel`-policy answer looks up every member
of a large channel): concurrent lookups of one user make one call, and a failed call is not cached. Whether a
user is a bot is also remembered past the TTL (`known_bot`), so the intake can drop a known bot's message
without a Web API call before anything is posted.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cachetools import LRUCache, TTLCache, cached
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.identity import AccountLinker, PrincipalResolver
from connectors.base import PUBLIC

log = logging.getLogger(__name__)

PrincipalsForEmail = Callable[[str], frozenset[str]]
USER_TTL_S = 300.0
MAX_CACHED_USERS = 50_000


class UnknownAsker(Exception):
    """Slack would not tell us who the user is (users.info failed); nothing is searched."""


@dataclass(frozen=True)
class Asker:
    user: str
    email: str | None
    principals: frozenset[str]
    notes: list[str] = field(default_factory=list)  # link problems, told to the asker privately

    @property
    def label(self) -> str:
        return self.email or f"slack:{self.user}"


class AskerDirectory:
    def __init__(
        self,
        client: WebClient,
        principals_for_email: PrincipalsForEmail,
        resolver: PrincipalResolver | None = None,
        linker: AccountLinker | None = None,
        *,
        ttl_s: float = USER_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client, self._for_email, self._resolver = client, principals_for_email, resolver
        self._linker = linker
        users: TTLCache[str, dict[str, Any]] = TTLCache(MAX_CACHED_USERS, ttl_s, timer=clock)
        self._user = cached(users, condition=threading.Condition())(self._fetch_user)
        self._bots: LRUCache[str, bool] = LRUCache(MAX_CACHED_USERS)  # kept past the TTL: served stale
        self._bots_lock = threading.Lock()

    def resolve(self, team: str, user: str, *, notes: bool = True) -> Asker:
        """The user's principals; `notes=False` skips the link nudges (channel members who did not ask)."""
        if user.startswith("B"):  # another app's bot id (answer_bots): what everyone may see
            return Asker(user, None, frozenset({PUBLIC}))
        found = self._user(user)
        email = None if found.get("is_bot") else (found.get("profile") or {}).get("email")
        principals = set(self._for_email(email)) if email else {PUBLIC}
        told: list[str] = []
        if self._resolver is not None and not found.get("is_bot"):
            resolved = self._resolver.resolve(team, user, email)
            principals |= resolved.principals
            if notes:
                told = [problem.message for problem in resolved.problems]
                told += self._unlinked_notes(team, user)
        log.info("asker resolved", extra={"principals": len(principals), "linked_problems": len(told)})
        return Asker(user, email, frozenset(principals), told)

    def verified_email(self, user: str) -> str | None:
        """The email Slack verified for a human user (what an account link is bound to), or None."""
        if not user.startswith(("U", "W")):
            return None
        try:
            found = self._user(user)
        except UnknownAsker:
            return None
        email = None if found.get("is_bot") else (found.get("profile") or {}).get("email")
        return str(email).strip().lower() if email else None

    def is_bot(self, user: str) -> bool:
        """Whether Slack says `user` is a bot user (even one whose events carry no `bot_id`); cached like every
        `users.info`; False when Slack can't say now (the question is not dropped for that)."""
        if not user.startswith(("U", "W")):
            return False
        try:
            return bool(self._user(user).get("is_bot"))
        except UnknownAsker:
            return False

    def known_bot(self, user: str) -> bool | None:
        """Whether `user` was a bot when Slack last said (however long ago), without asking; None if never said."""
        if not user.startswith(("U", "W")):
            return False
        with self._bots_lock:
            return self._bots.get(user)

    def _fetch_user(self, user: str) -> dict[str, Any]:
        try:
            found = dict(self._client.users_info(user=user)["user"])
        except SlackApiError as exc:
            raise UnknownAsker(user) from exc
        with self._bots_lock:
            self._bots[user] = bool(found.get("is_bot"))
        return found

    def _unlinked_notes(self, team: str, user: str) -> list[str]:
        """A private nudge per OAuth source the asker has not connected: without it, only what anyone may see
        there was searched."""
        if self._linker is None:
            return []
        linked = {link.source for link in self._linker.links(team, user) if link.status == "active"}
        return [
            f"You haven't connected {source.label} yet, so I only used {source.label} documents anyone can "
            f"open. Run `/sleuth link {source.source}` to connect your account."
            for source in self._linker.sources
            if source.source not in linked
        ]
