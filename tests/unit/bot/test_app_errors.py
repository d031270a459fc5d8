"""The Bolt error boundary tells the person who clicked, and nobody for a failed event."""

from __future__ import annotations

from typing import Any

import pytest
from slack_bolt import BoltContext

from bot.app import ERROR_REPLY, handle_error


class RecordingClient:
    proxy, ssl = None, None  # read by BoltContext.respond

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def conversations_open(self, **kw: Any) -> dict[str, Any]:
        self.calls.append(("conversations.open", kw))
        return {"channel": {"id": "D1"}}

    def chat_postMessage(self, **kw: Any) -> dict[str, Any]:
        self.calls.append(("chat.postMessage", kw))
        return {"ts": "1.0"}


EVENT = {"type": "event_callback", "event": {"type": "message", "user": "U1", "channel": "C1"}}
HOME_CLICK = {"type": "block_actions", "user": {"id": "U1"}, "view": {"type": "home", "id": "V1"}}


@pytest.mark.parametrize(
    ("body", "dm"), [(EVENT, False), (HOME_CLICK, True)], ids=["failed-event", "app-home-click"]
)
def test_only_a_click_without_response_url_gets_a_dm(
    body: dict[str, Any], dm: bool, caplog: pytest.LogCaptureFixture
) -> None:
    client = RecordingClient()
    context = BoltContext({"user_id": "U1", "client": client})

    handle_error(RuntimeError("boom"), body, context)

    expected = [
        ("conversations.open", {"users": "U1"}),
        ("chat.postMessage", {"channel": "D1", "text": ERROR_REPLY}),
    ]
    assert client.calls == (expected if dm else [])
    assert "listener failed" in caplog.text
