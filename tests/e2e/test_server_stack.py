"""The whole product on both stacks: SQLite + embedded Chroma, and PostgreSQL + a Chroma server.

In process: a mention is answered once in its thread with citations, and a follow-up continues the thread from
its checkpoint (SQLite file, or LangGraph's Postgres checkpointer). As a company runs it: `sleuth serve
--workers 0` only takes Slack's deliveries, `sleuth worker --processes 2` answers, and a worker process killed
mid-answer has its job finished by another, answered once into the same placeholder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.jobs import DONE, slack_jobs
from bot.local_slack import GENERAL, LOCAL_SIGNING_SECRET, add_people, free_port, wait_healthy
from bot.receipt import PLACEHOLDER
from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_render import format_message
from connectors.database import make_engine, sqlite_url
from graph_flows.flow import thread_id
from tests.conftest import STACKS
from tests.e2e.conftest import EXAMPLES, REPO, EnvFactory

CROSS = "why did the 4.2 Android release slip?"
JOB_LEASE_S = 3.0
TAKEOVER_BUDGET_S = 45.0


@pytest.mark.parametrize("stack", STACKS)
def test_a_thread_is_answered_and_continued(make_env: EnvFactory, stack: str) -> None:
    env = make_env(kind=stack)
    ts = env.mention("alice@acme.io", CROSS)
    [answer] = env.wait_answers(GENERAL, ts)
    shown = format_message(answer)
    [job] = env.bot.jobs.for_message(env.slack.workspace.team_id, GENERAL, ts)
    sources = job.result["answer"]["sources"] if job.result else []
    assert sources and all(f"[{s['n']}] {s['title']}" in shown for s in sources) and "*Sources*" in shown
    assert len(env.slack.bot_messages(GENERAL, ts)) == 1  # the placeholder became the answer

    env.slack.post_as_user(
        env.ids["alice@acme.io"], GENERAL, "which company makes those motors?", thread_ts=ts
    )
    _, second = env.wait_answers(GENERAL, ts, count=2)
    history = env.bot.runtime.investigator.history(thread_id(env.slack.workspace.team_id, GENERAL, ts))
    assert second["thread_ts"] == ts and history["turn"] == 2
    backend = type(env.bot.runtime.investigator.flow.checkpointer).__name__
    assert backend == {"embedded": "SqliteSaver", "servers": "PostgresSaver"}[stack]


@contextmanager
def _process(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *args], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _claimed_by(db_url: str) -> str | None:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(
                select(slack_jobs.c.claimed_by).where(slack_jobs.c.claimed_by.is_not(None))
            ).scalar()
    finally:
        engine.dispose()


@pytest.mark.parametrize("stack", STACKS)
def test_a_worker_killed_mid_answer_is_replaced_by_another(
    stack: str, synced_data: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    data = tmp_path / "data"
    settings: dict[str, Any] = {}
    if stack == "servers":
        settings = request.getfixturevalue("synced_servers").fresh(data)
    else:
        import shutil

        shutil.copytree(synced_data, data)
    db_url = settings.get("database_url") or sqlite_url(data)
    port, log = free_port(), tmp_path / "processes.log"
    with SlackEmulator() as slack:
        ids = add_people(slack, EXAMPLES / "people.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
        env.update({f"SLEUTH_{k.upper()}": str(v) for k, v in settings.items()})
        env.update(PYTHONPATH=str(REPO), SLEUTH_DATA_DIR=str(data), SLEUTH_EMBEDDER__KIND="hash",
                   SLEUTH_EXAMPLES_DIR=str(EXAMPLES), SLEUTH_SLACK_BOT_TOKEN=slack.bot_token,
                   SLEUTH_SLACK_SIGNING_SECRET=LOCAL_SIGNING_SECRET, SLEUTH_SLACK_API_URL=slack.api_url,
                   SLEUTH_SLACK_TIMEOUT_S="2", SLEUTH_HOST="127.0.0.1", SLEUTH_PORT=str(port),
                   SLEUTH_JOB_LEASE_S=str(JOB_LEASE_S),
                   SLEUTH_SLACK_STREAM_ANSWERS="false")  # the answer goes into the placeholder (chat.update)  # fmt: skip
        slack.slow_next("chat.update", 120.0, applied=False)  # the first answer's update hangs: kill then
        with (
            _process(["serve", "--workers", "0"], env, log) as serve,
            _process(["worker", "--processes", "2", "--threads", "1"], env, log),
        ):
            wait_healthy(serve, f"http://127.0.0.1:{port}/healthz", log)
            slack.connect_app(f"http://127.0.0.1:{port}/slack/events", LOCAL_SIGNING_SECRET)
            ts = slack.post_as_user(ids["alice@acme.io"], GENERAL, f"<@{slack.bot_user_id}> {CROSS}")
            slack.wait_for(lambda: slack.calls_to("chat.update"), timeout=90)
            victim = _claimed_by(db_url)
            assert victim is not None
            os.kill(int(victim.split(":")[1]), signal.SIGKILL)
            [placeholder] = slack.bot_messages(GENERAL, ts)
            assert placeholder["text"] == PLACEHOLDER  # the killed worker never delivered
            slack.clear_faults()
            killed = time.monotonic()
            slack.wait_for(
                lambda: "*Sources*" in format_message(slack.bot_messages(GENERAL, ts)[0]),
                timeout=TAKEOVER_BUDGET_S,
            )
            print(f"answered {time.monotonic() - killed:.1f} s after the kill")  # shown with -s
            [answer] = slack.bot_messages(GENERAL, ts)
            assert answer["ts"] == placeholder["ts"]  # the same placeholder, updated once more
            assert sum(1 for c in slack.calls_to("chat.postMessage") if c.get("thread_ts") == ts) == 1
            finisher = _claimed_by(db_url)
            assert finisher is not None and finisher != victim
        engine = make_engine(db_url)
        with engine.connect() as conn:
            assert conn.execute(select(slack_jobs.c.status, slack_jobs.c.attempts)).all() == [(DONE, 2)]
        engine.dispose()
