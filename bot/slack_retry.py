"""Which Slack Web API failures are transient, and how the WebClient retries them in-process.

Slack answers a transient fault as HTTP 429 (with `Retry-After`), HTTP 5xx, HTTP 200 with `fatal_error` or
`internal_error`, or not at all (timeout, reset connection). slack_sdk's retry handlers retry inside the call:

- `CappedRateLimitRetry`: every 429, waiting `Retry-After` (plus jitter) when that is short; a longer wait is
  not slept in a worker thread but raised, and the job is redelivered later (`retry_after`).
- `TransientErrorRetry`: 5xx, the transient `error` codes and connection failures, with exponential backoff,
  but only for methods that are safe to repeat. A `chat.postMessage` whose response was lost may have posted;
  repeating it blindly posts twice, so `bot.posting.post_once` retries posts itself, looking first.

What is still failing after these retries is `is_transient`: the job keeps its saved result and is tried again
from the job table (`bot.jobs.JobQueue.defer`), until a bounded time has passed.
"""

from __future__ import annotations

import json
import random
from http.client import HTTPException
from urllib.error import HTTPError, URLError

from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

RATE_LIMIT_RETRIES = 6
TRANSIENT_RETRIES = 3
MAX_INLINE_WAIT_S = (
    10.0  # a longer Retry-After is waited out by redelivering the job, not by a sleeping thread
)
TRANSIENT_HTTP = frozenset({500, 502, 503, 504})
TRANSIENT_ERRORS = frozenset(
    {"fatal_error", "internal_error", "service_unavailable", "request_timeout", "ratelimited"}
)
NOT_REPEATABLE = (  # a lost response may mean it happened: looked up, or finished, by the caller instead
    "chat.postMessage",
    "chat.postEphemeral",
    "chat.startStream",
    "chat.appendStream",
    "chat.stopStream",
    "chat.scheduleMessage",
)
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    URLError,
    ConnectionError,
    TimeoutError,
    HTTPException,
    SlackRequestError,
)

SLACK_FAILURES: tuple[type[BaseException], ...] = (SlackApiError, *CONNECTION_ERRORS, json.JSONDecodeError)


def _method(request: HttpRequest) -> str:
    return request.url.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]


def _retry_after(headers: dict[str, list[str]] | dict[str, str] | None) -> float | None:
    for name, value in (headers or {}).items():
        if name.lower() == "retry-after":
            raw = value[0] if isinstance(value, list) else value
            try:
                return max(0.0, float(raw))
            except (TypeError, ValueError):
                return None
    return None


class _Rule:
    """slack_sdk asks a handler `_can_retry` with keywords; each of ours decides from the request and what came
    back (`retries`), and leaves the waiting to slack_sdk's own `prepare_for_next_attempt`."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return self.retries(request, response, error)

    def retries(self, request: HttpRequest, response: HttpResponse | None, error: Exception | None) -> bool:
        raise NotImplementedError


class CappedRateLimitRetry(_Rule, RateLimitErrorRetryHandler):
    """slack_sdk's 429 handler, except that a wait longer than `max_wait_s` is left to the job table."""

    def __init__(self, max_retry_count: int = RATE_LIMIT_RETRIES, max_wait_s: float = MAX_INLINE_WAIT_S):
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_s = max_wait_s

    def retries(self, request: HttpRequest, response: HttpResponse | None, error: Exception | None) -> bool:
        if response is None or response.status_code != 429:
            return False
        wait = _retry_after(response.headers)
        return wait is None or wait <= self.max_wait_s


class TransientErrorRetry(_Rule, RetryHandler):
    """5xx, `fatal_error` & co. and connection failures, retried with backoff on methods safe to repeat."""

    def __init__(self, max_retry_count: int = TRANSIENT_RETRIES, backoff_factor: float = 0.25) -> None:
        super().__init__(max_retry_count, BackoffRetryIntervalCalculator(backoff_factor=backoff_factor))

    def retries(self, request: HttpRequest, response: HttpResponse | None, error: Exception | None) -> bool:
        if _method(request) in NOT_REPEATABLE:
            return False
        if response is not None:
            body = response.body or {}
            return response.status_code in TRANSIENT_HTTP or body.get("error") in TRANSIENT_ERRORS
        return isinstance(error, CONNECTION_ERRORS) and not isinstance(error, HTTPError)


def retry_handlers() -> list[RetryHandler]:
    """The handlers every Sleuth WebClient carries (the intake acknowledgement's client carries none)."""
    return [CappedRateLimitRetry(), TransientErrorRetry()]


def is_transient(exc: BaseException) -> bool:
    """A failure worth trying again later: rate limits, Slack's own errors, a lost connection or response."""
    if isinstance(exc, SlackApiError):
        response = exc.response
        return (
            response.status_code == 429
            or response.status_code >= 500
            or (response.get("error") in TRANSIENT_ERRORS)
        )
    return isinstance(exc, SLACK_FAILURES)  # a lost connection, or an HTML error page instead of JSON


def retry_after(exc: BaseException) -> float | None:
    """Slack's `Retry-After` on a rate-limited failure, in seconds; None when it named none."""
    if isinstance(exc, SlackApiError) and exc.response.status_code == 429:
        return _retry_after(dict(exc.response.headers or {}))
    return None


def backoff_s(attempt: int, *, base_s: float = 0.25, cap_s: float = 4.0) -> float:
    """Exponential backoff with full jitter for `post_once`'s own retries."""
    return random.uniform(0, min(cap_s, base_s * 2**attempt))


def error_code(exc: BaseException) -> str:
    """Slack's error code, or the exception's type: what a log line says about a failed call."""
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__
