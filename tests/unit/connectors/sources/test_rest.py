"""RestClient status mapping, with an in-process transport (the integration tests cover real HTTP)."""

from __future__ import annotations

import httpx
import pytest

from connectors.base import AuthExpired, Forbidden, RateLimited
from connectors.sources.rest import RequestRejected, RestClient, RetryPolicy


def _client(status: int, headers: dict[str, str] | None = None) -> tuple[RestClient, list[float]]:
    waits: list[float] = []
    transport = httpx.MockTransport(lambda request: httpx.Response(status, headers=headers, json={}))
    http = httpx.Client(base_url="http://source.test", transport=transport)
    return RestClient(
        http, source="Test", retry=RetryPolicy(attempts=3, max_delay=10), sleep=waits.append
    ), waits


@pytest.mark.parametrize(
    ("status", "headers", "error"),
    [
        (401, None, AuthExpired),
        (403, None, Forbidden),
        (404, None, RequestRejected),
        (429, {"Retry-After": "3600"}, RateLimited),  # too long to sit out: raised at once
        (429, {"Retry-After": "1"}, RateLimited),  # retried, then the budget is spent
    ],
    ids=["401", "403", "404", "429-long", "429-budget"],
)
def test_status_codes_map_once(status: int, headers: dict[str, str] | None, error: type[Exception]) -> None:
    client, waits = _client(status, headers)
    with pytest.raises(error) as caught:
        client.get_json("/x")
    client.close()
    assert waits == ([1.0, 1.0] if headers == {"Retry-After": "1"} else [])
    if isinstance(caught.value, RateLimited):
        assert caught.value.retry_after is not None
