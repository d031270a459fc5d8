"""Named leases elect one process: one holder at a time, renewal by the holder, takeover once it runs out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.runtime import Runtime
from bot.scheduler import LEASE_NAME, SyncScheduler
from bot.settings import Settings
from connectors.leases import Leases
from tests.conftest import EXAMPLES, STACKS, Stack

pytestmark = pytest.mark.parametrize("stack", STACKS, indirect=True)


class Clock:
    now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_one_holder_until_the_lease_runs_out_or_is_released(stack: Stack) -> None:
    clock = Clock()
    leases = Leases(stack.engine(), clock=clock)
    assert leases.hold("sync", "a", 30) and not leases.hold("sync", "b", 30)
    clock.now += 20
    assert leases.hold("sync", "a", 30)  # renewed: runs to 1050 now
    clock.now += 20
    assert not leases.hold("sync", "b", 30) and leases.holder("sync") == "a"
    clock.now += 11
    assert leases.hold("sync", "b", 30) and not leases.hold("sync", "a", 30)
    leases.release("sync", "b")
    assert leases.holder("sync") is None and leases.hold("sync", "a", 30)


def test_only_the_elected_scheduler_syncs(stack: Stack) -> None:
    settings = Settings(_env_file=None, examples_dir=EXAMPLES, embedder={"kind": "hash"}, **stack.settings())
    runtimes = [Runtime(settings), Runtime(settings)]  # two processes on one database
    now = lambda: datetime.now(UTC)  # noqa: E731
    first, second = (
        SyncScheduler(rt.sync_service, clock=now, leases=Leases(rt.engine), holder=name)
        for rt, name in zip(runtimes, ["host:1", "host:2"], strict=True)
    )
    assert second.run_once() == ["acme"]  # the first to tick is elected...
    assert first.run_once() == []  # ...the other stays idle while the lease runs
    assert runtimes[0].store.stats()["documents"] > 80
    assert Leases(runtimes[0].engine).holder(LEASE_NAME) == "host:2"
    for rt in runtimes:
        rt.engine.dispose()
