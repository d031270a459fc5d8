"""Migrations on both databases: an empty one reaches the newest revision with every table and the lexical
index of its kind, a second run changes nothing, and a database made before migrations is stamped, not re-made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import MetaData, inspect

from bot.jobs import JobQueue
from bot.migrations.env_filter import include_name as _include_name
from bot.schema import all_metadata, current, head, upgrade
from connectors.database import sqlite_url
from connectors.knowledge.store import KnowledgeStore
from tests.conftest import STACKS, Stack

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.parametrize("stack", STACKS, indirect=True)


def test_an_empty_database_is_migrated_to_the_newest_revision(stack: Stack) -> None:
    engine = stack.engine()
    assert current(engine) is None

    assert upgrade(engine) == (None, head())

    tables = set(inspect(engine).get_table_names())
    declared = {t for metadata in all_metadata() for t in metadata.tables}
    lexical_table = "chunks_tsv" if stack.kind == "servers" else "chunks_fts"
    assert declared <= tables and lexical_table in tables
    assert upgrade(engine) == (head(), head())


def test_a_database_from_before_migrations_is_stamped(stack: Stack) -> None:
    engine = stack.engine()
    store = KnowledgeStore(engine, stack.vectors())  # the stores still create their own tables
    JobQueue(engine)
    assert current(engine) is None

    assert upgrade(engine) == (None, head()) and current(engine) == head()
    assert store.stats()["documents"] == 0


def test_processes_starting_together_migrate_once(stack: Stack) -> None:
    """Two `sleuth db upgrade` processes at once (serve and a worker starting): one migrates, one waits."""
    url = stack.settings().get("database_url") or sqlite_url(stack.root / "store")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env.update(SLEUTH_DATABASE_URL=url, SLEUTH_DATA_DIR=str(stack.root), PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "bot.cli", "db", "upgrade"]
    runs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(2)
    ]
    said = sorted(run.communicate(timeout=120)[0].decode().strip() for run in runs)
    assert [run.returncode for run in runs] == [0, 0], said
    assert said == [f"database already at {head()}", f"database migrated empty -> {head()}"]


def test_the_migrations_build_exactly_the_declared_tables(stack: Stack) -> None:
    """A table or column added to the code without a revision in bot/migrations/versions fails here."""
    engine = stack.engine()
    upgrade(engine)
    declared = MetaData()
    for metadata in all_metadata():
        for table in metadata.tables.values():
            table.to_metadata(declared)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_name": _include_name})
        assert compare_metadata(context, declared) == []


def test_a_new_database_is_stamped_and_a_stamped_one_follows_the_code(stack: Stack) -> None:
    """What the CLI does at start (`Runtime.engine`): nothing it later writes may miss a column."""
    from alembic import command

    from bot.schema import alembic_config, bring_to_head
    from connectors.database import make_engine

    fresh = make_engine(sqlite_url(stack.root / "fresh"))
    bring_to_head(fresh)
    assert current(fresh) == head() and not inspect(fresh).get_table_names()[1:]  # only alembic's own
    engine = stack.engine()
    upgrade(engine)
    config = alembic_config(engine)
    with engine.begin() as conn:  # an older Sleuth's database: stamped, one revision behind the code
        config.attributes["connection"] = conn
        command.downgrade(config, "-1")
    assert current(engine) not in (None, head())
    bring_to_head(engine)
    assert current(engine) == head()
    bring_to_head(engine, stamp_new=False)  # at the head: nothing to do
    assert current(engine) == head()


def test_a_cli_database_with_only_some_tables_follows_the_code(stack: Stack) -> None:
    """The CLI's database has the tables of the features it ran (no job queue, say): every revision after
    the stamp applies to it all the same."""
    from alembic import command
    from alembic.script import ScriptDirectory

    from bot.schema import SCRIPTS, alembic_config, bring_to_head
    from connectors.database import make_engine

    engine = make_engine(sqlite_url(stack.root / "cli"))
    bring_to_head(engine)
    KnowledgeStore(engine, stack.vectors())  # the CLI's own tables, nothing else
    scripts = ScriptDirectory(str(SCRIPTS))
    older = scripts.get_revision(head()).down_revision
    config = alembic_config(engine)
    with engine.begin() as conn:  # as an older Sleuth left it
        config.attributes["connection"] = conn
        command.stamp(config, str(older), purge=True)
    bring_to_head(engine)
    assert current(engine) == head()
