"""Shared fixtures only: small knowledge bases on tmp paths, built through the real store and sync."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.folder import FolderConfig, FolderConnector

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "acme"


@pytest.fixture(scope="session", autouse=True)
def _config_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Development vault keys live in the user's config directory; tests keep theirs in a temporary one."""
    import os

    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))


@pytest.fixture
def make_store(tmp_path: Path) -> Callable[[], KnowledgeStore]:
    """A real store (SQLite file + embedded Chroma) with the fast test embedder."""

    def build(name: str = "store") -> KnowledgeStore:
        root = tmp_path / name
        vectors = ChunkVectors(HashEmbedder(), path=root / "chroma")
        return KnowledgeStore(_engine(root), vectors)

    return build


def _engine(root: Path):  # type: ignore[no-untyped-def]
    from connectors.database import make_engine

    return make_engine(f"sqlite:///{root / 'sleuth.db'}")


@pytest.fixture
def acme_copy(tmp_path: Path) -> Path:
    """A writable copy of the demo corpus, for tests that edit or delete files."""
    target = tmp_path / "acme"
    shutil.copytree(EXAMPLES, target)
    return target


def folder(path: Path, name: str = "acme") -> FolderConnector:
    return FolderConnector(FolderConfig(path=path), name=name)
