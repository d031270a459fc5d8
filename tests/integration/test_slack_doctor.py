"""`sleuth doctor --slack` against the Slack emulator and a served Bolt app: each broken piece of a setup is
named, with the fix."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from slack_bolt import App
from slack_sdk import WebClient

from bot.local_slack import LOCAL_SIGNING_SECRET
from bot.manifest import bot_scopes, load_manifest
from bot.server import build_asgi
from bot.settings import Settings
from bot.slack_doctor import check_slack
from bot.testing.http_server import serve_asgi
from bot.testing.slack_emulator import SlackEmulator

ROOT = Path(__file__).resolve().parents[2]
WITHOUT_CHANNELS_READ = bot_scopes(load_manifest()) - {"channels:read"}


@pytest.fixture
def slack() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        yield emulator


@pytest.fixture
def served(slack: SlackEmulator) -> Iterator[str]:
    """A Bolt app as `sleuth serve` serves it (our ASGI routes), talking to the emulator."""
    client = WebClient(token=slack.bot_token, base_url=slack.api_url)
    app = App(client=client, signing_secret=LOCAL_SIGNING_SECRET, process_before_response=True)
    with serve_asgi(build_asgi(app, signing_secret=LOCAL_SIGNING_SECRET)) as url:
        yield url


def _settings(slack: SlackEmulator, public_url: str, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": SecretStr(slack.bot_token),
        "slack_api_url": slack.api_url,
        "slack_signing_secret": SecretStr(LOCAL_SIGNING_SECRET),
        "public_url": public_url,
        **extra,
    }
    return Settings(_env_file=None, **values)


def _failed(settings: Settings) -> dict[str, str]:
    return {c.name: f"{c.detail} | {c.fix}" for c in check_slack(settings) if c.status == "fail"}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_complete_setup_passes(slack: SlackEmulator, served: str) -> None:
    checks = {c.name: c for c in check_slack(_settings(slack, served))}
    assert _failed(_settings(slack, served)) == {}
    assert checks["request url"].status == "ok" and checks["scopes"].status == "ok"
    assert checks["https"].status == "warn"  # http://127.0.0.1: fine here, not for Slack


def test_a_token_missing_a_scope_names_it_and_says_reinstall(served: str) -> None:
    with SlackEmulator(scopes=WITHOUT_CHANNELS_READ) as slack:
        failed = _failed(_settings(slack, served))
    assert list(failed) == ["scopes"]
    assert "lacks channels:read" in failed["scopes"] and "reinstall" in failed["scopes"]


@pytest.mark.parametrize(
    ("change", "check", "says"),
    [
        ({"slack_bot_token": SecretStr("xoxb-revoked")}, "auth.test", "invalid_auth"),
        ({"slack_bot_token": SecretStr("xoxp-user-token")}, "bot token", "not a bot token"),
        ({"slack_signing_secret": SecretStr("client-secret-by-mistake")}, "signing secret", "32 hex"),
        ({"slack_app_token": SecretStr("xoxb-wrong-kind")}, "socket mode", "xapp-"),
    ],
    ids=["revoked-token", "user-token", "bad-signing-secret", "bad-app-token"],
)
def test_each_broken_piece_is_named(
    slack: SlackEmulator, served: str, change: dict[str, Any], check: str, says: str
) -> None:
    failed = _failed(_settings(slack, served, **change))
    assert check in failed and says in failed[check]


def test_socket_mode_tries_the_app_token_with_apps_connections_open(
    slack: SlackEmulator, served: str
) -> None:
    """A well-formed xapp- token is not enough: Slack must hand out a WebSocket URL for it."""
    socket_mode = {"slack_app_token": SecretStr(slack.app_token), "slack_signing_secret": None}
    assert (
        _failed(_settings(slack, served, **socket_mode))
        .get("socket mode", "")
        .startswith(
            "apps.connections.open refused the app-level token (socket_mode_not_enabled) | turn on Settings"
        )
    )  # the app has no Socket Mode yet
    slack.connect_socket_mode()  # stopped with the emulator
    revoked = {**socket_mode, "slack_app_token": SecretStr("xapp-1-A1-1-revoked")}
    assert "(invalid_auth)" in _failed(_settings(slack, served, **revoked))["socket mode"]
    checks = {c.name: c for c in check_slack(_settings(slack, served, **socket_mode))}
    assert checks["socket mode"].status == "ok"
    assert len(slack.calls_to("apps.connections.open")) == 3  # each try asked Slack


def test_an_unreachable_public_url_says_to_start_serve(slack: SlackEmulator) -> None:
    failed = _failed(_settings(slack, f"http://127.0.0.1:{_closed_port()}"))
    assert list(failed) == ["public url"] and "start `sleuth serve`" in failed["public url"]


def test_a_signing_secret_serve_does_not_share_fails_url_verification(
    slack: SlackEmulator, served: str
) -> None:
    other = SecretStr("0" * 32)
    failed = _failed(_settings(slack, served, slack_signing_secret=other))
    assert list(failed) == ["request url"]


def test_the_cli_names_the_missing_scope(served: str, tmp_path: Path) -> None:
    with SlackEmulator(scopes=WITHOUT_CHANNELS_READ) as slack:
        (tmp_path / ".env").write_text(
            f"SLEUTH_SLACK_BOT_TOKEN={slack.bot_token}\nSLEUTH_SLACK_API_URL={slack.api_url}\n"
            f"SLEUTH_SLACK_SIGNING_SECRET={LOCAL_SIGNING_SECRET}\nSLEUTH_PUBLIC_URL={served}\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")} | {"PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli", "doctor", "--slack"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "fail scopes: the bot token lacks channels:read" in " ".join(done.stdout.split())
