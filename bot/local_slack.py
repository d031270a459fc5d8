"""Sleuth against the local Slack emulator: the real app on 127.0.0.1, for the demo, the benchmark and tests.

with SlackEmulator() as slack, local_bot(rt, slack) as bot:
    ids = add_people(slack, people_json)           # email -> Slack user id
    ts = slack.post_as_user(ids["alice@acme.io"], "C0GENERAL", "<@UBOT> why ...?")

`serve_process` runs `sleuth serve` itself as a separate process instead (what the benchmark measures, so the
emulator's and the simulated people's CPU is not Sleuth's).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
from pydantic import SecretStr

from bot.app import make_client
from bot.jobs import DEFAULT_LEASE_S, Clock
from bot.runtime import Runtime
from bot.server import EVENTS_PATH, SlackBot
from bot.socket_mode import socket_mode_handler
from bot.testing.http_server import serve_asgi
from bot.testing.slack_emulator import SlackEmulator
from connectors.local_servers import free_port

LOCAL_SIGNING_SECRET = "51e07b0a7c0d4f6e9a8b3c2d1e0f4a5b"  # the format of a real one (32 hex)
STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 40.0
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
            handler = socket_mode_handler(bot.app, slack.app_token)
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
            bot.sync_trigger.close()
            bot.pool.stop()
            bot.status.close()


@contextmanager
def serve_process(
    slack: SlackEmulator,
    data_dir: Path,
    examples_dir: Path,
    *,
    args: tuple[str, ...] = (),
    settings: Mapping[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """`sleuth serve [args]` as a process of its own on `data_dir` (hash embedder, this checkout's code),
    connected to `slack` over signed HTTP once it answers /healthz; stopped with SIGTERM on exit. Its output
    goes to data_dir/serve.log. Only SLEUTH_* settings given here apply (no .env, no caller's SLEUTH_*);
    `settings` adds more (`{"SLEUTH_SLACK_TIMEOUT_S": "2"}`)."""
    port, log = free_port(), data_dir / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    code = str(Path(__file__).resolve().parents[1])
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, (code, env.get("PYTHONPATH")))),
        SLEUTH_DATA_DIR=str(data_dir),
        SLEUTH_EXAMPLES_DIR=str(examples_dir),
        SLEUTH_EMBEDDER__KIND="hash",
        SLEUTH_SLACK_BOT_TOKEN=slack.bot_token,
        SLEUTH_SLACK_SIGNING_SECRET=LOCAL_SIGNING_SECRET,
        SLEUTH_SLACK_API_URL=slack.api_url,
        SLEUTH_HOST="127.0.0.1",
        SLEUTH_PORT=str(port),
    )
    env.update(settings or {})
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve", *args],
            cwd=data_dir,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}/healthz", log)
        slack.connect_app(f"http://127.0.0.1:{port}{EVENTS_PATH}", LOCAL_SIGNING_SECRET)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_healthy(
    proc: subprocess.Popen[bytes], url: str, log: Path, timeout_s: float = STARTUP_TIMEOUT_S
) -> None:
    """Until `sleuth serve`'s health check answers; its log tail in the error when it exits or never does."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sleuth serve exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)  # polling another process's port: there is nothing to wait on
    raise TimeoutError(f"sleuth serve did not start:\n{log.read_text(errors='replace')[-3000:]}")
