"""Socket Mode: Slack delivers over a WebSocket the app opens (`apps.connections.open` with the app-level token),
so there is no HTTP door; the same shape checks and ignore rules run here before Bolt parses an envelope.

Every envelope whose id can be read is acked, except one whose listener failed (Bolt's 5xx: Slack redelivers
it, and the job table keeps that to one answer): an envelope without a type or payload, or with a payload
slack_sdk cannot hold, is acked here (slack_sdk would skip it, or log a traceback, and leave it unacked, so
Slack delivers it three times more); a malformed or unwanted one is acked and dropped with one log line; one
Bolt refuses (4xx: unhandled, or a call Slack refused for it) is acked as well.

A connection that drops is reopened by slack_sdk's client, which pings every `PING_INTERVAL_S`: it calls a
connection stale once more than four intervals (counted in whole seconds) passed without a pong, and closed
after five pings that could not be sent, so a connection dropped silently or closed under it is replaced
within about 3 s (slack_sdk's default interval of 5 s took 20 s, Bolt's 10 s took 40 s).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.socket_mode.internals import run_bolt_app, send_response
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.intake import ignore_reason
from bot.request_guard import command_problem, envelope_problem

log = logging.getLogger(__name__)

PING_INTERVAL_S = 0.5  # a ping frame is a few bytes; the stale and failed-ping rules count in these


class GuardedSocketModeHandler(SocketModeHandler):
    """Bolt's Socket Mode handler, reading each envelope itself (`read_envelope`) so that none goes unacked."""

    def __init__(self, app: App, app_token: str, **kw: Any) -> None:
        super().__init__(app, app_token, **kw)
        self.client.socket_mode_request_listeners.clear()  # envelopes are read here instead
        self.client.message_listeners.append(self._on_message)

    def _on_message(self, client: BaseSocketModeClient, message: dict[str, Any], raw: str | None) -> None:
        envelope_id = message.get("envelope_id")
        if not isinstance(envelope_id, str) or not envelope_id:
            return  # hello, disconnect, or nothing that can be acked
        req = read_envelope(message)
        if req is None:
            log.info("delivery ignored", extra={"reason": "unreadable envelope"})
            client.send_socket_mode_response(SocketModeResponse(envelope_id=envelope_id))
            return
        self.handle(client, req)

    def handle(self, client: BaseSocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        reason = socket_problem(req)
        if reason:
            log.info("delivery ignored", extra={"reason": reason, "retry_num": req.retry_attempt})
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            return
        started = time.time()
        response = run_bolt_app(self.app, req)
        if 400 <= response.status < 500:  # refused, and a redelivery would be refused again
            log.info("delivery refused", extra={"status": response.status})
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            return
        send_response(client, req, response, started)  # acks a 200; a 5xx stays unacked, for a redelivery


def read_envelope(message: dict[str, Any]) -> SocketModeRequest | None:
    """The envelope as slack_sdk's request, or None when it has no type or payload it could hold."""
    kind, payload = message.get("type"), message.get("payload")
    if not isinstance(kind, str) or not isinstance(payload, (dict, str)):
        return None
    retry = message.get("retry_attempt")
    reason = message.get("retry_reason")
    return SocketModeRequest(
        type=kind,
        envelope_id=str(message["envelope_id"]),
        payload=payload,
        accepts_response_payload=bool(message.get("accepts_response_payload")),
        retry_attempt=retry if isinstance(retry, int) else None,
        retry_reason=reason if isinstance(reason, str) else None,
    )


def socket_problem(req: SocketModeRequest) -> str | None:
    """Why an envelope must not reach Bolt (malformed, or to be ignored), or None."""
    payload = req.payload
    if not isinstance(payload, dict):
        return "envelope payload is not an object"
    if req.type == "slash_commands":
        return command_problem(payload)
    return envelope_problem(payload) or ignore_reason(payload, team=None, now=time.time())


def socket_mode_handler(
    app: App, app_token: str, *, ping_interval_s: float = PING_INTERVAL_S
) -> SocketModeHandler:
    return GuardedSocketModeHandler(app, app_token, ping_interval=ping_interval_s)
