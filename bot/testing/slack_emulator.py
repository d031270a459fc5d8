"""A local Slack that the real Bolt app and slack_sdk WebClient talk to over HTTP on 127.0.0.1.

Tests and `sleuth demo` use it in place of slack.com: it serves the Web API methods Sleuth calls (see
`slack_web_api.py`), records every call, and plays the user's side: typing messages, clicking buttons,
submitting modals and running slash commands, each delivered to the app as a signed request like Slack's.

    with SlackEmulator() as slack:
        slack.add_user("U1", "ann", email="ann@acme.io")
        slack.add_channel("C1", "eng", members=["U1"])
        slack.connect_app(f"{app_url}/slack/events", SIGNING_SECRET)
        ts = slack.post_as_user("U1", "C1", "<@UBOT> why was ENG-142 reopened?")
        slack.wait_for(lambda: slack.bot_messages("C1", thread_ts=ts))
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any, NamedTuple, TypeVar
from urllib.parse import urlencode

import httpx

from bot.manifest import bot_scopes, load_manifest
from bot.testing import slack_payloads as payloads
from bot.testing.slack_http import Reply, make_handler
from bot.testing.slack_interactivity import InteractivityMixin
from bot.testing.slack_limits import ApiError
from bot.testing.slack_oidc import METHODS as OIDC_METHODS
from bot.testing.slack_oidc import USER_TOKEN
from bot.testing.slack_scopes import METHOD_SCOPES, check_scopes
from bot.testing.slack_socket_mode import SocketModeServer
from bot.testing.slack_web_api import SlackWebApi, normalize_params
from bot.testing.slack_workspace import Channel, SlackWorkspace, User

T = TypeVar("T")
HOLD_MAX_S = 60.0  # a held call goes on by itself after this (a test that forgot to release it)
SHUTDOWN_POLL_S = 0.05  # serve_forever checks for shutdown this often; stop() waits up to this long
DEFAULT_BOT_TOKEN = "xoxb-000000000001-000000000001-sleuthemulatortoken"
DEFAULT_APP_TOKEN = "xapp-1-ASLEUTH01-000000000001-sleuthemulatorapptoken"


class ApiCall(NamedTuple):
    """One Web API call as the app made it (params after JSON/form decoding)."""

    method: str
    params: dict[str, Any]
    at: float = 0.0  # when it arrived (`time.monotonic`)


@dataclass
class Delivery:
    """One request the emulator sent to the app, and how the app answered."""

    kind: str
    payload: dict[str, Any]
    status_code: int
    body: str


@dataclass
class _Fault:
    error: str | None  # None: the call succeeds, only its response is late (`delay_s`)
    status: int
    retry_after: int | None
    delay_s: float = 0.0


class _ApiServer(ThreadingHTTPServer):
    """slack.com takes a burst of connections at once; the stdlib's listen backlog of 5 would time them out."""

    daemon_threads = True
    request_queue_size = 256


class SlackEmulator(InteractivityMixin):
    """Slack's Web API, Events API and interactivity for one workspace with one installed bot.

    The bot token carries `scopes` (default: exactly those in bot/manifest.yaml); a method called without one of
    the scopes it needs answers `missing_scope`, and every answer carries `x-oauth-scopes` as Slack's does.
    """

    def __init__(
        self,
        *,
        bot_token: str = DEFAULT_BOT_TOKEN,
        scopes: Iterable[str] | None = None,
        team_id: str = "T0SLEUTH1",
        team_name: str = "Acme",
        bot_user_id: str = "UBOT",
        bot_id: str = "BSLEUTH",
        app_id: str = "ASLEUTH01",
        delivery_timeout_s: float = 30.0,
        api_latency_s: float = 0.0,
    ) -> None:
        self.bot_token = bot_token
        self.api_latency_s = api_latency_s  # every Web API call answers this late (Slack is a network away)
        self.scopes = frozenset(bot_scopes(load_manifest()) if scopes is None else scopes)
        self.workspace = SlackWorkspace(
            team_id=team_id, team_name=team_name, bot_user_id=bot_user_id, bot_id=bot_id, app_id=app_id
        )
        self.api = SlackWebApi(self.workspace, is_trigger_valid=self._use_trigger)
        self.oidc = self.api.oidc
        self.calls: list[ApiCall] = []
        self.responses: list[dict[str, Any]] = []
        self.deliveries: list[Delivery] = []
        self._changed = threading.Condition(self.workspace.lock)
        self._faults: dict[str, list[_Fault]] = {}
        self._holds: dict[str, list[threading.Event]] = {}
        self._held: dict[str, int] = {}
        self._triggers: dict[str, bool] = {}
        self._response_urls: dict[str, dict[str, Any]] = {}
        self._event_ids = itertools.count(1)
        self._delivery_timeout_s = delivery_timeout_s
        self._server: _ApiServer | None = None
        self._thread: threading.Thread | None = None
        self._local = threading.local()  # each delivering thread's own client (see `_client`)
        self._tls = ssl.create_default_context()  # made once: loading the CA store per client costs ~50 ms
        self._clients: list[httpx.Client] = []
        self._urls: dict[str, str] = {}
        self._signing_secret = ""
        self.socket_mode: SocketModeServer | None = None
        self.app_token = DEFAULT_APP_TOKEN

    # -- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> SlackEmulator:
        """Bind 127.0.0.1 on a free port and serve; the socket listens before this returns."""
        if self._server is not None:
            return self
        self._server = _ApiServer(("127.0.0.1", 0), make_handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_S},
            name="slack-emulator",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self.socket_mode is not None:
            self.socket_mode.stop()
            self.socket_mode = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._changed:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()
        self._server, self._thread = None, None

    def __enter__(self) -> SlackEmulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("SlackEmulator is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def api_url(self) -> str:
        """For `WebClient(base_url=...)`; slack_sdk needs the trailing slash."""
        return f"{self.base_url}/api/"

    # -- workspace setup ---------------------------------------------------------------------------------

    @property
    def bot_user_id(self) -> str:
        return self.workspace.bot_user_id

    def add_user(self, user_id: str, name: str, **details: Any) -> User:
        """`SlackWorkspace.add_user`: real_name, email, is_admin, is_bot."""
        return self.workspace.add_user(user_id, name, **details)

    def add_channel(
        self,
        channel_id: str,
        name: str,
        *,
        members: list[str] | None = None,
        is_private: bool = False,
        bot_member: bool = True,
    ) -> Channel:
        """A channel; the bot is a member unless `bot_member=False` (then Slack sends it no events there)."""
        people = list(members or [])
        if bot_member and self.bot_user_id not in people:
            people.append(self.bot_user_id)
        return self.workspace.add_channel(channel_id, name, members=people, is_private=is_private)

    def open_dm(self, user_id: str) -> str:
        """The id of the bot's DM with `user_id`."""
        return self.workspace.open_dm(user_id).id

    def connect_app(
        self,
        events_url: str,
        signing_secret: str,
        *,
        interactivity_url: str | None = None,
        commands_url: str | None = None,
    ) -> None:
        """Where to deliver; Bolt serves events, interactivity and commands on one URL by default."""
        self._urls = {
            "events": events_url,
            "interactivity": interactivity_url or events_url,
            "commands": commands_url or events_url,
        }
        self._signing_secret = signing_secret

    def connect_socket_mode(self, *, ack_timeout_s: float | None = None) -> SocketModeServer:
        """Deliver over Socket Mode instead of HTTP: the app connects with `app_token` via
        `apps.connections.open`; events, interactivity and commands then go out as envelopes."""
        if self.socket_mode is None:
            options = {"ack_timeout_s": ack_timeout_s} if ack_timeout_s is not None else {}
            self.socket_mode = SocketModeServer(
                app_id=self.workspace.app_id, on_change=self._notify, **options
            ).start()
        return self.socket_mode

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def fail_next(
        self,
        method: str,
        error: str = "ratelimited",
        status: int = 429,
        retry_after: int = 1,
        *,
        times: int = 1,
    ) -> None:
        """Make the next `times` calls to `method` fail (429 carries `Retry-After`), to test retry handling.

        `fatal_error` and `internal_error` come as HTTP 200 with ok=false, as Slack sends them; 5xx as given.
        """
        with self._changed:
            fault = _Fault(error, status, retry_after if status == 429 else None)
            self._faults.setdefault(method, []).extend([fault] * times)

    def slow_next(self, method: str, delay_s: float, *, applied: bool = True, times: int = 1) -> None:
        """The next `times` calls to `method` answer `delay_s` late, so the client times out not knowing
        whether they worked. `applied`: they did (what makes a blind retry post twice); otherwise they hang
        and then fail with 503 (Slack never took them)."""
        fault = (
            _Fault(None, 200, None, delay_s) if applied else _Fault("service_unavailable", 503, None, delay_s)
        )
        with self._changed:
            self._faults.setdefault(method, []).extend([fault] * times)

    def remove_method(self, method: str) -> None:
        """Slack without `method` (an older or restricted workspace): calls answer `unknown_method`."""
        with self._changed:
            self.api.methods.pop(method, None)

    def hold_next(self, method: str) -> threading.Event:
        """The next call to `method` waits, not yet taken, until the returned event is set (a Slack that is
        slow to accept a call: what the caller does meanwhile can be looked at without timing it)."""
        release = threading.Event()
        with self._changed:
            self._holds.setdefault(method, []).append(release)
        return release

    def held(self, method: str) -> int:
        """Calls to `method` waiting on a hold right now."""
        with self._changed:
            return self._held.get(method, 0)

    def clear_faults(self) -> None:
        with self._changed:
            self._faults.clear()
            holds = [release for waiting in self._holds.values() for release in waiting]
            self._holds.clear()
        for release in holds:
            release.set()

    # -- observing ---------------------------------------------------------------------------------------

    def wait_for(self, predicate: Callable[[], T], timeout: float = 10.0) -> T:
        """Block until `predicate()` is truthy (re-checked on every call or change); raise at the deadline."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                value = predicate()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    recent = [c.method for c in self.calls[-10:]]
                    raise TimeoutError(f"condition not met within {timeout}s; last calls: {recent}")
                self._changed.wait(remaining)

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        with self._changed:
            return [c.params for c in self.calls if c.method == method]

    def timed_calls_to(self, method: str) -> list[ApiCall]:
        """The calls to `method` with when each arrived."""
        with self._changed:
            return [c for c in self.calls if c.method == method]

    def bot_messages(self, channel: str, thread_ts: str | None = None) -> list[dict[str, Any]]:
        """The bot's messages in a channel (all of them, or one thread's), oldest first."""
        with self._changed:
            found = self.workspace.channels.get(channel)
            messages = found.messages if found else []
            return [
                copy.deepcopy(m)
                for m in messages
                if m.get("bot_id") == self.workspace.bot_id
                and (thread_ts is None or m.get("thread_ts") == thread_ts)
            ]

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        return self.workspace.thread(channel, thread_ts)

    def statuses(self, channel: str, thread_ts: str) -> list[str]:
        """Every assistant thread status set on a thread, in order ("" clears it)."""
        with self._changed:
            return list(self.workspace.statuses.get((channel, thread_ts), []))

    def ephemeral_messages(self, user_id: str, channel: str | None = None) -> list[dict[str, Any]]:
        with self._changed:
            return [
                copy.deepcopy(m)
                for m in self.workspace.ephemeral
                if m["recipient"] == user_id and channel in (None, m["channel"])
            ]

    def home_view(self, user_id: str) -> dict[str, Any] | None:
        with self._changed:
            return copy.deepcopy(self.workspace.home_views.get(user_id))

    def open_modals(self) -> list[dict[str, Any]]:
        with self._changed:
            return [copy.deepcopy(self.workspace.views[v]) for v in self.workspace.open_modals]

    @property
    def feedback(self) -> list[dict[str, Any]]:
        with self._changed:
            return list(self.workspace.feedback)

    # -- delivering to the app ---------------------------------------------------------------------------

    def deliver(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        retry_reason: str | None = None,
        sign: bool = True,
        timestamp: int | float | None = None,
    ) -> httpx.Response:
        """POST one event in its `event_callback` envelope to the app, signed like Slack's."""
        event_id = event_id or f"Ev{next(self._event_ids):08X}"
        envelope = payloads.event_envelope(
            self.workspace, event, event_id=event_id, event_time=int(time.time())
        )
        headers = {"Content-Type": "application/json"}
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = retry_reason or "http_timeout"
        body = json.dumps(envelope).encode()
        return self._post("events", envelope, body, headers, sign=sign, timestamp=timestamp)

    def _post(
        self,
        kind: str,
        payload: dict[str, Any],
        body: bytes,
        headers: dict[str, str],
        *,
        sign: bool = True,
        timestamp: int | float | None = None,
    ) -> httpx.Response:
        if self.socket_mode is not None:
            return self.post_envelope(kind, payload)
        if self._server is None or not self._urls:
            raise RuntimeError("start the emulator and connect_app(...) before delivering")
        if sign:
            headers.update(payloads.sign(self._signing_secret, body, int(timestamp or time.time())))
        response = self._client().post(self._urls[kind], content=body, headers=headers)
        with self._changed:
            self.deliveries.append(Delivery(kind, payload, response.status_code, response.text))
            self._changed.notify_all()
        return response

    def post_raw(
        self, body: bytes, headers: dict[str, Any], *, kind: str = "events", sign_as: int | None = None
    ) -> httpx.Response:
        """POST arbitrary bytes and headers to the app (hostile-request tests); `sign_as`: sign the body with
        the app's secret and this timestamp (headers given win)."""
        if self._server is None or not self._urls:
            raise RuntimeError("start the emulator and connect_app(...) before delivering")
        if sign_as is not None:
            headers = {**payloads.sign(self._signing_secret, body, sign_as), **headers}
        response = self._client().post(self._urls[kind], content=body, headers=headers)
        with self._changed:
            self.deliveries.append(Delivery(kind, {"raw": True}, response.status_code, response.text))
            self._changed.notify_all()
        return response

    def _client(self) -> httpx.Client:
        """The calling thread's HTTP client for deliveries: Slack delivers each event on its own, so people
        posting at once in several threads never queue on one client's connection pool (its lock is what
        a burst of 50 otherwise measures)."""
        client = getattr(self._local, "client", None)
        if client is None or client.is_closed:
            client = httpx.Client(timeout=self._delivery_timeout_s, verify=self._tls)
            self._local.client = client
            with self._changed:
                self._clients.append(client)
        return client

    def envelope(self, event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
        """The `event_callback` envelope `deliver` would send for `event` (to send it altered)."""
        event_id = event_id or f"Ev{next(self._event_ids):08X}"
        return payloads.event_envelope(self.workspace, event, event_id=event_id, event_time=int(time.time()))

    def post_envelope(self, kind: str, payload: dict[str, Any]) -> httpx.Response:
        """One envelope over Socket Mode; the ack's payload comes back as an HTTP response would."""
        if self.socket_mode is None:
            raise RuntimeError("socket mode is not connected")
        acked, body = self.socket_mode.deliver(kind, payload)
        content = json.dumps(body).encode() if body else b""
        response = httpx.Response(
            200 if acked else 504, content=content, headers={"Content-Type": "application/json"}
        )
        with self._changed:
            self.deliveries.append(Delivery(kind, payload, response.status_code, response.text))
            self._changed.notify_all()
        return response

    def _post_form(self, kind: str, payload: dict[str, Any], form: dict[str, str]) -> httpx.Response:
        body = urlencode(form).encode()
        return self._post(kind, payload, body, {"Content-Type": "application/x-www-form-urlencoded"})

    def _deliver_if_connected(self, events: list[dict[str, Any]]) -> None:
        if self._urls or self.socket_mode is not None:
            for event in events:
                self.deliver(event)

    # -- acting as people --------------------------------------------------------------------------------

    def _member_channel(self, user_id: str, channel_id: str) -> Channel:
        channel = self.workspace.channels.get(channel_id)
        if channel is None:
            raise LookupError(f"no channel {channel_id}")
        if user_id not in self.workspace.users or user_id not in channel.members:
            raise LookupError(f"{user_id} is not a member of {channel_id}")
        return channel

    def _events_for(self, channel: Channel, message: dict[str, Any]) -> list[dict[str, Any]]:
        """What Slack sends the bot for a new message: `message`, plus `app_mention` when it is mentioned."""
        if self.bot_user_id not in channel.members:
            return []
        events = [payloads.message_event(message, channel.id, channel.channel_type)]
        if not channel.is_im and self.bot_user_id in payloads.mentions(message.get("text", "")):
            events.append(payloads.app_mention_event(message, channel.id))
        return events

    def post_as_user(self, user_id: str, channel: str, text: str, thread_ts: str | None = None) -> str:
        """Store a message typed by a person and deliver its events; returns its ts."""
        with self._changed:
            found = self._member_channel(user_id, channel)
            message = payloads.user_message(
                self.workspace, user_id, text, self.workspace.next_ts(), thread_ts
            )
            self.workspace.store_message(found, message)
            events = self._events_for(found, copy.deepcopy(message))
            self._changed.notify_all()
        self._deliver_if_connected(events)
        return message["ts"]

    def post_as_other_bot(
        self, bot_id: str, channel: str, text: str, thread_ts: str | None = None, username: str = "otherbot"
    ) -> str:
        """A message from another integration (subtype bot_message), which Sleuth must not answer."""
        with self._changed:
            found = self.workspace.channels[channel]
            message: dict[str, Any] = {
                "type": "message",
                "subtype": "bot_message",
                "bot_id": bot_id,
                "username": username,
                "text": text,
                "ts": self.workspace.next_ts(),
            }
            if thread_ts:
                message["thread_ts"] = thread_ts
            self.workspace.store_message(found, message)
            events = self._events_for(found, copy.deepcopy(message))
            self._changed.notify_all()
        self._deliver_if_connected(events)
        return message["ts"]

    def edit_as_user(self, user_id: str, channel: str, ts: str, text: str) -> None:
        """Edit a person's message and deliver the `message_changed` event."""
        with self._changed:
            found = self._member_channel(user_id, channel)
            message = found.find(ts)
            if message is None or message.get("user") != user_id:
                raise LookupError(f"{user_id} has no message {ts} in {channel}")
            previous = copy.deepcopy(message)
            event_ts = self.workspace.next_ts()
            message.update(
                text=text, blocks=payloads.rich_text_blocks(text), edited={"user": user_id, "ts": event_ts}
            )
            event = _hidden_change(
                "message_changed", found, event_ts, message=copy.deepcopy(message), previous_message=previous
            )
            self._changed.notify_all()
        self._deliver_if_connected([event])

    def delete_as_user(self, user_id: str, channel: str, ts: str) -> None:
        """Delete a person's message and deliver the `message_deleted` event."""
        with self._changed:
            found = self._member_channel(user_id, channel)
            message = found.find(ts)
            if message is None or message.get("user") != user_id:
                raise LookupError(f"{user_id} has no message {ts} in {channel}")
            previous = self.workspace.remove_message(found, ts)
            event_ts = self.workspace.next_ts()
            event = _hidden_change(
                "message_deleted", found, event_ts, deleted_ts=ts, previous_message=previous
            )
            self._changed.notify_all()
        self._deliver_if_connected([event])

    def leave_channel(self, user_id: str, channel: str) -> None:
        """A person leaves (or is removed from) a channel: the `member_left_channel` event."""
        with self._changed:
            found = self._member_channel(user_id, channel)
            found.members.remove(user_id)
            event = {
                "type": "member_left_channel",
                "user": user_id,
                "channel": found.id,
                "channel_type": "G" if found.is_private else "C",
                "team": self.workspace.team_id,
                "event_ts": self.workspace.next_ts(),
            }
            self._changed.notify_all()
        self._deliver_if_connected([event])

    def delete_channel(self, channel: str) -> None:
        """An admin deletes a channel: its messages are gone and the `channel_deleted` event goes out."""
        with self._changed:
            if self.workspace.channels.pop(channel, None) is None:
                raise LookupError(f"no channel {channel}")
            event = {"type": "channel_deleted", "channel": channel, "event_ts": self.workspace.next_ts()}
            self._changed.notify_all()
        self._deliver_if_connected([event])

    def open_app_home(self, user_id: str, tab: str = "home") -> httpx.Response:
        """The person opens the app's Home or Messages tab: an `app_home_opened` event."""
        with self._changed:
            channel = self.workspace.open_dm(user_id)
            event: dict[str, Any] = {
                "type": "app_home_opened",
                "user": user_id,
                "channel": channel.id,
                "tab": tab,
                "event_ts": self.workspace.next_ts(),
            }
            view = self.workspace.home_views.get(user_id)
            if tab == "home" and view is not None:
                event["view"] = copy.deepcopy(view)
        return self.deliver(event)

    def _connections_open(self, token: str) -> Reply:
        """Socket Mode's WebSocket URL, for the app-level token only (as Slack: not_allowed_token_type)."""
        if token == self.bot_token:
            raise ApiError("not_allowed_token_type")
        if token != self.app_token:
            raise ApiError("invalid_auth")
        if self.socket_mode is None:
            raise ApiError("socket_mode_not_enabled")
        return 200, {"ok": True, "url": self.socket_mode.new_url()}, {}

    # -- HTTP side ---------------------------------------------------------------------------------------

    def handle_oidc_authorize(self, query: dict[str, Any], login: str | None) -> tuple[int, dict[str, str]]:
        with self._changed:
            return self.oidc.authorize({k: str(v) for k, v in query.items()}, login)

    def handle_api(self, method: str, params: dict[str, Any], token: str | None) -> Reply:
        """One Web API request: auth, scopes, injected faults, then the method; records the call and wakes
        waiters."""
        with self._changed:
            holds = self._holds.get(method)
            hold = holds.pop(0) if holds else None
            if hold is not None:
                self._held[method] = self._held.get(method, 0) + 1
                self._changed.notify_all()
        if hold is not None:
            hold.wait(HOLD_MAX_S)
            with self._changed:
                self._held[method] -= 1
        if self.api_latency_s:
            time.sleep(self.api_latency_s)  # outside the lock, like the network
        reply, delay_s = self._api_reply(method, params, token)
        if delay_s:
            time.sleep(delay_s)  # outside the lock: the workspace keeps answering other calls
        return reply

    def _api_reply(self, method: str, params: dict[str, Any], token: str | None) -> tuple[Reply, float]:
        headers: dict[str, str] = {}
        with self._changed:
            with contextlib.suppress(ApiError):  # undecodable: recorded raw, and the call answers the error
                params = normalize_params(params)
            self.calls.append(ApiCall(method, params, time.monotonic()))
            faults = self._faults.get(method)
            try:
                if method in OIDC_METHODS:  # client credentials, or the signed-in user's own token
                    return (200, self.api.call(method, {**params, USER_TOKEN: token}), headers), 0.0
                if not token:
                    raise ApiError("not_authed")
                if method == "apps.connections.open":
                    return self._connections_open(token), 0.0
                if token != self.bot_token:
                    raise ApiError("invalid_auth")
                headers["x-oauth-scopes"] = ",".join(sorted(self.scopes))
                headers["x-accepted-oauth-scopes"] = ",".join(METHOD_SCOPES.get(method, ()))
                check_scopes(method, self.scopes)
                if faults:
                    fault = faults.pop(0)
                    if fault.error is None:
                        return (200, self.api.call(method, params), headers), fault.delay_s
                    if fault.retry_after is not None:
                        headers["Retry-After"] = str(fault.retry_after)
                    return (fault.status, {"ok": False, "error": fault.error}, headers), fault.delay_s
                return (200, self.api.call(method, params), headers), 0.0
            except ApiError as exc:
                return (200, {"ok": False, "error": exc.error, **exc.extra}, headers), 0.0
            finally:
                self._changed.notify_all()


def _hidden_change(subtype: str, channel: Channel, event_ts: str, **fields: Any) -> dict[str, Any]:
    """The event Slack sends when a message is edited or deleted (`hidden`: no notification)."""
    return {
        "type": "message",
        "subtype": subtype,
        "hidden": True,
        **fields,
        "channel": channel.id,
        "ts": event_ts,
        "event_ts": event_ts,
        "channel_type": channel.channel_type,
    }
