"""The door of `POST /slack/events`: a request is verified before anything parses it, then its shape is checked
before Bolt sees it. Hostile or broken requests get a status and one log line, never a 500 or a traceback.

- 401: no or malformed signature headers (non-ASCII, a timestamp that is not a plain number), a timestamp more
  than five minutes off, or a signature that does not match the raw body (HMAC-SHA256, Slack's v0 scheme).
- 413: a body larger than anything Slack sends.
- 400: a signed body that is not what Slack sends: not UTF-8, not JSON / form, or JSON whose fields Bolt and the
  listeners read have the wrong type (`envelope_problem`, also used for Socket Mode envelopes).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, ValidationError

MAX_BODY_BYTES = 1_000_000
MAX_CLOCK_SKEW_S = 300
COMMAND_FIELDS = ("command", "team_id", "user_id", "channel_id", "trigger_id")


class Rejected(Exception):
    """A request refused at the door: `status` to answer, `reason` for the one log line."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _Authorization(_Shape):
    team_id: str | None = None
    user_id: str | None = None
    enterprise_id: str | None = None


class _Event(_Shape):
    type: str
    subtype: str | None = None
    channel: str | None = None
    ts: str | None = None
    thread_ts: str | None = None
    event_ts: str | None = None
    text: str | None = None
    bot_id: str | None = None
    channel_type: str | None = None
    deleted_ts: str | None = None
    tab: str | None = None
    team: str | None = None
    message: dict[str, Any] | None = None
    previous_message: dict[str, Any] | None = None
    view: dict[str, Any] | None = None
    assistant_thread: dict[str, Any] | None = None


class _EventCallback(_Shape):
    type: str
    team_id: str
    event_id: str
    event_time: int
    api_app_id: str | None = None
    enterprise_id: str | None = None
    authorizations: list[_Authorization] | None = None
    event: _Event


class _Ref(_Shape):
    id: str


class _Interactive(_Shape):
    type: str
    user: _Ref | None = None
    team: _Ref | None = None
    channel: _Ref | None = None
    enterprise: _Ref | None = None
    container: dict[str, Any] | None = None
    actions: list[dict[str, Any]] | None = None
    view: dict[str, Any] | None = None
    message: dict[str, Any] | None = None
    response_url: str | None = None
    trigger_id: str | None = None


class _Message(_Shape):
    ts: str
    text: str | None = None
    thread_ts: str | None = None
    bot_id: str | None = None
    subtype: str | None = None


def _header(headers: Mapping[str, str], name: str) -> str:
    return headers.get(name) or headers.get(name.title()) or ""


def verify_signature(
    secret: str, headers: Mapping[str, str], body: bytes, *, now: float | None = None
) -> None:
    """Raises `Rejected(401)` unless `body` carries a valid, fresh Slack v0 signature."""
    timestamp = _header(headers, "x-slack-request-timestamp")
    signature = _header(headers, "x-slack-signature")
    if not timestamp or not signature:
        raise Rejected(401, "unsigned request")
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        raise Rejected(401, "malformed signature timestamp")
    if abs((time.time() if now is None else now) - int(timestamp)) > MAX_CLOCK_SKEW_S:
        raise Rejected(401, "stale signature timestamp")
    if not signature.isascii():
        raise Rejected(401, "malformed signature")
    base = b"v0:" + timestamp.encode() + b":" + body
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise Rejected(401, "signature mismatch")


def parse_body(content_type: str, body: bytes) -> dict[str, Any]:
    """The payload as Bolt will parse it; raises `Rejected(400)` for anything Slack would not send."""
    if len(body) > MAX_BODY_BYTES:
        raise Rejected(413, "body too large")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected(400, "body is not UTF-8") from exc
    try:
        if content_type.startswith("application/json"):
            payload = json.loads(text)
        else:
            form = dict(parse_qsl(text, keep_blank_values=True))
            if "payload" in form:
                payload = json.loads(form["payload"])
            elif "command" in form:
                missing = [name for name in COMMAND_FIELDS if not form.get(name)]
                if missing:
                    raise Rejected(400, "slash command without " + ",".join(missing))
                return form
            elif form.get("ssl_check"):
                return form
            else:
                raise Rejected(400, "form body without payload or command")
    except (json.JSONDecodeError, RecursionError) as exc:
        raise Rejected(400, "body is not valid JSON") from exc
    if not isinstance(payload, dict):
        raise Rejected(400, "payload is not an object")
    problem = envelope_problem(payload)
    if problem:
        raise Rejected(400, problem)
    return payload


def envelope_problem(payload: dict[str, Any]) -> str | None:
    """Why a parsed payload is not one Slack sends (fields that Bolt and the listeners read), or None."""
    kind = payload.get("type")
    if not isinstance(kind, str):
        return "payload without a type"
    try:
        if kind == "event_callback":
            envelope = _EventCallback.model_validate(payload)
            return _event_problem(envelope.event)
        if kind == "url_verification":
            return None if isinstance(payload.get("challenge"), str) else "url_verification without challenge"
        if kind == "app_rate_limited":
            return None
        if kind in ("block_actions", "view_submission", "view_closed", "shortcut", "message_action"):
            _Interactive.model_validate(payload)
            return None
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"malformed {kind}: {'.'.join(str(p) for p in first['loc'])}"
    return f"unexpected payload type {kind[:40]!r}"


def _event_problem(event: _Event) -> str | None:
    if event.type in ("message", "app_mention") and (event.channel is None or (event.ts is None)):
        return "message event without channel or ts"
    if event.subtype == "message_changed":
        if event.message is None:
            return "message_changed without message"
        _Message.model_validate(event.message)
    if event.subtype == "message_deleted" and event.deleted_ts is None:
        return "message_deleted without deleted_ts"
    return None
