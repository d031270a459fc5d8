"""Migrations on both databases: an empty one reaches the newest revision with every table and the lexical
index of its kind, a second run changes nothing, and a database made before migrations is stamped, not re-made."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from bot.jobs import JobQueue
from bot.schema import all_metadata, current, head, upgrade
from connectors.knowledge.store import KnowledgeStore
from tests.conftest import STACKS, Stack

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
