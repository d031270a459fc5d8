"""Sign in with Slack (OpenID Connect), for sources whose links are bound by a Slack sign-in rather than by
email: the browser that finishes a link first proves, at Slack, that its user is the Slack user who ran
`/sleuth link` (a forwarded link URL then proves the wrong person and links nothing).

`SlackSignIn.authorize_url(state)` sends the browser to Slack; `user(code)` exchanges the code at
`openid.connect.token` and asks `openid.connect.userInfo` who signed in: (team id, user id).
"""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, SecretStr
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

USER_CLAIM, TEAM_CLAIM = "https://slack.com/user_id", "https://slack.com/team_id"


class SlackSignInConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    client_id: str
    client_secret: SecretStr
    redirect_uri: str  # Sleuth's /oauth/slack/callback
    start_url: str  # Sleuth's /oauth/slack/start: the link URL `/sleuth link` hands out
    authorize_url: str = "https://slack.com/openid/connect/authorize"
    api_url: str = "https://slack.com/api/"


class SlackSignInFailed(Exception):
    """Slack did not say who signed in (denied, bad code, Slack unreachable)."""


class SlackSignIn:
    def __init__(self, config: SlackSignInConfig, *, timeout_s: float = 10.0) -> None:
        self.config, self._timeout = config, timeout_s

    def start_url(self, state: str) -> str:
        return f"{self.config.start_url}?{urlencode({'link': state})}"

    def authorize_url(self, state: str) -> str:
        query = {
            "response_type": "code",
            "scope": "openid",
            "client_id": self.config.client_id,
            "redirect_uri": self.config.redirect_uri,
            "state": state,
            "nonce": secrets.token_urlsafe(16),
        }
        return f"{self.config.authorize_url}?{urlencode(query)}"

    def user(self, code: str) -> tuple[str, str]:
        """(team id, user id) of whoever signed in with this code."""
        try:
            token = WebClient(base_url=self.config.api_url, timeout=self._timeout).openid_connect_token(
                client_id=self.config.client_id,
                client_secret=self.config.client_secret.get_secret_value(),
                code=code,
                redirect_uri=self.config.redirect_uri,
            )
            client = WebClient(
                token=str(token["access_token"]), base_url=self.config.api_url, timeout=self._timeout
            )
            info = client.openid_connect_userInfo()
        except (SlackApiError, OSError, KeyError) as exc:
            raise SlackSignInFailed(type(exc).__name__) from None
        team, user = info.get(TEAM_CLAIM), info.get(USER_CLAIM)
        if not isinstance(team, str) or not isinstance(user, str):
            raise SlackSignInFailed("no user in userInfo")
        return team, user
