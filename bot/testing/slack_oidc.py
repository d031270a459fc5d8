"""Sign in with Slack (OpenID Connect) for the emulator: what `/sleuth link` uses where a deployment binds links
by a Slack sign-in in the same browser instead of by email.

- `GET /openid/connect/authorize?response_type=code&scope=openid&client_id&redirect_uri&state&nonce`: signs in
  the user named by the `X-Test-Login` header (a Slack user id; `deny` denies) and redirects to `redirect_uri`
  with `code` and `state`, as Slack does after its consent page.
- `openid.connect.token` (client_id, client_secret, code, redirect_uri; no bearer) -> `access_token`, `id_token`.
- `openid.connect.userInfo` (bearer: that access token) -> `sub`, `https://slack.com/user_id`,
  `https://slack.com/team_id`, `email`, `email_verified`.
Shapes: api.slack.com/authentication/sign-in-with-slack.
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from bot.testing.slack_limits import ApiError
from bot.testing.slack_workspace import SlackWorkspace

Reply = tuple[int, dict[str, Any], dict[str, str]]
USER_TOKEN = "__user_token"  # where the emulator hands a user token to `user_info`
METHODS = ("openid.connect.token", "openid.connect.userInfo")  # answered without the bot token


@dataclass
class _Grant:
    user: str
    client_id: str
    redirect_uri: str
    nonce: str | None


@dataclass
class SlackOidc:
    workspace: SlackWorkspace
    clients: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)  # id -> (secret, redirects)
    codes: dict[str, _Grant] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # access token -> user id
    signed_in: list[str] = field(default_factory=list)  # user ids, in order (tests read it)

    def add_client(self, client_id: str, client_secret: str, redirect_uris: list[str]) -> None:
        self.clients[client_id] = (client_secret, tuple(redirect_uris))

    def authorize(self, query: dict[str, str], login: str | None) -> tuple[int, dict[str, str]]:
        """The browser's visit: (status, headers) with the redirect back to the app."""
        client = self.clients.get(query.get("client_id", ""))
        redirect = query.get("redirect_uri", "")
        if client is None or redirect not in client[1] or "openid" not in query.get("scope", "").split():
            return 400, {}
        if login == "deny" or login not in self.workspace.users:
            return 302, {
                "Location": f"{redirect}?{urlencode({'error': 'access_denied', 'state': query.get('state', '')})}"
            }
        code = secrets.token_urlsafe(16)
        self.codes[code] = _Grant(login, query["client_id"], redirect, query.get("nonce"))
        self.signed_in.append(login)
        return 302, {"Location": f"{redirect}?{urlencode({'code': code, 'state': query.get('state', '')})}"}

    def token(self, params: dict[str, Any]) -> dict[str, Any]:
        """`openid.connect.token`: client credentials (body or Basic auth) and the code."""
        client = self.clients.get(str(params.get("client_id") or ""))
        if client is None or client[0] != params.get("client_secret"):
            raise ApiError("invalid_client_id")
        grant = self.codes.pop(str(params.get("code") or ""), None)
        if grant is None or grant.client_id != params.get("client_id"):
            raise ApiError("invalid_code")
        if grant.redirect_uri != params.get("redirect_uri"):
            raise ApiError("bad_redirect_uri")
        access = "xoxp-oidc-" + secrets.token_urlsafe(16)
        self.tokens[access] = grant.user
        claims = {"sub": grant.user, "https://slack.com/user_id": grant.user,
                  "https://slack.com/team_id": self.workspace.team_id, "nonce": grant.nonce}  # fmt: skip
        return {"access_token": access, "token_type": "Bearer", "id_token": _unsigned_jwt(claims)}

    def user_info(self, params: dict[str, Any]) -> dict[str, Any]:
        """`openid.connect.userInfo`, asked with the signed-in user's token (the emulator passes it in)."""
        user_id = self.tokens.get(str(params.get(USER_TOKEN) or ""))
        if user_id is None:
            raise ApiError("invalid_auth")
        user = self.workspace.users[user_id]
        return {
            "sub": user_id,
            "https://slack.com/user_id": user_id,
            "https://slack.com/team_id": self.workspace.team_id,
            "email": user.email,
            "email_verified": bool(user.email),
        }


def _unsigned_jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."
