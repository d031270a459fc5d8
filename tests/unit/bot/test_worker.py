"""Heartbeats keep a running job's short lease; dead local workers are recognised for an immediate release."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bot.jobs import JobQueue, NewJob
from bot.worker import Heartbeat, is_dead_local_worker
from connectors.database import make_engine, sqlite_url


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class BeatingQueue(JobQueue):
    """The real queue, telling the test each time a lease was renewed."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.beat = threading.Event()

    def renew(self, job_id: int, worker: str) -> bool:
        renewed = super().renew(job_id, worker)
        self.beat.set()
        return renewed


def test_a_heartbeat_keeps_a_long_job_from_being_taken_over(tmp_path: Path) -> None:
    clock = Clock()
    engine = make_engine(sqlite_url(tmp_path))
    jobs = BeatingQueue(engine, clock=clock, lease_s=15)
    queued = jobs.enqueue(
        NewJob(team="T1", event_id="Ev1", message_key="C1:1.1", channel="C1", user="U1", text="q")
    )
    assert queued is not None and jobs.record_ack(queued.id, placeholder_ts="1.2", thread_ts=None)
    job = jobs.claim("w1")
    assert job is not None

    with Heartbeat(jobs, job.id, "w1", interval_s=0.01) as heartbeat:
        for _ in range(3):  # 3 x 14 s of work: far past one 15 s lease
            clock.now += 14
            jobs.beat.clear()
            assert jobs.beat.wait(5)
            assert jobs.claim("w2") is None
        assert not heartbeat.lost.is_set()

    clock.now += 16  # the worker died (no more beats): the job is free within one lease
    assert jobs.claim("w2") is not None
    engine.dispose()


def test_a_heartbeat_notices_a_lost_lease(tmp_path: Path) -> None:
    engine = make_engine(sqlite_url(tmp_path))
    jobs = JobQueue(engine, lease_s=15)
    queued = jobs.enqueue(NewJob(team="T1", event_id="Ev1", message_key="C1:1.1", channel="C1", user="U1",
                                 text="q", message_ts="1.1"))  # fmt: skip
    assert queued is not None and jobs.record_ack(queued.id, placeholder_ts=None, thread_ts=None)
    job = jobs.claim("w1")
    assert job is not None
    with Heartbeat(jobs, job.id, "w1", interval_s=0.01) as heartbeat:
        jobs.cancel_message("T1", "C1", "1.1")
        assert heartbeat.lost.wait(5)
    engine.dispose()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize(
    ("worker", "dead"),
    [
        (lambda: f"{socket.gethostname()}:{os.getpid()}:0", True),  # an earlier process with our pid
        (lambda: f"{socket.gethostname()}:{_dead_pid()}:1", True),
        (lambda: f"{socket.gethostname()}:{os.getppid()}:0", False),  # alive
        (lambda: f"other-host:{_dead_pid()}:0", False),  # can't tell: the lease decides
        (lambda: "garbage", False),
    ],
    ids=["our-pid", "gone", "alive", "other-host", "malformed"],
)
def test_dead_local_workers(worker, dead: bool) -> None:  # type: ignore[no-untyped-def]
    assert is_dead_local_worker(worker()) is dead
