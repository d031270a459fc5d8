"""Shared helpers for the source connector tests: drain a pull, record backoff waits instead of sleeping."""

from __future__ import annotations

from dataclasses import dataclass, field

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
