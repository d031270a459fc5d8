"""What a Slack user may see: `public`, `user:<Slack-verified email>`, and per linked source what its
connector says (`principals_for(source, identity)`). Nothing else can add a principal: the email comes from
the bot's own users.info call, the rest from the user's own OAuth grants.

Each source grants only in its own namespace: `user:<source>:<account>` and `group:<source>:<name>` (the
source's configured name). An email principal is shared by all sources, so a source may name one only when it
is the asker's own Slack-verified email: a GitHub login that happens to equal someone's Atlassian id, or an
email another provider reports, claims nothing.

Results are cached per (team, user, email) for a short TTL and dropped whenever one of the user's links
changes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from bot.identity.errors import LinkProblem
from bot.identity.states import Clock
from connectors.base import PUBLIC, AuthExpired, ConnectorError, LinkedIdentity, user_principal

log = logging.getLogger(__name__)

PrincipalsFor = Callable[[str, LinkedIdentity], set[str]]


class Links(Protocol):
    """What the resolver needs of `AccountLinker`."""

    def identities(self, team: str, user: str) -> tuple[list[LinkedIdentity], list[LinkProblem]]: ...

    def mark_expired(self, team: str, user: str, source: str) -> LinkProblem: ...

    def on_change(self, listener: Callable[[str, str], None]) -> None: ...


@dataclass(frozen=True)
class Resolved:
    """Plain values only: safe to put in graph state and traces."""

    principals: frozenset[str]
    problems: list[LinkProblem] = field(default_factory=list)


class PrincipalResolver:
    def __init__(
        self,
        linker: Links,
        principals_for: PrincipalsFor,
        *,
        ttl_s: float = 60.0,
        clock: Clock = time.monotonic,
    ) -> None:
        self._linker = linker
        self._principals_for = principals_for
        self._ttl_s = ttl_s
        self._clock = clock
        self._cache: dict[tuple[str, str, str | None], tuple[float, Resolved]] = {}
        self._generation: dict[tuple[str, str], int] = {}  # bumped on every change of a user's links
        self._lock = threading.Lock()
        linker.on_change(self.invalidate)

    def resolve(self, team: str, user: str, email: str | None) -> Resolved:
        key = (team, user, email.strip().lower() if email else None)
        now = self._clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] > now:
                return Resolved(hit[1].principals, list(hit[1].problems))  # callers may not edit the cache
            generation = self._generation.get((team, user), 0)
        resolved = self._resolve(team, user, key[2])
        with self._lock:
            if self._generation.get((team, user), 0) == generation:  # no link changed while we were asking
                self._cache[key] = (now + self._ttl_s, resolved)
        return resolved

    def invalidate(self, team: str, user: str) -> None:
        with self._lock:
            self._generation[(team, user)] = self._generation.get((team, user), 0) + 1
            for key in [k for k in self._cache if k[0] == team and k[1] == user]:
                del self._cache[key]

    def _resolve(self, team: str, user: str, email: str | None) -> Resolved:
        principals = {PUBLIC}
        if email:
            principals.add(user_principal(email))
        identities, problems = self._linker.identities(team, user)
        for identity in identities:
            try:
                found = self._principals_for(identity.source, identity)
            except AuthExpired:
                problems.append(self._linker.mark_expired(team, user, identity.source))
                continue
            except ConnectorError:
                log.warning("principals unavailable", extra={"source": identity.source})
                problems.append(LinkProblem(identity.source, _unavailable(identity.source)))
                continue
            principals |= _own(identity.source, found, email)
        return Resolved(frozenset(principals), problems)


def _own(source: str, found: set[str], email: str | None) -> set[str]:
    """Keeps what a connector may grant: its own accounts and groups, and the asker's verified email (never
    `public`, never another source's accounts or groups, never a bare account id or someone else's email)."""
    mine = user_principal(email) if email else None
    kept = {p for p in found if p.startswith((f"user:{source}:", f"group:{source}:")) or p == mine}
    if len(kept) != len(found):
        log.warning(
            "dropped principals a connector may not grant",
            extra={"source": source, "count": len(found) - len(kept)},
        )
    return kept


def _unavailable(source: str) -> str:
    return f"I couldn't check your access in {source}, so I used only what everyone may see there."
