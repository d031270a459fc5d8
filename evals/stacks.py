"""Where a bench's store lives: the embedded stack or the server stack, behind one `place(label, embedder)`.

- `EmbeddedStack`: a SQLite file and an embedded Chroma in `<data dir>/bench-cache/<label>/`, built once and
  reopened on later runs (see `evals.index`).
- `ServerStack`: a PostgreSQL database and a Chroma database made for the label on the servers, built every
  run and dropped when done (a bench leaves nothing on a company's servers). Without URLs it starts its own
  PostgreSQL and `chroma run` in a temporary folder, a fresh pair per place, so each place's disk use and the
  servers' memory are its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from connectors.base import SourceDoc
from connectors.database import make_engine, postgres_driver
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedding import Embedder
from connectors.knowledge.store import KnowledgeStore
from connectors.local_servers import (
    Servers,
    create_chroma_database,
    create_database,
    database_mb,
    drop_chroma_database,
    drop_database,
    local_servers,
    unique_name,
)
from evals.index import CACHE_DIR, IndexStats, build_index, index_docs, reopen
from evals.memory import processes_mb

STACKS = ("embedded", "servers")

Progress = Callable[[int], None] | None


class Place(Protocol):
    """One store of a bench: opened (reopened from a cache, or built from `docs`), measured."""

    def open(
        self, docs: Sequence[SourceDoc], progress: Progress = None
    ) -> tuple[KnowledgeStore, IndexStats]: ...

    def disk_mb(self) -> float: ...

    def servers_mb(self) -> float:
        """Memory of the server processes this place runs on, when it started them (else 0)."""
        ...


class Stack(Protocol):
    name: str

    def place(self, label: str, embedder: Embedder) -> AbstractContextManager[Place]: ...


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / (1024 * 1024)


@dataclass(frozen=True)
class EmbeddedPlace:
    folder: Path
    embedder: Embedder

    def open(self, docs: Sequence[SourceDoc], progress: Progress = None) -> tuple[KnowledgeStore, IndexStats]:
        return reopen(self.folder, self.embedder) or build_index(
            self.folder, docs, self.embedder, progress=progress
        )

    def disk_mb(self) -> float:
        return folder_mb(self.folder)

    def servers_mb(self) -> float:
        return 0.0


@dataclass(frozen=True)
class EmbeddedStack:
    data_dir: Path
    name: str = "embedded"

    def place(self, label: str, embedder: Embedder) -> AbstractContextManager[Place]:
        return nullcontext(EmbeddedPlace(self.data_dir / CACHE_DIR / label, embedder))


@dataclass
class ServerPlace:
    database_url: str  # this place's own database
    chroma_url: str
    chroma_database: str
    embedder: Embedder
    chroma_token: str | None = None
    servers: Servers | None = None  # when the bench started them
    engines: list[Engine] = field(default_factory=list)

    def open(self, docs: Sequence[SourceDoc], progress: Progress = None) -> tuple[KnowledgeStore, IndexStats]:
        vectors = ChunkVectors(
            self.embedder, url=self.chroma_url, token=self.chroma_token, database=self.chroma_database
        )
        self.engines.append(make_engine(self.database_url))
        store = KnowledgeStore(self.engines[-1], vectors)
        where = make_url(self.database_url).render_as_string(hide_password=True)
        return store, index_docs(store, docs, progress=progress, path=where)

    def disk_mb(self) -> float:
        """The PostgreSQL database's size, plus the Chroma server's folder when it is ours (a company's
        Chroma server does not say how much one database takes)."""
        chroma = folder_mb(self.servers.chroma.root) if self.servers else 0.0
        return database_mb(self.database_url) + chroma

    def servers_mb(self) -> float:
        return processes_mb(self.servers.pids()) if self.servers else 0.0


@dataclass(frozen=True)
class ServerStack:
    """`database_url` is any database on the PostgreSQL server (its role needs CREATEDB); the bench's own
    databases are made beside it. Both URLs unset: local servers, started per place."""

    database_url: str | None = None
    chroma_url: str | None = None
    chroma_token: str | None = None
    name: str = "servers"

    def __post_init__(self) -> None:
        if bool(self.database_url) != bool(self.chroma_url):
            raise ValueError("the server stack needs both a PostgreSQL URL and a Chroma URL, or neither")

    @contextmanager
    def place(self, label: str, embedder: Embedder) -> Iterator[Place]:
        if self.database_url and self.chroma_url:
            yield from self._on(postgres_driver(self.database_url), self.chroma_url, label, embedder, None)
            return
        with local_servers() as servers:
            yield from self._on(servers.postgres.url(), servers.chroma.url, label, embedder, servers)

    def _on(
        self, server_url: str, chroma_url: str, label: str, embedder: Embedder, servers: Servers | None
    ) -> Iterator[Place]:
        name = unique_name("".join(c if c.isalnum() else "_" for c in label.lower())[:48])
        url = create_database(server_url, name)
        try:
            chroma_database = create_chroma_database(chroma_url, self.chroma_token, name)
            try:
                place = ServerPlace(url, chroma_url, chroma_database, embedder, self.chroma_token, servers)
                try:
                    yield place
                finally:
                    for engine in place.engines:
                        engine.dispose()
            finally:
                drop_chroma_database(chroma_url, chroma_database, self.chroma_token)
        finally:
            drop_database(url)


def make_stack(
    kind: str,
    data_dir: Path,
    *,
    database_url: str | None = None,
    chroma_url: str | None = None,
    chroma_token: str | None = None,
) -> Stack:
    if kind == "embedded":
        return EmbeddedStack(data_dir)
    if kind == "servers":
        return ServerStack(database_url, chroma_url, chroma_token)
    raise ValueError(f"unknown stack {kind!r}: one of {', '.join(STACKS)}")
