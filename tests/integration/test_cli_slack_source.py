"""A Slack source through the `sleuth` command: added with its token from the environment, synced, its
permissions re-read by `sleuth sync --permissions`, and a picked channel the bot is not in listed by
`sleuth sources failures`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.testing.slack_emulator import SlackEmulator


@pytest.fixture
def slack() -> Iterator[SlackEmulator]:
    with SlackEmulator() as emulator:
        emulator.add_user("U1", "ann", email="ann@acme.io")
        emulator.add_user("U2", "bob", email="bob@acme.io")
        emulator.add_channel("C1", "eng-help", members=["U1", "U2"])
        emulator.add_channel("C2", "ops", members=["U1"], bot_member=False)
        emulator.add_channel("G1", "launch", members=["U1", "U2"], is_private=True)
        emulator.post_as_user("U1", "C1", "Where is the on-call rota? It moved to the ops wiki.")
        emulator.post_as_user("U1", "G1", "Bluebird launches in May.")
        yield emulator


def test_add_sync_permissions_and_failures(slack: SlackEmulator, tmp_path: Path) -> None:
    env = {
        "SLEUTH_DATA_DIR": str(tmp_path / "data"),
        "SLEUTH_EMBEDDER__KIND": "hash",
        "SLACK_TOKEN": slack.bot_token,
    }

    def run(*args: str) -> str:
        result = CliRunner().invoke(app, list(args), env=env)
        assert result.exit_code in (0, 1), result.output
        return " ".join(result.output.split())

    added = run("sources", "add", "slack", "--name", "chat", "--token-env", "SLACK_TOKEN",
                "--set", "channels=eng-help,ops", "--set", f"base_url={slack.api_url}")  # fmt: skip
    assert "added source chat (slack)" in added
    assert "sync chat: partial" in run("sync", "chat")  # ops: the bot is not in it
    failures = json.loads(CliRunner().invoke(app, ["sources", "failures", "chat", "--json"], env=env).output)
    assert [f["id"] for f in failures] == ["chat:C2"]
    slack.leave_channel("U2", "G1")
    assert "changed 1" in run("sync", "--permissions", "chat")
