"""The HTTP door: verification before parsing, then the shape Bolt and the listeners rely on."""

from __future__ import annotations

import json

import pytest

from bot.request_guard import Rejected, bolt_request, envelope_problem, parse_body, verify_signature
from bot.testing.slack_payloads import sign

SECRET = "s3cret"
NOW = 1_800_000_000
BODY = b'{"type": "url_verification", "challenge": "c"}'


def _signed(**override: str) -> dict[str, str]:
    headers = sign(SECRET, BODY, NOW)
    return {**{k.lower(): v for k, v in headers.items()}, **override}


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, "unsigned request"),
        ({"x-slack-request-timestamp": "abc"}, "malformed signature timestamp"),
        ({"x-slack-request-timestamp": "١٨٠٠٠٠٠٠٠٠"}, "malformed signature timestamp"),
        ({"x-slack-request-timestamp": "9" * 40}, "malformed signature timestamp"),
        ({"x-slack-request-timestamp": str(NOW - 301)}, "stale signature timestamp"),
        ({"x-slack-signature": "v0=é"}, "malformed signature"),
        ({"x-slack-signature": "v0=" + "0" * 64}, "signature mismatch"),
    ],
    ids=["none", "letters", "arabic-digits", "huge", "stale", "non-ascii", "wrong"],
)
def test_failed_verification_is_401(headers: dict[str, str], reason: str) -> None:
    given = _signed(**headers) if headers else {}
    with pytest.raises(Rejected) as refused:
        verify_signature(SECRET, given, BODY, now=NOW)
    assert (refused.value.status, refused.value.reason) == (401, reason)


def test_a_valid_signature_passes() -> None:
    verify_signature(SECRET, _signed(), BODY, now=NOW + 299)


def _event(**event: object) -> dict:
    base = {"type": "app_mention", "channel": "C1", "ts": "1.2", "user": "U1", "text": "hi"}
    return {"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event_time": NOW,
            "event": {**base, **event}}  # fmt: skip


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (_event(), None),
        (_event(channel=5), "malformed event_callback: event.channel"),
        (_event(text=["x"]), "malformed event_callback: event.text"),
        ({**_event(), "event": "x"}, "malformed event_callback: event"),
        ({**_event(), "authorizations": "T1"}, "malformed event_callback: authorizations"),
        (_event(ts=None), "message event without channel or ts"),
        (_event(type="message", subtype="message_changed", message="x"), "malformed event_callback: event.message"),
        ({"type": "block_actions", "user": "U1"}, "malformed block_actions: user"),
        ({"type": 3}, "payload without a type"),
        ({"type": "bogus"}, "unexpected payload type 'bogus'"),
    ],
    ids=["ok", "channel-int", "text-list", "event-str", "auths-str", "no-ts", "changed-str", "user-str",
         "type-int", "unknown"],
)  # fmt: skip
def test_envelope_shapes(payload: dict, problem: str | None) -> None:
    assert envelope_problem(payload) == problem


@pytest.mark.parametrize(
    ("content_type", "body", "status"),
    [
        ("application/json", b"\xff", 400),
        ("application/json", b"[1]", 400),
        ("application/json", b"[" * 100_000, 400),
        ("application/x-www-form-urlencoded", b"payload=%7Bbad", 400),
        ("application/x-www-form-urlencoded", b"command=%2Fsleuth&text=hi", 400),
        ("application/json", b"x" * 1_000_001, 413),
    ],
    ids=["not-utf8", "list", "deep", "bad-payload", "command-fields", "huge"],
)
def test_malformed_bodies(content_type: str, body: bytes, status: int) -> None:
    with pytest.raises(Rejected) as refused:
        parse_body(content_type, body)
    assert refused.value.status == status


def test_a_slash_command_form_parses() -> None:
    form = b"command=%2Fsleuth&text=&team_id=T1&user_id=U1&channel_id=C1&trigger_id=1.2"
    assert parse_body("application/x-www-form-urlencoded", form)["command"] == "/sleuth"
    assert parse_body("application/json", json.dumps(_event()).encode())["event_id"] == "Ev1"


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"type": "block_actions", "user": {"id": "U1"}, "actions": []}, "malformed block_actions: actions"),
        ({"type": "block_actions", "user": {"id": "U1"}, "actions": [{"value": "x"}]},
         "malformed block_actions: actions.0.action_id"),
        ({"type": "block_actions", "actions": [{"action_id": "a"}]}, "malformed block_actions: user"),
        ({"type": "view_submission", "user": {"id": "U1"}}, "malformed view_submission: view"),
        ({"type": "view_submission", "user": {"id": "U1"}, "view": {"state": {"values": {"b": {"a": []}}}}},
         "malformed view_submission: view.state.values.b.a"),
        ({"type": "shortcut", "user": {"id": "U1"}}, "malformed shortcut: callback_id"),
        (_event(type="app_home_opened", user=["U1"]), "app_home_opened without user or channel"),
        ({"type": "block_actions", "user": {"id": "U1"}, "actions": [{"action_id": "a", "value": "v"}]}, None),
    ],
    ids=["no-actions", "action-without-id", "no-user", "no-view", "state-value-list", "shortcut-no-callback",
         "home-user-list", "click-ok"],
)  # fmt: skip
def test_interactive_shapes(payload: dict, problem: str | None) -> None:
    assert envelope_problem(payload) == problem


@pytest.mark.parametrize(
    ("content_type", "body", "status"),
    [
        ("text/plain", json.dumps(_event()).encode(), 415),
        ("", json.dumps(_event()).encode(), 415),
        ("application/x-www-form-urlencoded", b"payload=%7B%7D&payload=%7B%7D", 400),
        ("application/x-www-form-urlencoded", b"payload=%7B%22type%22%3A1%7D&text=x", 400),
        ("application/x-www-form-urlencoded", json.dumps(_event()).encode(), 400),
        ("application/json", b"payload=%7B%7D", 400),
    ],
    ids=["text-plain", "no-type", "repeated", "payload-and-more", "json-as-form", "form-as-json"],
)
def test_bodies_parsed_by_their_content_type(content_type: str, body: bytes, status: int) -> None:
    with pytest.raises(Rejected) as refused:
        parse_body(content_type, body)
    assert refused.value.status == status


def test_bolt_gets_the_payload_the_door_checked() -> None:
    """Bolt's own parser took any form containing the word "payload" for an interactive one (an empty request)."""
    form = (
        "command=%2Fsleuth&text=what+is+the+payload+of+P3&team_id=T1&user_id=U1&channel_id=C1&trigger_id=1.2"
    )
    payload = parse_body("application/x-www-form-urlencoded; charset=utf-8", form.encode())
    request = bolt_request(form, {"content-type": "application/x-www-form-urlencoded"}, "", payload)
    assert request.body["text"] == "what is the payload of P3" and request.raw_body == form
    assert request.mode == "http" and request.context.team_id == "T1"
