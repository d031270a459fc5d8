"""The only code that speaks HTTP to Slack's Web API for the Slack source.

Slack answers most failures with HTTP 200 and `{"ok": false, "error": "<code>"}`; the codes become the typed
errors of `connectors.base` here, once: a dead or revoked token is `AuthExpired`, a missing scope `Forbidden`,
Slack's own transient errors (`internal_error`, `fatal_error`, `service_unavailable`, `request_timeout`) are
retried and then `SourceUnavailable`, and anything else about one conversation (`channel_not_found`,
`not_in_channel`, `thread_not_found`) is `SlackRejected`, which the connector turns into a `Failure`. HTTP
429 with `Retry-After` and 5xx are retried by `RestClient`.

Slack limits each method by tier (docs.slack.dev/apis/web-api/rate-limits): Tier 2 (20+/min) for
conversations.list and users.list, Tier 3 (50+/min) for conversations.history and conversations.replies,
Tier 4 (100+/min) for conversations.members. `TierPacer` spaces the calls of each tier so a large backfill
does not spend its time in 429s; a 429 that comes anyway is waited out by its `Retry-After`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Self

from pydantic import SecretStr

from connectors.base import AuthExpired, Forbidden, SourceUnavailable
from connectors.sources.rest import (
    HttpSettings,
    RequestRejected,
    RestClient,
    RetryPolicy,
    Sleep,
    bearer_session,
)
from connectors.sources.slack.config import SlackSourceConfig

log = logging.getLogger(__name__)

AUTH_ERRORS = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive"}
FORBIDDEN_ERRORS = {"missing_scope", "not_allowed_token_type", "no_permission", "ekm_access_denied"}
TRANSIENT_ERRORS = {"internal_error", "fatal_error", "service_unavailable", "request_timeout"}
TIERS = {
    "conversations.list": 2,
    "users.list": 2,
    "conversations.history": 3,
    "conversations.replies": 3,
    "conversations.members": 4,
    "auth.test": 4,
}
TIER4_PER_MINUTE = 100
Clock = Callable[[], float]


class SlackRejected(RequestRejected):
    """Slack refused one call with an error code about that call (`channel_not_found`, `not_in_channel`)."""

    def __init__(self, method: str, error: str) -> None:
        super().__init__(f"Slack refused {method}: {error}", 200)
        self.error = error


class TierPacer:
    """Spaces the calls of each rate-limit tier evenly: at most `per_minute` a minute per tier."""

    def __init__(
        self, per_minute: dict[int, int], *, clock: Clock = time.monotonic, sleep: Sleep = time.sleep
    ) -> None:
        self._interval = {tier: 60.0 / n for tier, n in per_minute.items()}
        self._next: dict[int, float] = {}
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()

    def wait(self, method: str) -> None:
        tier = TIERS.get(method, 3)
        with self._lock:
            now = self._clock()
            due = self._next.get(tier, now)
            self._next[tier] = max(due, now) + self._interval.get(tier, 0.0)
        if due > now:
            self._sleep(due - now)


class SlackClient:
    """Typed calls of the Web API methods the Slack source reads, each page by page."""

    def __init__(
        self, rest: RestClient, pacer: TierPacer, *, page_size: int = 200, sleep: Sleep = time.sleep
    ) -> None:
        self._rest, self._pacer, self._page_size, self._sleep = rest, pacer, page_size, sleep
        self._retry = RetryPolicy()

    @classmethod
    def from_config(
        cls,
        config: SlackSourceConfig,
        *,
        name: str,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        pace: bool = True,
        **_: Any,
    ) -> Self:
        settings = HttpSettings(config.base_url, config.timeout, {"Accept": "application/json"})
        session = bearer_session(settings, SecretStr(config.token.get_secret_value()))
        rest = RestClient(session, source="Slack", retry=retry, sleep=sleep)
        rates = {2: config.tier2_per_minute, 3: config.tier3_per_minute, 4: TIER4_PER_MINUTE} if pace else {}
        return cls(rest, TierPacer(rates, sleep=sleep), page_size=config.page_size, sleep=sleep)

    def close(self) -> None:
        self._rest.close()

    def call(self, method: str, **params: str | int) -> dict[str, Any]:
        """One call; Slack's error codes become typed errors, its transient ones are retried with backoff."""
        for attempt in range(self._retry.attempts):
            self._pacer.wait(method)
            body = self._rest.get_json(method, params=params)
            if not isinstance(body, dict):
                raise SourceUnavailable(f"Slack answered {method} with something that is not JSON")
            if body.get("ok"):
                return body
            error = str(body.get("error") or "unknown_error")
            if error not in TRANSIENT_ERRORS:
                raise _typed(method, error)
            log.warning(
                "slack call retried", extra={"method": method, "error": error, "attempt": attempt + 1}
            )
            self._sleep(min(self._retry.max_delay, self._retry.base_delay * 2**attempt))
        raise SourceUnavailable("Slack is not answering properly; try again later")

    def pages(self, method: str, key: str, **params: str | int) -> Iterator[list[dict[str, Any]]]:
        """Every page of a cursor-paginated method, following `response_metadata.next_cursor`."""
        cursor = ""
        while True:
            body = self.call(
                method, limit=self._page_size, **params, **({"cursor": cursor} if cursor else {})
            )
            items = body.get(key)
            yield [item for item in items if isinstance(item, dict | str)] if isinstance(items, list) else []
            cursor = str((body.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                return

    def workspace_url(self) -> tuple[str, str]:
        """The workspace's URL (permalinks start with it) and the bot's own user id."""
        body = self.call("auth.test")
        return str(body.get("url") or "https://slack.com/"), str(body.get("user_id") or "")

    def channels(self, types: str) -> list[dict[str, Any]]:
        return [c for page in self.pages("conversations.list", "channels", types=types) for c in page]

    def users(self) -> list[dict[str, Any]]:
        return [u for page in self.pages("users.list", "members") for u in page]

    def members(self, channel: str) -> list[str]:
        return [
            str(m) for page in self.pages("conversations.members", "members", channel=channel) for m in page
        ]

    def history(self, channel: str, *, oldest: float | None) -> Iterator[list[dict[str, Any]]]:
        """Top-level messages newest first, page by page, after `oldest` (a Unix time) when given."""
        window: dict[str, str | int] = {"oldest": f"{oldest:.6f}"} if oldest is not None else {}
        yield from self.pages("conversations.history", "messages", channel=channel, **window)

    def replies(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """A whole thread: its parent, then every reply, oldest first."""
        return [
            m
            for page in self.pages("conversations.replies", "messages", channel=channel, ts=ts)
            for m in page
        ]


def _typed(method: str, error: str) -> Exception:
    if error in AUTH_ERRORS:
        return AuthExpired(f"Slack rejected the source's token ({error}); install the app again or renew it")
    if error in FORBIDDEN_ERRORS:
        return Forbidden(
            f"Slack refused {method} ({error}); add the scopes docs/sources.md lists and reinstall"
        )
    return SlackRejected(method, error)
