"""Socket Mode's own failure modes, on the emulator's WebSocket: connections that drop mid-question or while
Sleuth answers, Slack asking for a refresh, and envelopes that must be ignored. (Every test that takes the `env`
fixture also runs over Socket Mode.)"""

from __future__ import annotations

import logging
import time

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.jobs import DONE
from bot.local_slack import GENERAL
from bot.testing.slack_render import format_message
from tests.e2e.conftest import EnvFactory, SlackEnv

QUESTION = "why did the 4.2 Android release slip?"
FOLLOW_UP = "and who owns that?"
RECONNECT_S = 5.0


def _socket_env(make_env: EnvFactory, **kw: object) -> SlackEnv:
    return make_env(socket_mode=True, **kw)


def test_a_connection_dropped_mid_question_is_redelivered_and_answered_once(make_env: EnvFactory) -> None:
    env = _socket_env(make_env)
    server = env.slack.socket_mode
    assert server is not None
    server.drop_next_delivery()  # the question's first envelope: the connection breaks before its ack

    ts = env.mention("alice@acme.io", QUESTION)
    [answer] = env.wait_answers(GENERAL, ts)

    assert "*Sources*" in format_message(answer) and len(env.slack.bot_messages(GENERAL, ts)) == 1
    assert server.connections_opened >= 2  # the app noticed and reconnected
    assert any(e["retry_attempt"] == 1 and e["retry_reason"] == "timeout" for e in server.envelopes)
    assert all(d.status_code == 200 for d in env.slack.deliveries)
    assert env.bot.jobs.counts() == {DONE: 1}


def test_a_connection_dropped_while_answering_does_not_lose_the_answer(make_env: EnvFactory) -> None:
    env = _socket_env(make_env, workers=0)
    server = env.slack.socket_mode
    assert server is not None
    ts = env.mention("alice@acme.io", QUESTION)

    server.drop_connections()
    env.bot.pool.start()
    [answer] = env.wait_answers(GENERAL, ts)  # the Web API does not need the socket

    server.wait_connected(count=2)
    env.mention("alice@acme.io", FOLLOW_UP, thread_ts=ts)
    _, follow_up = env.wait_answers(GENERAL, ts, count=2)
    assert "*Sources*" in format_message(answer) and follow_up["ts"] != answer["ts"]


def test_a_refresh_request_moves_to_a_new_connection(make_env: EnvFactory) -> None:
    env = _socket_env(make_env)
    server = env.slack.socket_mode
    assert server is not None

    server.request_refresh()
    server.wait_connected(count=2)
    ts = env.mention("alice@acme.io", QUESTION)

    assert len(env.wait_answers(GENERAL, ts)) == 1


@pytest.mark.parametrize(
    "change",
    [{"team_id": "T0OTHERWS"}, {"event_time": 1_700_000_000}, {"event": {"user": 42}}, {"event": "oops"}],
    ids=["other-workspace", "year-old", "user-not-a-string", "event-not-an-object"],
)
def test_envelopes_to_ignore_are_acked_and_dropped(
    make_env: EnvFactory, caplog: pytest.LogCaptureFixture, change: dict
) -> None:
    env = _socket_env(make_env)
    event = {"type": "app_mention", "user": env.ids["alice@acme.io"], "channel": GENERAL, "ts": "1800000000.000100",
             "event_ts": "1800000000.000100", "text": f"<@{env.slack.bot_user_id}> {QUESTION}"}  # fmt: skip
    envelope = env.slack.envelope(event)
    for key, value in change.items():
        envelope[key] = {**envelope[key], **value} if isinstance(value, dict) else value

    with caplog.at_level(logging.INFO):
        response = env.slack.post_envelope("events", envelope)

    assert response.status_code == 200  # acked, so Slack does not redeliver it
    assert env.bot.jobs.counts() == {} and env.slack.calls_to("chat.postMessage") == []
    assert [r for r in caplog.records if r.exc_info] == []
    assert any(r.getMessage() == "delivery ignored" for r in caplog.records)


def test_apps_connections_open_wants_the_app_level_token(make_env: EnvFactory) -> None:
    env = _socket_env(make_env)
    with pytest.raises(SlackApiError) as refused:
        WebClient(token=env.slack.bot_token, base_url=env.slack.api_url).apps_connections_open(
            app_token=env.slack.bot_token
        )
    assert refused.value.response["error"] == "not_allowed_token_type"
    url = WebClient(base_url=env.slack.api_url).apps_connections_open(app_token=env.slack.app_token)["url"]
    assert url.startswith("ws://127.0.0.1:") and "ticket=" in url


@pytest.mark.parametrize("drop", ["closed", "silent"])
def test_a_dropped_connection_is_replaced_within_5_s(make_env: EnvFactory, drop: str) -> None:
    """`closed`: the TCP connection ends; `silent`: it carries nothing and is never closed (a NAT forgot it),
    which only unanswered pings reveal."""
    env = _socket_env(make_env)
    server = env.slack.socket_mode
    assert server is not None
    server.wait_connected()
    opened = server.connections_opened

    started = time.monotonic()
    server.drop_connections() if drop == "closed" else server.stall_connections()
    server.wait_connected(count=opened + 1, timeout=30)

    assert time.monotonic() - started < RECONNECT_S
    ts = env.mention("alice@acme.io", QUESTION)
    assert len(env.wait_answers(GENERAL, ts)) == 1


def _unreadable(env: SlackEnv) -> dict[str, dict]:
    """Envelopes with a readable id that slack_sdk alone would leave unacked (Slack then delivers them again)."""
    mention = env.slack.envelope({"type": "app_mention", "user": env.ids["alice@acme.io"], "channel": GENERAL,
                                  "ts": "1800000000.000200", "text": "hi"})  # fmt: skip
    command = {"command": "/sleuth", "text": 5, "team_id": env.slack.workspace.team_id, "user_id": "U0DANA",
               "channel_id": GENERAL, "trigger_id": "1.2"}  # fmt: skip
    click = {"type": "block_actions", "user": {"id": "U0DANA"}, "actions": []}
    unhandled = env.slack.envelope({"type": "reaction_added", "user": "U0DANA", "reaction": "eyes"})
    return {
        "no-payload": {"type": "events_api"},
        "payload-list": {"type": "events_api", "payload": [mention]},
        "payload-number": {"type": "interactive", "payload": 7},
        "no-type": {"payload": mention},
        "type-number": {"type": 3, "payload": mention},
        "command-text-number": {"type": "slash_commands", "payload": command},
        "click-without-actions": {"type": "interactive", "payload": click},
        "unhandled-event": {"type": "events_api", "payload": unhandled},
    }


def test_every_envelope_with_a_readable_id_is_acked(
    make_env: EnvFactory, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    env = _socket_env(make_env)
    server = env.slack.socket_mode
    assert server is not None
    server.wait_connected()

    with caplog.at_level(logging.INFO):
        acked = {name: server.deliver_raw({"envelope_id": f"env-{name}", **envelope})
                 for name, envelope in _unreadable(env).items()}  # fmt: skip

    assert acked == {name: True for name in acked}
    assert [r for r in caplog.records if r.exc_info] == [] and "Traceback" not in capfd.readouterr().err
    assert env.bot.jobs.counts() == {} and env.slack.calls_to("chat.postMessage") == []
