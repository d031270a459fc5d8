"""Fixtures: the examples synced once per session, then per test a copy of that data, the Slack emulator, and
the real Sleuth app served on 127.0.0.1 with its workers (or none, for tests that drive the queue by hand)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bot.local_slack import GENERAL, add_people, local_bot
from bot.receipt import is_placeholder
from bot.runtime import Runtime
from bot.schema import upgrade
from bot.server import SlackBot
from bot.settings import Settings
from bot.testing.slack_emulator import SlackEmulator
from connectors.sync import sync_source
from tests.conftest import Servers

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "acme"
WAIT_S = 30.0


def make_settings(data_dir: Path, **extra: Any) -> Settings:
    return Settings(
        _env_file=None, data_dir=data_dir, embedder={"kind": "hash"}, examples_dir=EXAMPLES, **extra
    )


@pytest.fixture(scope="session")
def synced_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("synced") / "data"
    rt = Runtime(make_settings(data))
    for entry in rt.sources():
        summary = sync_source(rt.store, rt.connector(entry.name))
        if summary.status == "error":
            raise RuntimeError(f"sync of the examples failed: {summary.error}")
    rt.engine.dispose()
    return data


@dataclass(frozen=True)
class SyncedServers:
    """The examples synced once into the servers: a template database, a Chroma database, the data dir."""

    servers: Servers
    data: Path  # the vault key file lives here
    template: str  # a PostgreSQL database to copy per test
    chroma_database: str

    def fresh(self, data: Path) -> dict[str, Any]:
        """Settings for a test's own copy: data dir, database from the template, Chroma database copied."""
        shutil.copytree(self.data, data)
        chroma = self.servers.chroma
        copy = chroma.database()
        chroma.copy_database(self.chroma_database, copy)
        return {"database_url": self.servers.postgres.database(self.template), "chroma_url": chroma.url,
                "chroma_database": copy}  # fmt: skip


@pytest.fixture(scope="session")
def synced_servers(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> SyncedServers:
    data = tmp_path_factory.mktemp("synced-servers") / "data"
    data.mkdir()  # each test starts from a copy of this data dir
    url, chroma_database = servers.postgres.database(), servers.chroma.database()
    rt = Runtime(make_settings(data, database_url=url, chroma_url=servers.chroma.url,
                               chroma_database=chroma_database))  # fmt: skip
    upgrade(rt.engine)
    for entry in rt.sources():
        summary = sync_source(rt.store, rt.connector(entry.name))
        if summary.status == "error":
            raise RuntimeError(f"sync of the examples failed: {summary.error}")
    rt.vault  # noqa: B018 -- its key check is part of the copied data
    rt.engine.dispose()  # a template database must have no connections
    return SyncedServers(servers, data, url.rsplit("/", 1)[1], chroma_database)


@dataclass
class FakeClock:
    now: float = field(default_factory=time.time)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class SlackEnv:
    slack: SlackEmulator
    bot: SlackBot
    ids: dict[str, str]  # email -> Slack user id
    clock: FakeClock

    def mention(self, email: str, text: str, channel: str = GENERAL, thread_ts: str | None = None) -> str:
        """Posts the question and waits until Sleuth's intake settled (acked, and acknowledged visibly)."""
        ts = self.slack.post_as_user(
            self.ids[email], channel, f"<@{self.slack.bot_user_id}> {text}", thread_ts
        )
        self.settle()
        return ts

    def settle(self) -> None:
        """Waits for the visible acknowledgements that run after Slack's ack (`bot.receipt`)."""
        if not self.bot.receipts.settle(WAIT_S):
            raise TimeoutError("acknowledgements still running")

    def answers(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """Sleuth's finished replies in a thread (placeholders still "Looking into it…" or "Queued…", and the
        thread's root when Sleuth posted it, i.e. a `/sleuth ask` echo, excluded)."""
        return [
            m
            for m in self.slack.bot_messages(channel, thread_ts)
            if not is_placeholder(m.get("text", "")) and m["ts"] != thread_ts
        ]

    def wait_answers(self, channel: str, thread_ts: str, count: int = 1) -> list[dict[str, Any]]:
        """Waits for `count` finished answers in the thread, then for every job to be marked done."""
        found = self.slack.wait_for(lambda: len(self.answers(channel, thread_ts)) >= count, timeout=WAIT_S)
        if not found or not self.bot.jobs.wait_idle(WAIT_S):
            raise TimeoutError("jobs still running")
        return self.answers(channel, thread_ts)


EnvFactory = Callable[..., SlackEnv]


@pytest.fixture
def make_env(synced_data: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[EnvFactory]:
    stack = ExitStack()
    runtimes: list[Runtime] = []

    def make(
        *,
        workers: int = 2,
        lease_s: float = 120.0,
        socket_mode: bool = False,
        kind: str = "embedded",
        **settings: Any,
    ) -> SlackEnv:
        """`kind="servers"`: PostgreSQL and the Chroma server instead of the SQLite file and embedded Chroma."""
        data = tmp_path / f"data{len(runtimes)}"
        if kind == "servers":
            settings.update(request.getfixturevalue("synced_servers").fresh(data))
        else:
            shutil.copytree(synced_data, data)
        rt = Runtime(make_settings(data, **settings))
        runtimes.append(rt)
        clock = FakeClock()
        slack = stack.enter_context(SlackEmulator())
        ids = add_people(slack, EXAMPLES / "people.json")
        bot = stack.enter_context(
            local_bot(rt, slack, workers=workers, clock=clock, lease_s=lease_s, socket_mode=socket_mode)
        )
        return SlackEnv(slack, bot, ids, clock)

    try:
        yield make
    finally:
        stack.close()
        for rt in runtimes:
            rt.engine.dispose()


@pytest.fixture(params=["http", "socket_mode"])
def env(make_env: EnvFactory, request: pytest.FixtureRequest) -> SlackEnv:
    """The default environment, once over signed HTTP and once over Socket Mode: every test that takes it runs
    on both transports (tests of one transport's details use `make_env`)."""
    return make_env(socket_mode=request.param == "socket_mode")
