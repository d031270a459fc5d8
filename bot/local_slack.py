"""Sleuth against the local Slack emulator: the real app on 127.0.0.1, for the demo, the benchmark and tests.

with SlackEmulator() as slack, local_bot(rt, slack) as bot:
    ids = add_people(slack, people_json)           # email -> Slack user id
    ts = slack.post_as_user(ids["alice@acme.io"], "C0GENERAL", "<@UBOT> why ...?")
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from pydantic import SecretStr

from bot.app import make_client
from bot.jobs import DEFAULT_LEASE_S, Clock
from bot.runtime import Runtime
from bot.server import EVENTS_PATH, SlackBot
from bot.socket_mode import socket_mode_handler
from bot.testing.http_server import serve_asgi
from bot.testing.slack_emulator import SlackEmulator

LOCAL_SIGNING_SECRET = "51e07b0a7c0d4f6e9a8b3c2d1e0f4a5b"  # the format of a real one (32 hex)
SOCKET_PING_S = 1.0  # a dropped connection is noticed within about this long
GENERAL = "C0GENERAL"


def add_people(slack: SlackEmulator, people_json: Path, *, channel: str = GENERAL) -> dict[str, str]:
    """Every person in `people.json` as a Slack user, all in #general with the bot; returns email -> user id."""
    people = json.loads(people_json.read_text(encoding="utf-8"))["users"]
    ids: dict[str, str] = {}
    for person in people:
        slack.add_user(
            person["slack_id"], person["email"].split("@")[0], real_name=person["name"], email=person["email"]
        )
        ids[person["email"]] = person["slack_id"]
    slack.add_channel(channel, "general", members=list(ids.values()))
    return ids


@contextmanager
def local_bot(
    rt: Runtime,
    slack: SlackEmulator,
    *,
    workers: int = 2,
    clock: Clock | None = None,
    lease_s: float = DEFAULT_LEASE_S,
    socket_mode: bool = False,
) -> Iterator[SlackBot]:
    """The real app served on 127.0.0.1 and connected to `slack`, over signed HTTP or (`socket_mode`) over the
    emulator's Socket Mode WebSocket; `workers=0` leaves the pool stopped."""
    settings = rt.settings.model_copy(
        update={
            "slack_api_url": slack.api_url,
            "slack_bot_token": SecretStr(slack.bot_token),
            "slack_signing_secret": None if socket_mode else SecretStr(LOCAL_SIGNING_SECRET),
            "slack_app_token": SecretStr(slack.app_token) if socket_mode else None,
        }
    )
    client = make_client(settings)
    extra = {"clock": clock} if clock is not None else {}
    bot = SlackBot(rt, client=client, settings=settings, workers=max(workers, 1), lease_s=lease_s, **extra)
    with serve_asgi(bot.asgi) as url, ExitStack() as stack:
        if socket_mode:
            server = slack.connect_socket_mode()
            handler = socket_mode_handler(bot.app, slack.app_token, ping_interval_s=SOCKET_PING_S)
            handler.connect()
            stack.callback(handler.close)
            server.wait_connected()
        else:
            slack.connect_app(f"{url}{EVENTS_PATH}", LOCAL_SIGNING_SECRET)
        if workers:
            bot.pool.start()
        try:
            yield bot
        finally:
            bot.receipts.close()
            bot.pool.stop()
            bot.status.close()
