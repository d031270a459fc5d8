"""The door of `POST /slack/events`: a request is verified before anything parses it, then its shape is checked
before Bolt sees it. Hostile or broken requests get a status and one log line, never a 500 or a traceback.

- 401: no or malformed signature headers (non-ASCII, a timestamp that is not a plain number), a timestamp more
  than five minutes off, or a signature that does not match the raw body (HMAC-SHA256, Slack's v0 scheme).
- 413: a body larger than anything Slack sends; 415: a content type Slack never sends (JSON or a form only).
- 400: a signed body that is not what Slack sends: not UTF-8, not JSON / form, or JSON whose fields Bolt and the
  listeners read have the wrong type or are missing (`envelope_problem`, also used for Socket Mode envelopes).

The payload checked here is the one Bolt gets (`bolt_request`): Bolt's own parser reads a body by sniffing it
(JSON when it starts with "{", a form's `payload` whenever the word occurs anywhere, so `/sleuth ask ... payload`
became an empty request), which could differ from what was checked.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from slack_bolt import BoltRequest

MAX_BODY_BYTES = 1_000_000
MAX_CLOCK_SKEW_S = 300
COMMAND_FIELDS = ("command", "team_id", "user_id", "channel_id", "trigger_id")
JSON_TYPE = "application/json"
FORM_TYPE = "application/x-www-form-urlencoded"
INTERACTIVE = ("block_actions", "view_submission", "view_closed", "shortcut", "message_action")


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


class _Action(_Shape):
    action_id: str
    block_id: str | None = None
    type: str | None = None
    value: str | None = None
    action_ts: str | None = None


class _StateValue(_Shape):
    type: str | None = None
    value: str | None = None


class _State(_Shape):
    values: dict[str, dict[str, _StateValue]]


class _View(_Shape):
    id: str | None = None
    type: str | None = None
    callback_id: str | None = None
    private_metadata: str | None = None
    state: _State | None = None
    blocks: list[dict[str, Any]] | None = None


class _Interactive(_Shape):
    type: str
    user: _Ref
    team: _Ref | None = None
    channel: _Ref | None = None
    enterprise: _Ref | None = None
    container: dict[str, Any] | None = None
    view: _View | None = None
    message: dict[str, Any] | None = None
    response_url: str | None = None
    trigger_id: str | None = None
    callback_id: str | None = None


class _BlockActions(_Interactive):
    actions: list[_Action] = Field(min_length=1)


class _ViewPayload(_Interactive):
    view: _View


class _Shortcut(_Interactive):
    callback_id: str


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
    """The payload Bolt is to get (`bolt_request`); raises `Rejected` (4xx) for anything Slack would not send."""
    if len(body) > MAX_BODY_BYTES:
        raise Rejected(413, "body too large")
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in (JSON_TYPE, FORM_TYPE):
        raise Rejected(415, "content type is neither JSON nor a form")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected(400, "body is not UTF-8") from exc
    try:
        payload, plain_form = (json.loads(text), False) if media == JSON_TYPE else _form_payload(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise Rejected(400, "body is not valid JSON") from exc
    if plain_form:
        return payload  # a slash command or an SSL check, checked in _form_payload
    if not isinstance(payload, dict):
        raise Rejected(400, "payload is not an object")
    problem = envelope_problem(payload)
    if problem:
        raise Rejected(400, problem)
    return payload


def _form_payload(text: str) -> tuple[Any, bool]:
    """A form's `payload` (interactivity, as JSON), or the form itself (a slash command, an SSL check: True)."""
    pairs = parse_qsl(text, keep_blank_values=True)
    form = dict(pairs)
    if len(form) != len(pairs):
        raise Rejected(400, "form with a repeated field")
    if "payload" in form:
        if len(form) != 1:
            raise Rejected(400, "payload form with other fields")
        return json.loads(form["payload"]), False
    if "command" in form:
        problem = command_problem(form)
        if problem:
            raise Rejected(400, problem)
        return form, True
    if form.get("ssl_check"):
        return form, True
    raise Rejected(400, "form body without payload or command")


def command_problem(form: dict[str, Any]) -> str | None:
    """Why a slash command's fields are not what Slack sends (a form over HTTP, JSON over Socket Mode), or None."""
    missing = [name for name in COMMAND_FIELDS if not (isinstance(form.get(name), str) and form[name])]
    if missing:
        return "slash command without " + ",".join(missing)
    if not form["command"].startswith("/"):
        return "slash command that is not a command"
    odd = [name for name in ("text", "response_url") if name in form and not isinstance(form[name], str)]
    return "slash command with a malformed " + ",".join(odd) if odd else None


def bolt_request(
    request_body: str, headers: Mapping[str, str], query: str, payload: dict[str, Any]
) -> BoltRequest:
    """The request as Bolt sees it, carrying the payload the door checked (and the raw body, for Bolt's own
    signature check): built as from a parsed dict, then marked as the HTTP request it is."""
    bolt = BoltRequest(body=payload, query=query, headers=dict(headers), mode="socket_mode")
    bolt.raw_body, bolt.mode = request_body, "http"
    return bolt


def envelope_problem(payload: dict[str, Any]) -> str | None:
    """Why a parsed payload is not one Slack sends (fields that Bolt and the listeners read), or None."""
    kind = payload.get("type")
    if not isinstance(kind, str):
        return "payload without a type"
    try:
        if kind == "event_callback":
            envelope = _EventCallback.model_validate(payload)
            return _event_problem(envelope.event, payload["event"])
        if kind == "url_verification":
            return None if isinstance(payload.get("challenge"), str) else "url_verification without challenge"
        if kind == "app_rate_limited":
            return None
        if kind in INTERACTIVE:
            _INTERACTIVE_SHAPES.get(kind, _Interactive).model_validate(payload)
            return None
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"malformed {kind}: {'.'.join(str(p) for p in first['loc'])}"
    return f"unexpected payload type {kind[:40]!r}"


_INTERACTIVE_SHAPES: dict[str, type[_Interactive]] = {
    "block_actions": _BlockActions,
    "view_submission": _ViewPayload,
    "view_closed": _ViewPayload,
    "shortcut": _Shortcut,
    "message_action": _Shortcut,
}


def _event_problem(event: _Event, raw: dict[str, Any]) -> str | None:
    if event.type in ("message", "app_mention") and (event.channel is None or (event.ts is None)):
        return "message event without channel or ts"
    if event.type == "app_home_opened" and not (isinstance(raw.get("user"), str) and event.channel):
        return "app_home_opened without user or channel"
    if event.subtype == "message_changed":
        if event.message is None:
            return "message_changed without message"
        _Message.model_validate(event.message)
    if event.subtype == "message_deleted" and event.deleted_ts is None:
        return "message_deleted without deleted_ts"
    return None
