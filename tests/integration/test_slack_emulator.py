"""The Slack emulator against the real slack_sdk WebClient and a real Bolt app, over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from slack_bolt import Ack, App, BoltRequest, BoltResponse, Respond, Say
from slack_bolt.adapter.starlette import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.testing.http_server import serve_asgi
from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_render import format_message

SIGNING_SECRET = "emulator-test-signing-secret"
FEEDBACK_BLOCK = {
    "type": "context_actions",
    "elements": [
        {
            "type": "feedback_buttons",
            "action_id": "feedback",
            "positive_button": {"text": {"type": "plain_text", "text": "Helpful"}, "value": "good"},
            "negative_button": {"text": {"type": "plain_text", "text": "Not helpful"}, "value": "bad"},
        }
    ],
}


@pytest.fixture
def slack() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        emulator.add_user("U1", "ann", real_name="Ann Lee", email="ann@acme.io", is_admin=True)
        emulator.add_user("U2", "bo", email="bo@acme.io")
        emulator.add_channel("C1", "eng", members=["U1", "U2"])
        yield emulator


@pytest.fixture
def client(slack: SlackEmulator) -> WebClient:
    return WebClient(token=slack.bot_token, base_url=slack.api_url)


def _build_bolt_app(slack: SlackEmulator, retries_seen: list[str]) -> App:
    app = App(
        token=slack.bot_token,
        signing_secret=SIGNING_SECRET,
        client=WebClient(token=slack.bot_token, base_url=slack.api_url),
        process_before_response=True,
    )

    @app.middleware
    def record_retries(req: BoltRequest, next: Callable[[], BoltResponse]) -> BoltResponse:
        retry = req.headers.get("x-slack-retry-num")
        if retry:
            retries_seen.append(retry[0])
        return next()

    @app.event("app_mention")
    def reply(event: dict[str, Any], say: Say) -> None:
        say(
            text="Looking into it",
            blocks=[
                {"type": "section", "text": {"type": "mrkdwn", "text": "Looking into *it*"}},
                {"type": "actions", "elements": [_button("Open modal", "open_modal", "m1")]},
                FEEDBACK_BLOCK,
            ],
            thread_ts=event.get("thread_ts", event["ts"]),
        )

    @app.event("message")
    def ignore_plain_messages() -> None:
        """Subscribed to message.channels: the mention's `message` twin must not get a second answer."""

    @app.event("app_home_opened")
    def publish_home(event: dict[str, Any], client: WebClient) -> None:
        home = {
            "type": "home",
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "Sources"}}],
        }
        client.views_publish(user_id=event["user"], view=home)

    @app.action("open_modal")
    def open_modal(ack: Ack, body: dict[str, Any], client: WebClient, respond: Respond) -> None:
        ack()
        client.views_open(trigger_id=body["trigger_id"], view=_modal())
        respond(text="Opened", replace_original=False)

    @app.action("feedback")
    def feedback(ack: Ack) -> None:
        ack()

    @app.view("add_source")
    def add_source(ack: Ack, view: dict[str, Any]) -> None:
        url = view["state"]["values"]["url"]["url_input"]["value"]
        if not url.startswith("https://"):
            ack(response_action="errors", errors={"url": "Use an https:// URL"})
            return
        ack()

    @app.command("/sleuth")
    def command(ack: Ack, command: dict[str, Any]) -> None:
        ack(text=f"You asked: {command['text']}")

    return app


def _button(text: str, action_id: str, value: str) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": text},
        "action_id": action_id,
        "value": value,
    }


def _modal() -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": "add_source",
        "title": {"type": "plain_text", "text": "Add source"},
        "submit": {"type": "plain_text", "text": "Add"},
        "blocks": [
            {
                "type": "input",
                "block_id": "url",
                "label": {"type": "plain_text", "text": "URL"},
                "element": {"type": "plain_text_input", "action_id": "url_input"},
            }
        ],
    }


@pytest.fixture
def retries_seen() -> list[str]:
    return []


@pytest.fixture
def bolt(slack: SlackEmulator, retries_seen: list[str]) -> Iterator[str]:
    handler = SlackRequestHandler(_build_bolt_app(slack, retries_seen))

    async def events(request: Request) -> Response:
        return await handler.handle(request)

    with serve_asgi(Starlette(routes=[Route("/slack/events", events, methods=["POST"])])) as url:
        slack.connect_app(f"{url}/slack/events", SIGNING_SECRET)
        yield url


# -- Web API ---------------------------------------------------------------------------------------------


def test_auth_test_identifies_the_bot(client: WebClient, slack: SlackEmulator) -> None:
    response = client.auth_test()
    assert response["user_id"] == "UBOT"
    assert response["bot_id"] == "BSLEUTH"
    assert response["team_id"] == slack.workspace.team_id


def test_thread_replies_paginate_with_cursor(client: WebClient, slack: SlackEmulator) -> None:
    parent = slack.post_as_user("U1", "C1", "why was ENG-142 reopened?")
    posted = [client.chat_postMessage(channel="C1", text=f"part {i}", thread_ts=parent) for i in range(3)]
    assert posted[0]["message"]["thread_ts"] == parent
    assert posted[0]["channel"] == "C1"

    first = client.conversations_replies(channel="C1", ts=parent, limit=2)
    assert first["has_more"] is True
    assert [m["ts"] for m in first["messages"]] == [parent, posted[0]["ts"]]
    assert first["messages"][0]["reply_count"] == 3
    cursor = first["response_metadata"]["next_cursor"]
    second = client.conversations_replies(channel="C1", ts=parent, limit=2, cursor=cursor)
    assert [m["text"] for m in second["messages"]] == ["part 1", "part 2"]
    assert second["has_more"] is False
    assert all(m["parent_user_id"] == "U1" for m in second["messages"])


def test_history_is_newest_first_and_hides_replies(client: WebClient, slack: SlackEmulator) -> None:
    first = slack.post_as_user("U1", "C1", "one")
    client.chat_postMessage(channel="C1", text="reply", thread_ts=first)
    second = slack.post_as_user("U2", "C1", "two")
    assert [m["ts"] for m in client.conversations_history(channel="C1")["messages"]] == [second, first]


def test_users_info_and_lookup_return_email(client: WebClient) -> None:
    assert client.users_info(user="U1")["user"]["profile"]["email"] == "ann@acme.io"
    assert client.users_lookupByEmail(email="bo@acme.io")["user"]["id"] == "U2"
    with pytest.raises(SlackApiError) as raised:
        client.users_info(user="U404")
    assert raised.value.response["error"] == "user_not_found"


def test_invalid_token_is_rejected(slack: SlackEmulator) -> None:
    with pytest.raises(SlackApiError) as raised:
        WebClient(token="xoxb-wrong", base_url=slack.api_url).auth_test()
    assert raised.value.response["error"] == "invalid_auth"


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


@pytest.mark.parametrize(
    ("blocks", "error"),
    [
        ([_section("x")] * 51, "invalid_blocks"),
        ([_section("x" * 3001)], "invalid_blocks"),
        ([{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}], "invalid_blocks"),
        ([{"type": "markdown", "text": "x" * 12_001}], "invalid_blocks"),
        ([{"type": "context_actions", "elements": [FEEDBACK_BLOCK["elements"][0]] * 6}], "invalid_blocks"),
        ([_section("x" * 3000)] * 5, "msg_blocks_too_long"),
    ],
    ids=["51-blocks", "long-section", "11-fields", "long-markdown", "6-context-actions", "total-too-long"],
)
def test_block_limits_are_enforced(client: WebClient, blocks: list[dict[str, Any]], error: str) -> None:
    with pytest.raises(SlackApiError) as raised:
        client.chat_postMessage(channel="C1", text="fallback", blocks=blocks)
    assert raised.value.response["error"] == error


def test_within_limits_and_long_text_truncated(client: WebClient) -> None:
    ok = client.chat_postMessage(channel="C1", text="y" * 40_005, blocks=[_section("x" * 3000)] * 4)
    assert len(ok["message"]["text"]) == 40_000
    assert len(ok["message"]["blocks"]) == 4


def test_missing_channel_and_unknown_method(client: WebClient) -> None:
    with pytest.raises(SlackApiError) as raised:
        client.chat_postMessage(channel="C404", text="hi")
    assert raised.value.response["error"] == "channel_not_found"
    with pytest.raises(SlackApiError) as raised:
        client.api_call("chat.teleport")
    assert raised.value.response["error"] == "unknown_method"


def test_form_encoded_blocks_are_decoded(client: WebClient, slack: SlackEmulator) -> None:
    blocks = json.dumps([_section("from a form")])
    client.api_call("chat.postMessage", params={"channel": "C1", "text": "t", "blocks": blocks})
    assert slack.bot_messages("C1")[0]["blocks"][0]["text"]["text"] == "from a form"
    assert slack.calls_to("chat.postMessage")[0]["channel"] == "C1"


def test_fail_next_rate_limits_once(client: WebClient, slack: SlackEmulator) -> None:
    slack.fail_next("chat.postMessage", retry_after=1)
    with pytest.raises(SlackApiError) as raised:
        client.chat_postMessage(channel="C1", text="hi")
    assert raised.value.response.status_code == 429
    assert raised.value.response["error"] == "ratelimited"
    assert raised.value.response.headers["Retry-After"] == "1"
    assert client.chat_postMessage(channel="C1", text="hi")["ok"] is True


def test_streaming_and_assistant_status(client: WebClient, slack: SlackEmulator) -> None:
    parent = slack.post_as_user("U1", "C1", "question")
    client.assistant_threads_setStatus(channel_id="C1", thread_ts=parent, status="Reading ENG-142...")
    stream = client.chat_stream(
        channel="C1", thread_ts=parent, recipient_team_id=slack.workspace.team_id, recipient_user_id="U1"
    )
    stream.append(markdown_text="The ticket was reopened ")
    stream.append(markdown_text="because the fix regressed [1].")
    stream.stop(blocks=[FEEDBACK_BLOCK])
    client.assistant_threads_setStatus(channel_id="C1", thread_ts=parent, status="")

    (answer,) = slack.bot_messages("C1", thread_ts=parent)
    assert answer["text"] == "The ticket was reopened because the fix regressed [1]."
    assert answer["blocks"][0] == {"type": "markdown", "text": answer["text"]}  # the stream, then its blocks
    assert answer["blocks"][1:] == [FEEDBACK_BLOCK]
    assert slack.statuses("C1", parent) == ["Reading ENG-142...", ""]
    with pytest.raises(SlackApiError) as raised:
        client.chat_appendStream(channel="C1", ts=answer["ts"], markdown_text="late")
    assert raised.value.response["error"] == "message_not_in_streaming_state"


# -- Events and interactivity through a real Bolt app ----------------------------------------------------


def test_mention_is_answered_once_in_thread(slack: SlackEmulator, bolt: str) -> None:
    ts = slack.post_as_user("U1", "C1", "<@UBOT> why was ENG-142 reopened?")
    replies = slack.wait_for(lambda: slack.bot_messages("C1", thread_ts=ts))
    assert replies[0]["text"] == "Looking into it"
    kinds = [d.payload["event"]["type"] for d in slack.deliveries]
    assert kinds == ["message", "app_mention"]
    assert len({d.payload["event_id"] for d in slack.deliveries}) == 2
    assert all(d.status_code == 200 for d in slack.deliveries)
    assert len(slack.bot_messages("C1")) == 1
    assert "[Open modal]" in format_message(replies[0])


def test_unsigned_bad_and_stale_requests_are_rejected(slack: SlackEmulator, bolt: str) -> None:
    event = {"type": "app_mention", "user": "U1", "text": "<@UBOT> hi", "ts": "1.2", "channel": "C1"}
    assert slack.deliver(event, sign=False).status_code == 401
    assert slack.deliver(event, timestamp=time.time() - 600).status_code == 401
    slack.connect_app(f"{bolt}/slack/events", "not-the-secret")
    assert slack.deliver(event).status_code == 401
    assert slack.bot_messages("C1") == []


def test_retry_headers_reach_the_app(slack: SlackEmulator, bolt: str, retries_seen: list[str]) -> None:
    event = {"type": "message", "user": "U1", "text": "hi", "ts": "1700000000.000001", "channel": "C1"}
    response = slack.deliver(event, event_id="EvRETRY", retry_num=2, retry_reason="http_timeout")
    assert response.status_code == 200
    assert slack.deliveries[-1].payload["event_id"] == "EvRETRY"
    assert retries_seen == ["2"]


def test_button_opens_modal_and_submission_closes_it(slack: SlackEmulator, bolt: str) -> None:
    ts = slack.post_as_user("U1", "C1", "<@UBOT> add a source")
    (reply,) = slack.wait_for(lambda: slack.bot_messages("C1", thread_ts=ts))

    assert slack.click_button("U1", reply["ts"], "C1", "open_modal", "m1").status_code == 200
    (modal,) = slack.wait_for(slack.open_modals)
    assert slack.wait_for(lambda: slack.responses)[0]["body"]["text"] == "Opened"

    rejected = slack.submit_view("U1", modal, {"url": {"url_input": "ftp://wiki"}})
    assert rejected.json()["response_action"] == "errors"
    assert len(slack.open_modals()) == 1
    assert slack.submit_view("U1", modal, {"url": {"url_input": "https://wiki"}}).status_code == 200
    assert slack.open_modals() == []


def test_feedback_click_is_recorded(slack: SlackEmulator, bolt: str) -> None:
    ts = slack.post_as_user("U1", "C1", "<@UBOT> question")
    (reply,) = slack.wait_for(lambda: slack.bot_messages("C1", thread_ts=ts))
    assert slack.click_button("U2", reply["ts"], "C1", "feedback", "bad").status_code == 200
    assert slack.feedback == [{"user": "U2", "channel": "C1", "message_ts": reply["ts"], "value": "bad"}]


def test_slash_command_ack_is_shown_to_the_user(slack: SlackEmulator, bolt: str) -> None:
    assert slack.slash_command("U1", "C1", "/sleuth", "status").status_code == 200
    (shown,) = slack.ephemeral_messages("U1", "C1")
    assert shown["text"] == "You asked: status"


def test_app_home_opened_publishes_view(slack: SlackEmulator, bolt: str) -> None:
    assert slack.open_app_home("U1").status_code == 200
    view = slack.wait_for(lambda: slack.home_view("U1"))
    assert format_message(view) == "Sources"


def test_serve_asgi_releases_its_port() -> None:
    async def ok(request: Request) -> Response:
        return Response("ok")

    with serve_asgi(Starlette(routes=[Route("/", ok)])) as url:
        assert httpx.get(url).text == "ok"
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def test_dm_edit_delete_and_other_bot_events(slack: SlackEmulator, bolt: str) -> None:
    dm = slack.open_dm("U1")
    ts = slack.post_as_user("U1", dm, "<@UBOT> in a DM")
    slack.edit_as_user("U1", dm, ts, "edited")
    slack.delete_as_user("U1", dm, ts)
    slack.post_as_other_bot("BOTHER", "C1", "deploy finished")
    events = [d.payload["event"] for d in slack.deliveries]
    assert [(e["type"], e.get("subtype"), e.get("channel_type")) for e in events] == [
        ("message", None, "im"),
        ("message", "message_changed", "im"),
        ("message", "message_deleted", "im"),
        ("message", "bot_message", "channel"),
    ]
    assert events[1]["message"]["text"] == "edited"
    assert events[2]["deleted_ts"] == ts
    assert all(d.status_code == 200 for d in slack.deliveries)
