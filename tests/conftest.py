"""Shared fixtures only: small knowledge bases on tmp paths (or on the session's PostgreSQL and Chroma servers),
built through the real store and sync."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from connectors.knowledge.store import KnowledgeStore
from connectors.local_servers import Servers, local_servers
from connectors.sources.folder import FolderConfig, FolderConnector

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "acme"


@pytest.fixture(scope="session", autouse=True)
def _config_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Development vault keys live in the user's config directory; tests keep theirs in a temporary one."""
    import os

    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))


STACKS = ("embedded", "servers")  # SQLite file + embedded Chroma; PostgreSQL + a Chroma server


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    """A real PostgreSQL and a real `chroma run` on 127.0.0.1, shared by the whole session."""
    with local_servers() as running:
        yield running


@dataclass
class Stack:
    """Where a test's store lives. `settings()` are the Settings fields that point a Runtime at it."""

    kind: str
    root: Path
    servers: Servers | None = None
    engines: list[Engine] = field(default_factory=list)

    made: dict[str, dict[str, Any]] = field(default_factory=dict)

    def settings(self, name: str = "store") -> dict[str, Any]:
        """The same name gives the same databases (several processes on one store); a new name new ones."""
        if self.servers is None:
            return {"data_dir": self.root / name}
        if name not in self.made:
            self.made[name] = {
                "data_dir": self.root / name,
                "database_url": self.servers.postgres.database(),
                "chroma_url": self.servers.chroma.url,
                "chroma_database": self.servers.chroma.database(),
            }
        return self.made[name]

    def engine(self, name: str = "store") -> Engine:
        from connectors.database import make_engine, sqlite_url

        url = self.settings(name).get("database_url") or sqlite_url(self.root / name)
        self.engines.append(make_engine(url))
        return self.engines[-1]

    def vectors(self, name: str = "store") -> ChunkVectors:
        if self.servers is None:
            return ChunkVectors(HashEmbedder(), path=self.root / name / "chroma")
        made = self.settings(name)
        return ChunkVectors(HashEmbedder(), url=made["chroma_url"], database=made["chroma_database"])


@pytest.fixture
def stack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stack]:
    """The embedded stack, or with `@pytest.mark.parametrize("stack", STACKS, indirect=True)` both."""
    kind = getattr(request, "param", "embedded")
    servers = request.getfixturevalue("servers") if kind == "servers" else None
    built = Stack(kind, tmp_path, servers)
    yield built
    for engine in built.engines:
        engine.dispose()


@pytest.fixture
def make_store(stack: Stack) -> Callable[[], KnowledgeStore]:
    """A real store (SQLite file + embedded Chroma, or the servers) with the fast test embedder."""

    def build(name: str = "store") -> KnowledgeStore:
        return KnowledgeStore(stack.engine(name), stack.vectors(name))

    return build


@pytest.fixture
def acme_copy(tmp_path: Path) -> Path:
    """A writable copy of the demo corpus, for tests that edit or delete files."""
    target = tmp_path / "acme"
    shutil.copytree(EXAMPLES, target)
    return target


def folder(path: Path, name: str = "acme") -> FolderConnector:
    return FolderConnector(FolderConfig(path=path), name=name)
