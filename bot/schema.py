"""Schema migrations with Alembic: `sleuth db upgrade` (and the start of `serve` and `worker`) brings the database,
SQLite or PostgreSQL, to the newest revision in `bot/migrations/versions/`.

The tables are declared next to the code that owns them (the store, the job queue, the vault...); this module
only lists them for Alembic. A database made before migrations existed (each store created its own tables) is
stamped at the baseline rather than migrated, since it already has the baseline's tables. Adding a column: add
it to the table, then `alembic revision --autogenerate` with `bot.schema.alembic_config` (see
docs/architecture.md) writes the next revision.
"""

from __future__ import annotations

import fcntl
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, MetaData, inspect, text

log = logging.getLogger(__name__)
_IN_PROCESS = threading.Lock()

SCRIPTS = Path(__file__).resolve().parent / "migrations"
BASELINE = "0001"
MIGRATION_LOCK_KEY = 0x5E0718  # PostgreSQL advisory lock held while one process migrates
_BASELINE_MARKERS = ("documents", "slack_jobs", "sources")  # tables every pre-migration database has


def all_metadata() -> list[MetaData]:
    """Every table Sleuth keeps, for Alembic's comparisons (imported here, never at module import)."""
    from bot.audience import channel_policies
    from bot.channel_activity import channel_activity
    from bot.channels import channel_settings
    from bot.digest import admin_digests
    from bot.feedback import slack_feedback
    from bot.identity.linking import oauth_links
    from bot.identity.states import metadata as states
    from bot.jobs import slack_jobs
    from bot.vault import metadata as vault
    from connectors.catalog import sources
    from connectors.knowledge.store import metadata as knowledge  # the store owns its tables
    from connectors.leases import leases
    from connectors.sync_hints import sync_hints
    from graph_flows.gaplog import gap_entries

    owned = [oauth_links, slack_jobs, slack_feedback, channel_policies, leases, sources, admin_digests,
             gap_entries, channel_settings, channel_activity, sync_hints]  # fmt: skip
    return [states, vault, knowledge, *(table.metadata for table in owned)]  # owned: one table, own MetaData


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["engine"] = engine
    return config


def head() -> str:
    return str(ScriptDirectory(str(SCRIPTS)).get_current_head())


def current(engine: Engine) -> str | None:
    """The database's revision (None: never migrated)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Migrates to the newest revision; returns (revision before, revision after).

    `serve` and every `worker` call this at start, often at the same moment: one migrates while the others
    wait (an advisory lock on PostgreSQL, a file lock beside the SQLite file), then find nothing left to do.
    """
    with (
        _IN_PROCESS,
        _migration_lock(engine),
    ):  # Alembic's `context` is process-global: one at a time here too
        return _upgrade(engine)


def bring_to_head(engine: Engine, *, stamp_new: bool = True) -> None:
    """A database with no tables is stamped at the head (the features create the newest tables); one stamped at
    an older revision is migrated; one that has tables but no revision (made before stamping) is left to
    `sleuth db upgrade`, which stamps it at the baseline first."""
    revision = current(engine)
    if revision == head():
        return
    if revision is not None:
        upgrade(engine)
        return
    with engine.connect() as conn:
        empty = not inspect(conn).get_table_names()
    if empty and stamp_new:  # written directly: Alembic's env (every table's module) is not loaded for it
        with _IN_PROCESS, _migration_lock(engine), engine.begin() as conn:
            MigrationContext.configure(conn).stamp(ScriptDirectory(str(SCRIPTS)), "head")


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK_KEY})
                conn.commit()
        return
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _upgrade(engine: Engine) -> tuple[str | None, str]:
    before = current(engine)
    config = alembic_config(engine)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        if before is None and set(_BASELINE_MARKERS) & set(inspect(conn).get_table_names()):
            command.stamp(config, BASELINE)
            log.info("pre-migration database stamped", extra={"revision": BASELINE})
        command.upgrade(config, "head")
    after = current(engine)
    if after != before:
        log.info("database migrated", extra={"from": before, "to": after})
    return before, str(after)
