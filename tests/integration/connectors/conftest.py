"""Shared helpers for the source connector tests: drain a pull, record backoff waits instead of sleeping."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from connectors.base import Checkpoint, Cursor, Deleted, Failure, Pulled, SourceDoc


@dataclass
class Drained:
    items: list[SourceDoc | Deleted | Failure | Checkpoint]
    cursor: Cursor

    @property
    def docs(self) -> list[SourceDoc]:
        return [i for i in self.items if isinstance(i, SourceDoc)]

    @property
    def failures(self) -> list[Failure]:
        return [i for i in self.items if isinstance(i, Failure)]

    @property
    def checkpoints(self) -> list[Checkpoint]:
        return [i for i in self.items if isinstance(i, Checkpoint)]


def drain(pulled: Pulled) -> Drained:
    """Runs a pull to the end and keeps what it yielded and the cursor it returned."""
    items: list[SourceDoc | Deleted | Failure | Checkpoint] = []
    while True:
        try:
            items.append(next(pulled))
        except StopIteration as stop:
            return Drained(items, stop.value)


def pull_until_checkpoint(pulled: Pulled) -> tuple[list[str], Cursor]:
    """Reads a pull up to its first checkpoint, then closes it (the process dies there): the ids read before it
    and the checkpoint's cursor."""
    seen: list[str] = []
    for item in pulled:
        if isinstance(item, Checkpoint):
            saved = item.cursor
            break
        assert isinstance(item, SourceDoc)
        seen.append(item.id)
    pulled.close()
    return seen, saved


@dataclass
class SleepLog:
    waits: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> SleepLog:
    return SleepLog()


def visible_ids(store: Any, doc_id: str, principals: frozenset[str], query: str) -> set[str]:
    """Where `doc_id` reaches these principals: its record, and each search mode for `query`."""
    found = set()
    if store.document(doc_id, principals) is not None:
        found.add("document")
    for mode in ("bm25", "dense"):
        if any(h.doc_id == doc_id for h in store.search_text(query, principals, 50, mode=mode)):
            found.add(mode)
    return found
