"""One SQLAlchemy engine factory for every table Sleuth keeps (SQLite file by default, PostgreSQL by URL), and
the column kinds that several owners' tables declare alike."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Engine, Integer, MetaData, Table, create_engine, event
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
    its own: the feature creates it when it starts (`table.metadata.create_all(engine)`) without creating anyone
    else's, and `bot.schema.all_metadata` lists it for Alembic."""
    return Table(name, MetaData(), *parts)
