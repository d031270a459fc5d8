"""Scheduled sync: which sources are due, and a run that syncs them once (the lease keeps it to one)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.runtime import Runtime
from bot.scheduler import SyncScheduler
from bot.settings import EmbedderConfig, Settings
from connectors.catalog import SourceEntry
from connectors.sync_service import due_sources
from tests.conftest import EXAMPLES

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_due_sources_by_interval() -> None:
    entries = [SourceEntry("a", "folder", {}, 3600, ""), SourceEntry("b", "folder", {}, 3600, ""),
               SourceEntry("c", "folder", {}, 60, "")]  # fmt: skip
    status = {
        "a": {"last_finished": (NOW - timedelta(minutes=30)).isoformat()},
        "b": {"last_finished": (NOW - timedelta(hours=2)).isoformat()},
        "c": {"last_finished": None},
    }
    assert due_sources(entries, status, NOW) == ["b", "c"]


def test_a_run_syncs_what_is_due_and_then_nothing(tmp_path: Path) -> None:
    rt = Runtime(
        Settings(
            _env_file=None, data_dir=tmp_path, examples_dir=EXAMPLES, embedder=EmbedderConfig(kind="hash")
        )
    )
    scheduler = SyncScheduler(rt.sync_service, clock=lambda: datetime.now(UTC))
    assert scheduler.run_once() == ["acme"]
    assert rt.store.stats()["documents"] > 80
    assert scheduler.run_once() == []
