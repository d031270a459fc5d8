"""Socket Mode: Slack delivers over a WebSocket the app opens (`apps.connections.open` with the app-level token),
so there is no HTTP door; the same shape checks and ignore rules run here before Bolt parses an envelope, and
what fails them is acked (so Slack does not redeliver it) and dropped with one log line.

A connection that drops is reopened by slack_sdk's client; an envelope whose ack was lost is redelivered by
Slack with `retry_attempt` set, and the job table keeps that to one answer.
"""

from __future__ import annotations

import logging
import time

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.intake import ignore_reason
from bot.request_guard import envelope_problem

log = logging.getLogger(__name__)

PING_INTERVAL_S = 5.0  # how soon a silently dropped connection is noticed and replaced


class GuardedSocketModeHandler(SocketModeHandler):
    def handle(self, client: BaseSocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        reason = socket_problem(req)
        if reason:
            log.info("delivery ignored", extra={"reason": reason, "retry_num": req.retry_attempt})
            client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            return
        super().handle(client, req)


def socket_problem(req: SocketModeRequest) -> str | None:
    """Why an envelope must not reach Bolt (malformed, or to be ignored), or None."""
    payload = req.payload
    if not isinstance(payload, dict):
        return "envelope payload is not an object"
    if req.type == "slash_commands":
        return None
    return envelope_problem(payload) or ignore_reason(payload, team=None, now=time.time())


def socket_mode_handler(
    app: App, app_token: str, *, ping_interval_s: float = PING_INTERVAL_S
) -> SocketModeHandler:
    return GuardedSocketModeHandler(app, app_token, ping_interval=ping_interval_s)
