"""Who is asking, and what they may see: the Slack user's verified email (from the bot's own `users.info`
call) gives the directory-trusted principals, linked OAuth accounts add theirs. Nothing in the question, and
nothing the model says, can change whose identity is used.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.identity import AccountLinker, PrincipalResolver
from connectors.base import PUBLIC

log = logging.getLogger(__name__)

PrincipalsForEmail = Callable[[str], frozenset[str]]


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
    ) -> None:
        self._client, self._for_email, self._resolver = client, principals_for_email, resolver
        self._linker = linker

    def resolve(self, team: str, user: str) -> Asker:
        if user.startswith("B"):  # another app's bot id (answer_bots): what everyone may see
            return Asker(user, None, frozenset({PUBLIC}))
        try:
            found = self._client.users_info(user=user)["user"]
        except SlackApiError as exc:
            raise UnknownAsker(user) from exc
        email = None if found.get("is_bot") else (found.get("profile") or {}).get("email")
        principals = set(self._for_email(email)) if email else {PUBLIC}
        notes: list[str] = []
        if self._resolver is not None and not found.get("is_bot"):
            resolved = self._resolver.resolve(team, user, email)
            principals |= resolved.principals
            notes = [problem.message for problem in resolved.problems]
            notes += self._unlinked_notes(team, user)
        log.info("asker resolved", extra={"principals": len(principals), "linked_problems": len(notes)})
        return Asker(user, email, frozenset(principals), notes)

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
