"""Event-requested syncs: a burst becomes one run per source and kind after its delay, permissions before content,
a request during a run makes one more run, never in the caller's thread, and a failing run does not stop the
next."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from connectors.sync_trigger import SyncTrigger

WAIT_S = 10.0


@dataclass
class RecordingSyncs:
    runs: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, source, thread name)
    hold: threading.Event | None = None  # a run waits on it
    started: threading.Event = field(default_factory=threading.Event)
    fail: set[str] = field(default_factory=set)

    def _record(self, kind: str, name: str) -> None:
        self.runs.append((kind, name, threading.current_thread().name))
        self.started.set()
        if self.hold is not None:
            self.hold.wait(WAIT_S)
        if name in self.fail:
            raise RuntimeError("source down")

    def run(self, name: str) -> None:
        self._record("content", name)

    def run_permissions(self, name: str) -> None:
        self._record("permissions", name)


@dataclass
class FakeClock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_is_one_run_per_source_and_kind_after_its_delay_permissions_first() -> None:
    syncs, clock = RecordingSyncs(), FakeClock()
    trigger = SyncTrigger(syncs, delay_s={"permissions": 5.0, "content": 5.0}, clock=clock)
    try:
        for _ in range(3):
            trigger.request("chat", "content")
            trigger.request("chat", "permissions")
            trigger.request("other", "permissions")
        assert not trigger.settle(0.05) and syncs.runs == []  # still inside the delay
        clock.now = 5.0
        trigger.request("chat", "permissions")  # wakes the thread; joins the due run
        assert trigger.settle(WAIT_S)
    finally:
        trigger.close()
    assert [(kind, name) for kind, name, _ in syncs.runs] == [
        ("permissions", "chat"),
        ("permissions", "other"),
        ("content", "chat"),
    ]
    assert {thread for _, _, thread in syncs.runs} == {"sleuth-event-sync"}


def test_a_request_during_a_run_makes_one_more_run_after_it() -> None:
    syncs = RecordingSyncs(hold=threading.Event())
    trigger = SyncTrigger(syncs, delay_s={"permissions": 0.0})
    try:
        trigger.request("chat", "permissions")
        assert syncs.started.wait(WAIT_S)
        trigger.request("chat", "permissions")  # the running one may have read Slack before the change
        trigger.request("chat", "permissions")
        syncs.hold.set()
        assert trigger.settle(WAIT_S)
    finally:
        trigger.close()
    assert [(kind, name) for kind, name, _ in syncs.runs] == [("permissions", "chat")] * 2


def test_a_failing_run_is_logged_and_the_next_still_runs() -> None:
    syncs = RecordingSyncs(fail={"broken"})
    trigger = SyncTrigger(syncs, delay_s={"content": 0.0})
    try:
        trigger.request("broken", "content")
        assert trigger.settle(WAIT_S)
        trigger.request("chat", "content")
        assert trigger.settle(WAIT_S)
    finally:
        trigger.close()
    assert [name for _, name, _ in syncs.runs] == ["broken", "chat"]


def test_after_close_requests_are_dropped() -> None:
    syncs = RecordingSyncs()
    trigger = SyncTrigger(syncs, delay_s={"content": 0.0})
    trigger.close()
    trigger.request("chat", "content")
    assert trigger.settle(0.5) and syncs.runs == []
