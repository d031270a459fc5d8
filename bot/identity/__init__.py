"""The identity layer: account linking (authlib, OAuth 2.0 + PKCE), principal resolution. Tokens live in
`bot.vault`.

- `linking.py`: `OAuthSourceConfig`, `AccountLinker` (start, complete, unlink, identities).
- `errors.py`: `IdentityError` > `UnknownSource`, `InvalidLinkState`, `LinkFailed`; `LinkProblem` (reported, not raised).
- `states.py`: single-use, short-lived OAuth states bound to (team, user, source) and the PKCE verifier.
- `principals.py`: `PrincipalResolver.resolve(team, user, email) -> Resolved`.
"""

from __future__ import annotations

from bot.identity.errors import IdentityError, InvalidLinkState, LinkFailed, LinkProblem, UnknownSource
from bot.identity.linking import AccountLinker, LinkInfo, LinkResult, OAuthSourceConfig
from bot.identity.principals import Links, PrincipalResolver, PrincipalsFor, Resolved

__all__ = [
    "AccountLinker",
    "IdentityError",
    "InvalidLinkState",
    "LinkFailed",
    "LinkInfo",
    "LinkProblem",
    "LinkResult",
    "Links",
    "OAuthSourceConfig",
    "PrincipalResolver",
    "PrincipalsFor",
    "Resolved",
    "UnknownSource",
]
