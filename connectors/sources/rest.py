"""Shared HTTP plumbing for the source clients: one HTTP session per connector, auth, retries, status mapping.

Each source's `client.py` wraps a `RestClient`; nothing else in a connector speaks HTTP. Errors (the tree
lives in `connectors.base`): `ConnectorError` > `AuthExpired` (401), `Forbidden` (403), `RateLimited` (429
past the retry budget or a wait too long to sit out), `SourceUnavailable` (5xx or connection errors past the
budget), and here `RequestRejected` (any other 4xx, e.g. a 404 for an item deleted mid-run; callers turn it
into a `Failure`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar, Protocol, Self, TypeVar

import httpx
from authlib.common.errors import AuthlibBaseError
from pydantic import BaseModel, SecretStr, ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from connectors.base import (
    PUBLIC,
    AuthExpired,
    ConnectorError,
    Forbidden,
    LinkedIdentity,
    RateLimited,
    SourceUnavailable,
    account_principal,
    group_principal,
    user_principal,
)

try:  # authlib >= 1.7 builds its OAuth2Client on httpx2, whose errors are not httpx's
    import httpx2

    _TRANSPORT_ERRORS: tuple[type[Exception], ...] = (httpx.TransportError, httpx2.TransportError)
except ImportError:  # pragma: no cover - depends on the installed authlib
    _TRANSPORT_ERRORS = (httpx.TransportError,)

log = logging.getLogger(__name__)

Item = TypeVar("Item")

Sleep = Callable[[float], None]
Params = Mapping[str, str | int | float | bool | list[str]]


class RequestRejected(ConnectorError):
    """The source refused one request (4xx other than 401/403/429): bad input or an item that is gone."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class TokenStore(Protocol):  # where OAuth tokens live between runs; `save` runs on every refresh
    def load(self, key: str) -> dict[str, Any] | None: ...

    def save(self, key: str, token: dict[str, Any]) -> None: ...


class OAuthSettings(BaseModel):
    client_id: str
    client_secret: SecretStr
    token_url: str


class ResponseLike(Protocol):  # httpx.Response or httpx2.Response
    status_code: int

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def links(self) -> dict[str | None, dict[str, str]]: ...

    @property
    def content(self) -> bytes: ...

    def json(self) -> Any: ...


class HttpSession(Protocol):  # an httpx.Client, or authlib's OAuth2Client (an httpx2 client)
    def request(self, method: str, url: str, *, params: Any = None, json: Any = None) -> Any: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # tries per request, the first included
    base_delay: float = 0.5  # exponential backoff for 5xx/connection errors: 0.5, 1, 2, ...
    max_delay: float = 30.0  # longest single wait; a longer Retry-After raises RateLimited at once


class _Retryable(Exception):
    def __init__(self, kind: str, status: int | None, retry_after: float | None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `Retry-After` (seconds or HTTP date) or GitHub's `x-ratelimit-reset` (epoch)."""
    current = time.time() if now is None else now
    value = headers.get("retry-after")
    if value is not None:
        if value.strip().isdigit():
            return float(value.strip())
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - current)
        except (TypeError, ValueError):
            return None
    reset = headers.get("x-ratelimit-reset")
    if reset is not None and headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return max(0.0, float(reset) - current)
    return None


SECONDARY_LIMIT_WAIT_S = 60.0  # GitHub: without Retry-After, wait at least a minute after a secondary limit


def _rate_limited(response: ResponseLike) -> bool:
    if response.status_code == 429:
        return True
    headers = response.headers
    limited = "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0"
    return response.status_code == 403 and (limited or _secondary_limit(response))


def _secondary_limit(response: ResponseLike) -> bool:
    """GitHub's secondary rate limits answer 403 (or 429) and say so only in the message."""
    try:
        body = response.json()
    except ValueError:
        return False
    message = body.get("message") if isinstance(body, dict) else None
    return isinstance(message, str) and "secondary rate limit" in message.lower()


class RestClient:
    """Sends requests through one session with retries on 429/5xx/connection errors and typed failures."""

    def __init__(
        self,
        http: HttpSession,
        *,
        source: str,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        throttled: Callable[[ResponseLike], bool] | None = None,
    ) -> None:
        self._http = http
        self._source = source
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._throttled = (
            throttled  # a source's own way of saying "slow down" (Google: 403 rateLimitExceeded)
        )

    def close(self) -> None:
        self._http.close()

    def get_json(self, url: str, params: Params | None = None) -> Any:
        return self.request("GET", url, params=params).json()

    def request(
        self, method: str, url: str, *, params: Params | None = None, body: Any = None
    ) -> ResponseLike:
        retrying = Retrying(
            stop=stop_after_attempt(self._retry.attempts),
            wait=self._wait,
            retry=retry_if_exception_type(_Retryable),
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            response: ResponseLike = retrying(self._send_once, method, url, params, body)
        except _Retryable as exc:
            raise self._exhausted(exc) from None
        return response

    def _send_once(self, method: str, url: str, params: Params | None, body: Any) -> ResponseLike:
        try:
            response: ResponseLike = self._http.request(method, url, params=params, json=body)
        except _TRANSPORT_ERRORS as exc:
            raise _Retryable("connection", None, None) from exc
        except AuthlibBaseError as exc:  # the OAuth refresh failed: the grant is gone
            raise AuthExpired(
                f"{self._source} would not renew the OAuth token; link the account again"
            ) from exc
        status = response.status_code
        if _rate_limited(response) or (self._throttled is not None and self._throttled(response)):
            wait = retry_after_seconds(response.headers)
            if wait is None and _secondary_limit(response):
                wait = SECONDARY_LIMIT_WAIT_S
            if wait is not None and wait > self._retry.max_delay:
                raise RateLimited(f"{self._source} asks us to wait {wait:.0f}s; try the sync later", wait)
            raise _Retryable("rate_limited", status, wait)
        if status >= 500:
            raise _Retryable("server", status, retry_after_seconds(response.headers))
        if status == 401:
            raise AuthExpired(f"{self._source} rejected the credentials; renew the token or link again")
        if status == 403:
            raise Forbidden(f"{self._source} refused access; check the account's permissions")
        if status >= 400:
            raise RequestRejected(f"{self._source} rejected a request (HTTP {status})", status)
        return response

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return min(exc.retry_after, self._retry.max_delay)
        return float(min(self._retry.max_delay, self._retry.base_delay * 2 ** (state.attempt_number - 1)))

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        reason, status = (exc.kind, exc.status) if isinstance(exc, _Retryable) else ("unknown", None)
        extra = {"source": self._source, "reason": reason, "status": status, "attempt": state.attempt_number}
        log.warning("request retried", extra=extra)

    def _exhausted(self, exc: _Retryable) -> ConnectorError:
        if exc.kind == "rate_limited":
            return RateLimited(f"{self._source} kept rate-limiting us; try the sync later", exc.retry_after)
        return SourceUnavailable(f"{self._source} is not answering properly; try again later")


def next_link(response: ResponseLike) -> str | None:
    """The `rel="next"` URL of a `Link` header, if any."""
    return (response.links.get("next") or {}).get("url")


class _Bearer(httpx.Auth):
    def __init__(self, token: SecretStr) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["Authorization"] = f"Bearer {self._token.get_secret_value()}"
        yield request


@dataclass(frozen=True)
class HttpSettings:
    base_url: str
    timeout: float = 30.0
    headers: Mapping[str, str] | None = None


def plain_session(settings: HttpSettings, auth: httpx.Auth | None = None) -> httpx.Client:
    headers = dict(settings.headers or {})
    return httpx.Client(base_url=settings.base_url, auth=auth, timeout=settings.timeout, headers=headers)


def bearer_session(settings: HttpSettings, token: SecretStr) -> httpx.Client:
    return plain_session(settings, _Bearer(token))


def oauth_session(settings: HttpSettings, oauth: OAuthSettings, key: str, store: TokenStore) -> HttpSession:
    """authlib's OAuth2Client: refreshes an expired token itself and hands the new one to `store.save`."""
    from authlib.integrations.httpx_client import OAuth2Client

    token = store.load(key)
    if token is None:
        raise AuthExpired("no OAuth token is stored for this source; link the account first")

    def update_token(new: dict[str, Any], refresh_token: str | None = None, **_: Any) -> None:
        store.save(key, dict(new))

    session: HttpSession = OAuth2Client(
        client_id=oauth.client_id,
        client_secret=oauth.client_secret.get_secret_value(),
        token=token,
        token_endpoint=oauth.token_url,
        update_token=update_token,
        base_url=settings.base_url,
        timeout=settings.timeout,
        headers=dict(settings.headers or {}),
    )
    return session


def build_session(
    settings: HttpSettings,
    *,
    basic: tuple[str, SecretStr] | None = None,
    bearer: SecretStr | None = None,
    oauth: OAuthSettings | None = None,
    token_key: str = "",
    token_store: TokenStore | None = None,
) -> HttpSession:
    """Picks the configured auth: OAuth (with a token store) first, then an API token."""
    if oauth is not None:
        if token_store is None:
            raise AuthExpired("OAuth is configured but no token store was given; link the account first")
        return oauth_session(settings, oauth, token_key, token_store)
    if basic is not None:  # Atlassian API tokens: HTTP Basic with the account's email and the token
        return plain_session(settings, httpx.BasicAuth(basic[0], basic[1].get_secret_value()))
    if bearer is not None:
        return bearer_session(settings, bearer)
    return plain_session(settings)


@dataclass
class Watermark:
    """An incremental position for listings ordered by modification time: the newest time processed and the
    ids processed at exactly that time (listings filter with `>=`, so the boundary comes back next run).

    Sources whose search index lags (Jira) re-read an `overlap` window before the mark; `recent` remembers
    which version of each item inside that window was already taken, so the window costs no duplicates."""

    at: datetime | None = None
    ids: set[str] = field(default_factory=set)
    recent: dict[str, str] = field(default_factory=dict)  # item id -> its modification time (ISO) taken

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> Watermark:
        if not data or not data.get("updated"):
            return cls()
        recent = {str(k): str(v) for k, v in (data.get("recent") or {}).items()}
        return cls(
            datetime.fromisoformat(str(data["updated"])), {str(i) for i in data.get("ids") or []}, recent
        )

    def dump(self) -> dict[str, Any]:
        found: dict[str, Any] = {"updated": self.at.isoformat() if self.at else None, "ids": sorted(self.ids)}
        return found | ({"recent": dict(sorted(self.recent.items()))} if self.recent else {})

    def seen(self, updated: datetime, item_id: str) -> bool:
        return self.at is not None and (updated < self.at or (updated == self.at and item_id in self.ids))

    def advance(self, updated: datetime, item_id: str) -> None:
        if self.at is None or updated > self.at:
            self.at, self.ids = updated, {item_id}
        elif updated == self.at:
            self.ids.add(item_id)

    def since(self, overlap: timedelta) -> datetime | None:
        """Where the next listing starts: the mark less the overlap window."""
        return None if self.at is None else self.at - overlap

    def seen_within(self, updated: datetime, item_id: str, overlap: timedelta) -> bool:
        """Taken already: older than the window, or this very version of it taken inside the window."""
        if self.at is None:
            return False
        return updated < self.at - overlap or self.recent.get(item_id) == updated.isoformat()

    def take(self, updated: datetime, item_id: str, overlap: timedelta) -> None:
        self.advance(updated, item_id)
        self.recent[item_id] = updated.isoformat()
        assert self.at is not None
        start = self.at - overlap
        self.recent = {k: v for k, v in self.recent.items() if datetime.fromisoformat(v) >= start}


class SourceClient:
    """What every source's client shares: built from its config (auth picked once), a RestClient, where linked
    users' own tokens are used, and closing the connection pool. Subclasses hold the source's calls."""

    label: ClassVar[str]  # "Jira": in error messages
    headers: ClassVar[dict[str, str]] = {"Accept": "application/json"}

    def __init__(self, rest: RestClient, *, user_api_url: str, timeout: float = 30.0) -> None:
        self._rest = rest
        self._user_api_url = user_api_url
        self._timeout = timeout

    @classmethod
    def from_config(
        cls,
        config: Any,
        *,
        name: str,
        token_store: TokenStore | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
    ) -> Self:
        settings = HttpSettings(config.base_url, config.timeout, cls.headers)
        session = build_session(
            settings,
            **cls.credentials(config),
            oauth=config.oauth,
            token_key=f"{cls.label.lower()}:{name}",
            token_store=token_store,
        )
        rest = RestClient(session, source=cls.label, retry=retry, sleep=sleep)
        return cls(rest, user_api_url=config.user_api_url or config.base_url, timeout=config.timeout)

    @staticmethod
    def credentials(config: Any) -> dict[str, Any]:
        """API-token auth (Atlassian: HTTP Basic with the account's email); GitHub overrides with a bearer."""
        return {"basic": (config.email, config.api_token) if config.email and config.api_token else None}

    def close(self) -> None:
        self._rest.close()

    def _as_user(
        self, access_token: str, *, timeout: float | None = None, retry: RetryPolicy | None = None
    ) -> RestClient:
        """A short-lived client that asks with a linked user's own token (the caller closes it)."""
        settings = HttpSettings(self._user_api_url, timeout or self._timeout, self.headers)
        return RestClient(bearer_session(settings, SecretStr(access_token)), source=self.label, retry=retry)

    def opens_as(self, access_token: str, url: str, *, timeout_s: float) -> bool:
        """Whether the linked user may open the item at `url` now, asked once with their own token under
        `timeout_s`: True on 2xx, False when the source refuses or does not find it (403, 404, 410). Raises
        `ConnectorError` when it cannot tell (401, 429, 5xx, a timeout)."""
        rest = self._as_user(access_token, timeout=timeout_s, retry=RetryPolicy(attempts=1))
        try:
            rest.request("GET", url)
            return True
        except Forbidden:
            return False
        except RequestRejected as exc:
            if exc.status in (404, 410):
                return False
            raise
        finally:
            rest.close()


class OwnsClient:
    """For connectors that hold a client: built from the config unless one is given (tests), closed with it.

    Also what the REST connectors share about the asker: public, their account, their groups on this source,
    and what the source says about them when they linked with their own token (`_token_principals`)."""

    kind: ClassVar[str]
    auth_kind: ClassVar[str] = "api_token"  # or "oauth2" when `oauth` is configured
    config_model: ClassVar[type[BaseModel]]
    client_class: ClassVar[Any]  # a SourceClient subclass
    _client: Any

    def __init__(
        self, config: Any, *, name: str, client: Any = None, token_store: TokenStore | None = None
    ) -> None:
        self.name = name
        self._config = config
        self._client = client or self.client_class.from_config(config, name=name, token_store=token_store)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def principals(self, identity: LinkedIdentity) -> set[str]:
        found = {PUBLIC, account_principal(self.name, identity.account)}
        found |= {user_principal(identity.email)} if identity.email else set()
        found |= {group_principal(self.name, group) for group in identity.groups}
        if identity.access_token:
            found |= self._token_principals(identity.access_token)
        return found

    def _token_principals(self, access_token: str) -> set[str]:
        """What the source says about the user that `access_token` belongs to."""
        raise NotImplementedError


def bad_fields(exc: ValidationError) -> str:
    """Names the bad fields without echoing their values (they may hold document text)."""
    return ", ".join(sorted({".".join(str(p) for p in err["loc"]) or "item" for err in exc.errors()}))


def counted(items: Iterable[Item | None], counts: Counter[str]) -> Iterator[Item]:
    """The items that are not None (already seen), each counted by kind for the pull's closing log line."""
    for item in items:
        if item is not None:
            counts[type(item).__name__] += 1
            yield item
