"""Tables created at start by processes starting together (`sleuth serve` and its workers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, event, inspect, text
from sqlalchemy.exc import OperationalError

from connectors.database import create_tables, make_engine, sqlite_url


def _racing_table(path: Path) -> tuple[MetaData, list[int]]:
    """A table that another process creates between SQLAlchemy's check and its CREATE, once."""
    metadata = MetaData()
    table = Table("jobs", metadata, Column("id", Integer, primary_key=True))
    other = make_engine(sqlite_url(path))  # the other process: its own engine on the same file
    raced: list[int] = []

    @event.listens_for(table, "before_create")
    def _the_other_process_is_first(*_: object, **__: object) -> None:
        if not raced:
            raced.append(1)
            with other.begin() as conn:
                conn.execute(text("CREATE TABLE jobs (id INTEGER PRIMARY KEY)"))

    return metadata, raced


def test_a_table_another_process_created_meanwhile_is_taken_as_created(tmp_path: Path) -> None:
    metadata, raced = _racing_table(tmp_path)
    engine = make_engine(sqlite_url(tmp_path))
    create_tables(metadata, engine)
    assert raced and inspect(engine).has_table("jobs")


def test_plain_create_all_fails_in_the_same_race(tmp_path: Path) -> None:
    metadata, _ = _racing_table(tmp_path)
    with pytest.raises(OperationalError, match="already exists"):
        metadata.create_all(make_engine(sqlite_url(tmp_path)))
