"""`sleuth doctor --slack`: checks a live Slack configuration before anyone invites the bot, and says exactly
what to fix. Each check is a plain function of the settings (and what Slack or `sleuth serve` answered).

- the bot token: present, a bot token, accepted by `auth.test`;
- its granted scopes (Slack's `x-oauth-scopes` response header) against bot/manifest.yaml;
- the mode's secret: the signing secret's format (HTTP mode), or the app-level token (Socket Mode), which
  `apps.connections.open` must accept (the WebSocket URL it returns is single-use and left unopened);
- the public URL: `/healthz` answers where `serve` runs, and in HTTP mode `/slack/events` answers Slack's signed
  `url_verification` challenge as Bolt does when Slack checks the request URL.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import asdict, dataclass
from typing import Literal
from urllib.parse import urlsplit

import httpx
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from bot.manifest import bot_scopes, load_manifest
from bot.server import EVENTS_PATH
from bot.settings import Settings

Status = Literal["ok", "warn", "fail"]
HTTP_TIMEOUT_S = 10.0
SIGNING_SECRET = re.compile(r"[0-9a-f]{32}")
REINSTALL = (
    "then reinstall the app (Install App -> Reinstall to Workspace; Slack grants new scopes only on install) "
    "and put the new Bot User OAuth Token in SLEUTH_SLACK_BOT_TOKEN"
)


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def check_slack(settings: Settings) -> list[Check]:
    return [*_token_and_scopes(settings), *_mode_secret(settings), *_public_url(settings)]


def _token_and_scopes(settings: Settings) -> list[Check]:
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
    if not token.startswith("xoxb-"):
        problem = "is not set" if not token else "is not a bot token (xoxb-...)"
        return [
            Check(
                "bot token",
                "fail",
                f"SLEUTH_SLACK_BOT_TOKEN {problem}",
                "copy OAuth & Permissions -> Bot User OAuth Token (xoxb-...) into SLEUTH_SLACK_BOT_TOKEN",
            )
        ]
    client = WebClient(token=token, base_url=settings.slack_api_url, timeout=int(HTTP_TIMEOUT_S))
    try:
        response = client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error")
        return [
            Check(
                "auth.test",
                "fail",
                f"Slack refused the bot token ({error})",
                "copy the Bot User OAuth Token again from OAuth & Permissions (a reinstall issues a new one)",
            )
        ]
    except OSError as exc:
        return [
            Check(
                "auth.test",
                "fail",
                f"could not reach {settings.slack_api_url} ({type(exc).__name__})",
                "check the network (or SLEUTH_SLACK_API_URL) from where `sleuth serve` runs",
            )
        ]
    who = f"bot @{response.get('user')} ({response.get('user_id')}) in {response.get('team')} ({response.get('team_id')})"
    return [Check("auth.test", "ok", who), _scopes(_granted(response.headers))]


def _granted(headers: dict[str, object]) -> frozenset[str] | None:
    value = next((v for k, v in headers.items() if k.lower() == "x-oauth-scopes"), None)
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None:
        return None
    return frozenset(s.strip() for s in str(value).split(",") if s.strip())


def _scopes(granted: frozenset[str] | None) -> Check:
    wanted = bot_scopes(load_manifest())
    if granted is None:
        return Check("scopes", "warn", "Slack did not report the token's scopes (no x-oauth-scopes header)")
    missing = sorted(wanted - granted)
    if missing:
        return Check(
            "scopes",
            "fail",
            f"the bot token lacks {', '.join(missing)}",
            f"add {', '.join(missing)} under OAuth & Permissions -> Bot Token Scopes (or paste bot/manifest.yaml "
            f"into App Manifest again), {REINSTALL}",
        )
    extra = sorted(granted - wanted)
    note = f" (also granted, unused: {', '.join(extra)})" if extra else ""
    return Check("scopes", "ok", f"all {len(wanted)} scopes of bot/manifest.yaml granted{note}")


def _mode_secret(settings: Settings) -> list[Check]:
    if settings.slack_app_token is not None:
        if settings.slack_app_token.get_secret_value().startswith("xapp-"):
            return [_connections_open(settings)]
        return [
            Check(
                "socket mode",
                "fail",
                "SLEUTH_SLACK_APP_TOKEN is not an app-level token (xapp-...)",
                "Basic Information -> App-Level Tokens -> Generate with scope connections:write",
            )
        ]
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    if SIGNING_SECRET.fullmatch(secret):
        return [Check("signing secret", "ok", "SLEUTH_SLACK_SIGNING_SECRET has the right format")]
    problem = "is not set" if not secret else "does not look like a signing secret (32 hex characters)"
    return [
        Check(
            "signing secret",
            "fail",
            f"SLEUTH_SLACK_SIGNING_SECRET {problem}",
            "copy Basic Information -> App Credentials -> Signing Secret (not the Client Secret or the "
            "Verification Token) into SLEUTH_SLACK_SIGNING_SECRET, or set SLEUTH_SLACK_APP_TOKEN for Socket Mode",
        )
    ]


CONNECTIONS_FIX = {
    "socket_mode_not_enabled": "turn on Settings -> Socket Mode for the app",
    "not_allowed_token_type": "use the app-level token (xapp-...), not a bot or user token",
}


def _connections_open(settings: Settings) -> Check:
    """The app-level token tried as `sleuth serve` uses it: `apps.connections.open` hands out a WebSocket URL."""
    token = settings.slack_app_token.get_secret_value() if settings.slack_app_token else ""
    client = WebClient(base_url=settings.slack_api_url, timeout=int(HTTP_TIMEOUT_S))
    try:
        url = str(client.apps_connections_open(app_token=token).get("url") or "")
    except SlackApiError as exc:
        error = str(exc.response.get("error"))
        fix = CONNECTIONS_FIX.get(
            error,
            "Basic Information -> App-Level Tokens -> generate one with scope connections:write and put it in "
            "SLEUTH_SLACK_APP_TOKEN",
        )
        return Check(
            "socket mode", "fail", f"apps.connections.open refused the app-level token ({error})", fix
        )
    except OSError as exc:
        return Check("socket mode", "fail", f"could not reach {settings.slack_api_url} ({type(exc).__name__})",
                     "check the network (or SLEUTH_SLACK_API_URL) from where `sleuth serve` runs")  # fmt: skip
    if not url.startswith(("wss://", "ws://")):
        return Check(
            "socket mode", "fail", "apps.connections.open gave no WebSocket URL", "check SLEUTH_SLACK_API_URL"
        )
    return Check("socket mode", "ok", "apps.connections.open accepted the app-level token")


def _public_url(settings: Settings) -> list[Check]:
    socket_mode = settings.slack_app_token is not None
    base = settings.public_url.rstrip("/")
    if socket_mode and not settings.oauth_sources:
        return [Check("public url", "ok", "not needed: Socket Mode and no sources to link with /sleuth link")]
    checks: list[Check] = []
    if urlsplit(base).scheme != "https":
        needs = "the OAuth providers' callback" if socket_mode else "Slack's request URLs"
        checks.append(
            Check("https", "warn", f"{base} is not https: {needs} must be https outside local testing")
        )
    with httpx.Client(timeout=HTTP_TIMEOUT_S) as http:
        try:
            health = http.get(f"{base}/healthz")
            healthy, reason = health.status_code == 200, f"HTTP {health.status_code}"
        except httpx.HTTPError as exc:
            healthy, reason = False, type(exc).__name__
        if not healthy:
            checks.append(
                Check(
                    "public url",
                    "fail",
                    f"{base}/healthz did not answer ({reason})",
                    "start `sleuth serve`, and make SLEUTH_PUBLIC_URL reach it (load balancer, proxy or tunnel)",
                )
            )
            return checks
        checks.append(Check("public url", "ok", f"{base}/healthz answers"))
        if not socket_mode and settings.slack_signing_secret is not None:
            checks.append(_url_verification(http, base, settings.slack_signing_secret.get_secret_value()))
    return checks


def _url_verification(http: httpx.Client, base: str, signing_secret: str) -> Check:
    """What Slack does when the request URL is saved: a signed challenge that must come back verbatim."""
    challenge = secrets.token_hex(16)
    body = json.dumps({"type": "url_verification", "token": "doctor", "challenge": challenge})
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(signing_secret).generate_signature(timestamp=timestamp, body=body)
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature,
    }
    url = f"{base}{EVENTS_PATH}"
    try:
        answer = http.post(url, content=body, headers=headers)
        ok = answer.status_code == 200 and challenge in answer.text
        reason = f"HTTP {answer.status_code}"
    except httpx.HTTPError as exc:
        ok, reason = False, type(exc).__name__
    if ok:
        return Check("request url", "ok", f"{url} answers Slack's url_verification challenge")
    return Check(
        "request url",
        "fail",
        f"{url} did not answer Slack's url_verification challenge ({reason})",
        "make sure the proxy forwards POST /slack/events to `sleuth serve` unchanged, and that this "
        "SLEUTH_SLACK_SIGNING_SECRET is the one `serve` runs with",
    )
