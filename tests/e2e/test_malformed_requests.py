"""Correctly signed, malformed requests: a seeded fuzz of bodies, content types and payload shapes.

Each request starts from something Slack really sends (an event of every kind Sleuth listens to, a click on
each of its buttons, a modal submission, each `/sleuth` verb) and is then broken: a field removed or given
another type at any depth, a list emptied or filled with the wrong things, the body cut short or in the other
encoding, a content type that does not match. Every one is signed with the app's secret, so only the parsing
can refuse it: no response may be a 5xx, nothing may log a traceback, and the server answers normally after.
"""

from __future__ import annotations

import copy
import json
import logging
import random
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.jobs import PENDING
from bot.listeners.actions.link_open import LINK_OPEN_ACTION
from bot.listeners.views.admin_sources import ADD_SOURCE, ADD_SOURCE_VIEW, NAME_BLOCK
from bot.local_slack import GENERAL
from bot.render import FEEDBACK_ACTION, SHOW_TRACE_ACTION
from bot.render_insights import ADMIN_TRACE_ACTION
from tests.e2e.conftest import EnvFactory, SlackEnv

SEED = 37
REQUESTS = 560
QUESTION = "why did the 4.2 Android release slip?"
ODD: list[Any] = [None, 0, -7, 2.5, True, False, "", "x", "\x00\u202e", [], [None], ["x"], [{}], {}, {"id": 5},
                  {"x": []}, "é" * 300]  # fmt: skip
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
CONTENT_TYPES = [JSON, FORM, "text/plain", "", "multipart/form-data; boundary=x", "application/json; charset=latin-1",
                 "application/x-www-form-urlencoded; charset=utf-8", "APPLICATION/JSON", "application/xml"]  # fmt: skip

Template = Callable[
    [SlackEnv, random.Random], tuple[str, dict[str, Any]]
]  # ("json"|"form"|"command", payload)


def _ts(rng: random.Random) -> str:
    return f"{int(time.time()) - rng.randrange(600)}.{rng.randrange(10**6):06d}"


def _event(env: SlackEnv, rng: random.Random, **event: Any) -> tuple[str, dict[str, Any]]:
    return "json", env.slack.envelope(event)


def _mention(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    ts = _ts(rng)
    return _event(env, rng, type="app_mention", user=env.ids["alice@acme.io"], channel=GENERAL, ts=ts,
                  event_ts=ts, text=f"<@{env.slack.bot_user_id}> {QUESTION}")  # fmt: skip


def _dm(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    ts = _ts(rng)
    return _event(env, rng, type="message", channel_type="im", channel=env.slack.open_dm(env.ids["alice@acme.io"]), user=env.ids["alice@acme.io"],
                  ts=ts, event_ts=ts, text=QUESTION, blocks=[{"type": "rich_text", "elements": []}])  # fmt: skip


def _edited(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    ts, user = _ts(rng), env.ids["alice@acme.io"]
    old = {"type": "message", "user": user, "ts": ts, "text": "hello"}
    new = {**old, "text": f"<@{env.slack.bot_user_id}> {QUESTION}", "edited": {"user": user, "ts": _ts(rng)}}
    return _event(env, rng, type="message", subtype="message_changed", hidden=True, channel=GENERAL,
                  channel_type="channel", ts=_ts(rng), event_ts=_ts(rng), message=new,
                  previous_message=old)  # fmt: skip


def _deleted(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    ts = _ts(rng)
    return _event(env, rng, type="message", subtype="message_deleted", hidden=True, channel=GENERAL,
                  channel_type="channel", ts=_ts(rng), event_ts=_ts(rng), deleted_ts=ts,
                  previous_message={"type": "message", "user": env.ids["alice@acme.io"], "ts": ts, "text": "x"})  # fmt: skip


def _home(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    return _event(env, rng, type="app_home_opened", user=rng.choice([env.ids["alice@acme.io"], "U0DANA"]),
                  channel=env.slack.open_dm(env.ids["alice@acme.io"]), tab=rng.choice(["home", "messages"]), event_ts=_ts(rng),
                  view={"id": "V1", "type": "home", "blocks": []})  # fmt: skip


def _click(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    action_id, value = rng.choice([(FEEDBACK_ACTION, "bad:trace-1"), (SHOW_TRACE_ACTION, "trace-1"),
                                   (ADMIN_TRACE_ACTION, "trace-1"), (LINK_OPEN_ACTION, "x"),
                                   (f"{ADD_SOURCE}:folder", "folder")])  # fmt: skip
    user = rng.choice([env.ids["alice@acme.io"], "U0DANA"])
    in_view = rng.random() < 0.5
    container = ({"type": "view", "view_id": "V1"} if in_view else
                 {"type": "message", "message_ts": _ts(rng), "channel_id": GENERAL, "is_ephemeral": False})  # fmt: skip
    return "form", {
        "type": "block_actions", "user": {"id": user, "username": "u", "team_id": env.slack.workspace.team_id},
        "api_app_id": env.slack.workspace.app_id, "token": "t", "container": container,
        "trigger_id": env.slack.issue_trigger(), "team": {"id": env.slack.workspace.team_id, "domain": "acme"},
        "channel": {"id": GENERAL, "name": "general"}, "response_url": env.slack.issue_response_url(env.ids["alice@acme.io"], GENERAL),
        **({"view": {"id": "V1", "type": "home", "blocks": []}} if in_view else {"message": {"ts": _ts(rng)}}),
        "actions": [{"action_id": action_id, "block_id": "b", "type": "button", "value": value,
                     "action_ts": _ts(rng)}],
    }  # fmt: skip


def _submit(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    values = {NAME_BLOCK: {"v": {"type": "plain_text_input", "value": "fuzzed"}},
              "path": {"v": {"type": "plain_text_input", "value": "/nonexistent/fuzz"}}}  # fmt: skip
    return "form", {
        "type": rng.choice(["view_submission", "view_closed"]), "team": {"id": env.slack.workspace.team_id},
        "user": {"id": rng.choice(["U0DANA", env.ids["alice@acme.io"]])}, "api_app_id": "A1", "token": "t",
        "trigger_id": env.slack.issue_trigger(),
        "view": {"id": "V2", "type": "modal", "callback_id": ADD_SOURCE_VIEW,
                 "private_metadata": json.dumps({"kind": rng.choice(["folder", "nosuchkind"])}),
                 "state": {"values": values}},
    }  # fmt: skip


def _command(env: SlackEnv, rng: random.Random) -> tuple[str, dict[str, Any]]:
    text = rng.choice(["", "help", "sources", "gaps", "forget", "link", "link jira", "policy", "policy channel",
                       f"ask {QUESTION}", QUESTION])  # fmt: skip
    return "command", {
        "token": "t", "team_id": env.slack.workspace.team_id, "team_domain": "acme", "channel_id": GENERAL,
        "channel_name": "general", "user_id": rng.choice(["U0DANA", env.ids["alice@acme.io"]]), "user_name": "u",
        "command": "/sleuth", "text": text, "api_app_id": "A1", "is_enterprise_install": "false",
        "response_url": env.slack.issue_response_url(env.ids["alice@acme.io"], GENERAL), "trigger_id": env.slack.issue_trigger(),
    }  # fmt: skip


TEMPLATES: list[Template] = [_mention, _dm, _edited, _deleted, _home, _click, _submit, _command]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside a JSON tree (dict keys and list indexes)."""
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, (*prefix, index))


def _mutate(payload: Any, rng: random.Random) -> Any:
    """One change at a random depth: removed, replaced by a value of another shape, or a list emptied."""
    out = copy.deepcopy(payload)
    path = rng.choice([p for p in _paths(out) if p])
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    roll = rng.random()
    if roll < 0.25 and isinstance(parent, dict):
        del parent[key]
    elif roll < 0.35 and isinstance(parent[key], list):
        parent[key] = []
    else:
        parent[key] = rng.choice([v for v in ODD if type(v) is not type(parent[key])])
    return out


def _encode(shape: str, payload: Any, rng: random.Random) -> tuple[bytes, str]:
    """The body and content type Slack would use for the shape, sometimes the wrong one, sometimes mangled."""
    if shape == "json":
        body, content_type = json.dumps(payload).encode(), JSON
    elif shape == "form":
        body, content_type = urlencode({"payload": json.dumps(payload)}).encode(), FORM
    else:
        fields = payload if isinstance(payload, dict) else {"command": payload}
        body, content_type = urlencode({k: json.dumps(v) if not isinstance(v, str) else v
                                        for k, v in fields.items()}).encode(), FORM  # fmt: skip
    roll = rng.random()
    if roll < 0.15:
        content_type = rng.choice(CONTENT_TYPES)
    elif roll < 0.22:
        body = body[: rng.randrange(len(body))]
    elif roll < 0.26:
        body = body.decode().encode("utf-16")
    elif roll < 0.30:
        body = b"\xef\xbb\xbf" + body  # a byte-order mark
    elif roll < 0.33:
        body = body + b"&payload=" + body if shape != "json" else b"[" + body + b"]"
    return body, content_type


def _requests(env: SlackEnv) -> list[tuple[bytes, str, str]]:
    rng = random.Random(SEED)
    out = []
    for n in range(REQUESTS):
        template = TEMPLATES[n % len(TEMPLATES)]
        shape, payload = template(env, rng)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            payload = _mutate(payload, rng)
        body, content_type = _encode(shape, payload, rng)
        out.append((body, content_type, template.__name__))
    return out


def test_500_signed_malformed_requests_get_no_5xx_and_log_no_traceback(
    make_env: EnvFactory, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    env = make_env(workers=0, admin_users=["U0DANA"])  # nothing answers: only the door and the listeners run
    requests = _requests(env)
    assert len(requests) >= 500

    statuses: list[int] = []
    failed: list[tuple[int, str, bytes]] = []
    with caplog.at_level(logging.INFO):
        for body, content_type, template in requests:
            headers = {"Content-Type": content_type} if content_type else {}
            response = env.slack.post_raw(body, headers, sign_as=int(time.time()))
            statuses.append(response.status_code)
            if response.status_code >= 500:
                failed.append((response.status_code, template, body[:300]))
        env.settle()

    assert failed == []
    tracebacks = [(r.name, r.getMessage()) for r in caplog.records if r.exc_info]
    assert tracebacks == [] and "Traceback" not in capfd.readouterr().err
    assert len({template for _, _, template in requests}) == len(TEMPLATES)
    assert sum(1 for status in statuses if status < 300) >= 100  # many got past the door to the listeners

    env.bot.pool.start()
    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)
    assert "*Sources*" in str(answer.get("blocks"))


def test_a_slash_command_question_saying_payload_is_taken(make_env: EnvFactory) -> None:
    """Bolt's own parser read any form with the word "payload" in it as an empty interactive request."""
    env = make_env(workers=0)

    response = env.slack.slash_command(
        env.ids["alice@acme.io"], GENERAL, "/sleuth", "ask what is the P3's payload?"
    )
    env.settle()

    assert response.status_code == 200 and env.bot.jobs.counts() == {PENDING: 1}
