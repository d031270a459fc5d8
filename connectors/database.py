"""One SQLAlchemy engine factory for every table Sleuth keeps (SQLite file by default, PostgreSQL by URL), and
the column kinds that several owners' tables declare alike."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Engine, Integer, MetaData, Table, create_engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import SchemaItem


def make_engine(url: str) -> Engine:
    """Builds an engine; SQLite gets WAL and a busy timeout so several processes can share the file."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return create_engine(postgres_driver(url), pool_pre_ping=True)


def postgres_driver(url: str) -> str:
    """`postgresql://` (or `postgres://`) means psycopg 3, the driver Sleuth ships; an explicit driver stays."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain) :]
    return url


def sqlite_url(data_dir: Path) -> str:
    return f"sqlite:///{(data_dir / 'sleuth.db').resolve()}"


def serial_id() -> Column[int]:
    """The `id` key of a table of records (jobs, feedback clicks, edges, gaps...): an integer the database counts."""
    return Column("id", Integer, primary_key=True, autoincrement=True)


def owned_table(name: str, *parts: SchemaItem) -> Table:
    """The table of a feature that keeps one (the job queue, feedback, the catalog, leases...), on a MetaData of
    its own: the feature creates it when it starts (`create_tables(table.metadata, engine)`) without creating
    anyone else's, and `bot.schema.all_metadata` lists it for Alembic."""
    return Table(name, MetaData(), *parts)


def create_tables(metadata: MetaData, engine: Engine) -> None:
    """`metadata.create_all`, when `sleuth serve` and its workers start at the same moment on one database: a
    table another process created between the check and the CREATE is there, which is what was wanted. (A lock
    would do too; every feature's start would then wait on the others'.)"""
    for attempt in range(3):
        try:
            metadata.create_all(engine)
            return
        except (
            DBAPIError
        ) as error:  # SQLite "table x already exists"; PostgreSQL DuplicateTable or pg_type key
            raced = "already exists" in str(error) or "pg_type_typname_nsp_index" in str(error)
            if not raced or attempt == 2:
                raise
