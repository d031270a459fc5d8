"""Which Slack failures are transient, and which methods the WebClient may repeat on its own."""

from __future__ import annotations

from urllib.error import URLError

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web import SlackResponse

from bot.slack_retry import CappedRateLimitRetry, TransientErrorRetry, is_transient, retry_after


def _api_error(status: int, error: str, headers: dict[str, str] | None = None) -> SlackApiError:
    response = SlackResponse(client=None, http_verb="POST", api_url="http://127.0.0.1:9/api/chat.update",
                             req_args={}, data={"ok": False, "error": error}, headers=headers or {},
                             status_code=status)  # fmt: skip
    return SlackApiError("failed", response)


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (_api_error(429, "ratelimited"), True),
        (_api_error(500, "internal_error"), True),
        (_api_error(503, "service_unavailable"), True),
        (_api_error(200, "fatal_error"), True),
        (_api_error(200, "channel_not_found"), False),
        (_api_error(200, "invalid_blocks"), False),
        (URLError("timed out"), True),
        (TimeoutError(), True),
        (ValueError("bug"), False),
    ],
    ids=["429", "500", "503", "fatal_error", "not-found", "invalid-blocks", "urlerror", "timeout", "bug"],
)
def test_is_transient(exc: BaseException, transient: bool) -> None:
    assert is_transient(exc) is transient


def test_retry_after_is_read_from_a_429() -> None:
    assert retry_after(_api_error(429, "ratelimited", {"Retry-After": "45"})) == 45.0
    assert retry_after(_api_error(500, "internal_error")) is None


def _request(method: str) -> HttpRequest:
    return HttpRequest(method="POST", url=f"http://127.0.0.1:9/api/{method}", headers={})


@pytest.mark.parametrize(
    ("method", "status", "body", "retried"),
    [
        ("chat.update", 500, {}, True),
        ("chat.update", 200, {"ok": False, "error": "fatal_error"}, True),
        ("chat.update", 200, {"ok": False, "error": "invalid_blocks"}, False),
        ("chat.postMessage", 500, {}, False),  # may have posted: post_once looks first
        ("assistant.threads.setStatus", 503, {}, True),
    ],
)
def test_transient_errors_are_retried_only_where_repeating_is_safe(
    method: str, status: int, body: dict, retried: bool
) -> None:
    response = HttpResponse(status_code=status, headers={}, body=body)
    assert (
        TransientErrorRetry().can_retry(state=RetryState(), request=_request(method), response=response)
        is retried
    )


def test_a_long_retry_after_is_left_to_the_job_table() -> None:
    handler = CappedRateLimitRetry(max_wait_s=10)
    short = HttpResponse(status_code=429, headers={"Retry-After": "1"}, body={})
    long = HttpResponse(status_code=429, headers={"Retry-After": "30"}, body={})
    assert handler.can_retry(state=RetryState(), request=_request("chat.postMessage"), response=short)
    assert not handler.can_retry(state=RetryState(), request=_request("chat.postMessage"), response=long)
