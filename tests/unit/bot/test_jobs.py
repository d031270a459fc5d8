"""The job table: atomic dedupe, claims only after the intake acknowledged, leased claims, completion only by
the owner, deferral after a Slack failure, orphan release, cancellation."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from bot.jobs import ACK_GRACE_S, CANCELLED, CLAIMED, DONE, FAILED, PENDING, Job, JobQueue, NewJob
from connectors.database import make_engine, sqlite_url
from tests.conftest import STACKS, Stack


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=STACKS)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """The queue on a SQLite file (lease claims) and on PostgreSQL (`FOR UPDATE SKIP LOCKED` claims)."""
    stack = Stack(
        request.param, tmp_path, request.getfixturevalue("servers") if request.param == "servers" else None
    )
    yield stack.engine()
    for built in stack.engines:
        built.dispose()


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(sqlite_url(tmp_path))
    yield engine
    engine.dispose()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def jobs(engine: Engine, clock: Clock) -> JobQueue:
    return JobQueue(engine, clock=clock, lease_s=60)


def _acked(jobs: JobQueue, new: NewJob) -> Job | None:
    """Queued and acknowledged at intake (placeholder posted), so claimable."""
    job = jobs.enqueue(new)
    if job is not None:
        jobs.record_ack(job.id, placeholder_ts=None, thread_ts=None)
    return job


def _new(event_id: str = "Ev1", ts: str = "1.0001", **kw: str) -> NewJob:
    values = {"team": "T1", "event_id": event_id, "message_key": f"C1:{ts}", "channel": "C1", "user": "U1",
              "text": "why?", "message_ts": ts, "thread_ts": ts, **kw}  # fmt: skip
    return NewJob(**values)


@pytest.mark.parametrize(
    ("second", "queued"),
    [
        (_new("Ev1", "1.0001"), False),  # a Slack retry of the same event
        (_new("Ev2", "1.0001"), False),  # the same message as `message` after `app_mention`
        (_new("Ev2", "1.0002"), True),  # another question
        (_new("Ev1", "1.0001", team="T2"), True),  # another workspace
    ],
    ids=["retry", "twin-event", "new-question", "other-team"],
)
def test_enqueue_dedupes_on_event_and_on_message(jobs: JobQueue, second: NewJob, queued: bool) -> None:
    assert jobs.enqueue(_new()) is not None
    assert (jobs.enqueue(second) is not None) is queued


def test_concurrent_enqueues_of_one_event_queue_it_once(jobs: JobQueue) -> None:
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(jobs.enqueue(_new()))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in results) == 1 and jobs.counts() == {PENDING: 1}


def test_a_claim_is_exclusive_until_its_lease_expires(jobs: JobQueue, clock: Clock) -> None:
    job = _acked(jobs, _new())
    assert job is not None
    first = jobs.claim("w1")
    assert first is not None and (first.status, first.claimed_by, first.attempts) == (CLAIMED, "w1", 1)
    assert jobs.claim("w2") is None

    clock.now += 61
    second = jobs.claim("w2")

    assert second is not None and (second.id, second.claimed_by, second.attempts) == (job.id, "w2", 2)
    assert not jobs.complete(job.id, "w1")  # the dead worker lost it
    assert jobs.complete(job.id, "w2") and jobs.claim("w3") is None


def test_renewing_keeps_the_lease(jobs: JobQueue, clock: Clock) -> None:
    _acked(jobs, _new())
    job = jobs.claim("w1")
    assert job is not None
    clock.now += 50
    assert jobs.renew(job.id, "w1")
    clock.now += 50
    assert jobs.claim("w2") is None


def test_placeholder_and_result_survive_a_reclaim(jobs: JobQueue, clock: Clock) -> None:
    _acked(jobs, _new())
    job = jobs.claim("w1")
    assert job is not None
    assert jobs.set_placeholder(job.id, "w1", "1.0002", "1.0001")
    assert jobs.save_result(job.id, "w1", {"answer": {"text": "x"}})
    clock.now += 61

    again = jobs.claim("w2")

    assert (
        again is not None and again.placeholder_ts == "1.0002" and again.result == {"answer": {"text": "x"}}
    )
    assert not jobs.set_placeholder(job.id, "w1", "9.9", "9.9")  # not w1's any more


def test_cancel_message_stops_unfinished_jobs(jobs: JobQueue) -> None:
    pending = _acked(jobs, _new("Ev1", "1.0001"))
    done = _acked(jobs, _new("Ev2", "2.0001"))
    assert pending is not None and done is not None
    claimed = jobs.claim("w1")
    assert claimed is not None and claimed.id == pending.id  # oldest first
    other = jobs.claim("w2")
    assert other is not None
    jobs.complete(other.id, "w2")

    [cancelled] = jobs.cancel_message("T1", "C1", "1.0001")
    [kept] = jobs.cancel_message("T1", "C1", "2.0001")

    assert cancelled.status == CANCELLED and kept.status == DONE
    assert not jobs.complete(pending.id, "w1") and jobs.claim("w3") is None


def test_in_thread_and_lookups(jobs: JobQueue) -> None:
    job = jobs.enqueue(_new())
    assert job is not None
    assert jobs.in_thread("T1", "C1", "1.0001") and not jobs.in_thread("T1", "C1", "5.0")
    assert jobs.by_trace(job.trace_id) == job and jobs.for_message("T1", "C1", "1.0001") == [job]
    assert job.thread_id == "T1:C1:1.0001"


def test_a_job_is_claimable_once_acknowledged_or_after_the_grace(jobs: JobQueue, clock: Clock) -> None:
    job = jobs.enqueue(_new())
    assert job is not None and jobs.claim("w1") is None  # the intake is still posting its placeholder

    clock.now += ACK_GRACE_S + 1  # ... and never finished (its process died)
    claimed = jobs.claim("w1")

    assert claimed is not None and claimed.id == job.id and claimed.acked_at is None


def test_the_intake_placeholder_is_kept_unless_a_worker_posted_first(jobs: JobQueue) -> None:
    job = _acked(jobs, _new())
    assert job is not None
    assert jobs.record_ack(job.id, placeholder_ts="1.0002", thread_ts=None, queued=True)
    late = jobs.enqueue(_new("Ev2", "2.0001"))
    assert late is not None
    assert jobs.record_ack(late.id, placeholder_ts="2.0002", thread_ts=None)
    assert not jobs.record_ack(late.id, placeholder_ts="2.0003", thread_ts=None)  # a second one loses

    first, second = jobs.get(job.id), jobs.get(late.id)
    assert first is not None and (first.placeholder_ts, first.ack_queued) == ("1.0002", True)
    assert second is not None and second.placeholder_ts == "2.0002"


def test_a_deferred_job_keeps_its_result_and_is_due_after_the_delay(jobs: JobQueue, clock: Clock) -> None:
    _acked(jobs, _new())
    job = jobs.claim("w1")
    assert job is not None and jobs.save_result(job.id, "w1", {"answer": {"text": "x"}})

    assert jobs.defer(job.id, "w1", 5.0)
    assert jobs.claim("w2") is None and not jobs.complete(job.id, "w1")
    clock.now += 6
    again = jobs.claim("w2")

    assert again is not None and again.result == {"answer": {"text": "x"}}
    assert (again.attempts, again.failing_since, again.redelivered) == (1, 1_000.0, True)
    assert jobs.defer(again.id, "w2", 1.0)  # the streak's start stays
    clock.now += 2
    third = jobs.claim("w3")
    assert third is not None and third.failing_since == 1_000.0
    assert jobs.fail(third.id, "w3") and jobs.counts() == {FAILED: 1}


def test_jobs_of_dead_workers_are_released_at_once(jobs: JobQueue) -> None:
    _acked(jobs, _new("Ev1", "1.0001"))
    _acked(jobs, _new("Ev2", "2.0001"))
    dead, alive = jobs.claim("host:111:0"), jobs.claim("host:222:0")
    assert dead is not None and alive is not None

    assert jobs.release_orphans(lambda worker: worker.startswith("host:111:")) == 1

    rescued = jobs.claim("host:333:0")
    assert rescued is not None and rescued.id == dead.id and jobs.claim("host:333:1") is None


def test_a_table_from_an_older_sleuth_gets_the_new_columns(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    with engine.begin() as conn:  # the table as it was before acknowledgements and deferrals
        conn.execute(text("CREATE TABLE slack_jobs (id INTEGER PRIMARY KEY, team VARCHAR(64) NOT NULL, "
                          "event_id VARCHAR(128) NOT NULL, message_key VARCHAR(256) NOT NULL, kind VARCHAR(16) NOT NULL, "
                          "channel VARCHAR(64) NOT NULL, message_ts VARCHAR(32), thread_ts VARCHAR(32), "
                          "user VARCHAR(64) NOT NULL, text TEXT NOT NULL, trace_id VARCHAR(40) NOT NULL, "
                          "response_url TEXT, status VARCHAR(16) NOT NULL, claimed_by VARCHAR(128), lease_until FLOAT, "
                          "attempts INTEGER NOT NULL, placeholder_ts VARCHAR(32), result TEXT, created_at FLOAT NOT NULL, "
                          "finished_at FLOAT)"))  # fmt: skip
        conn.execute(text("INSERT INTO slack_jobs VALUES (1, 'T1', 'Ev0', 'C1:0.1', 'question', 'C1', '0.1', '0.1', "
                          "'U1', 'old', 'tr0', NULL, 'done', NULL, NULL, 1, '0.2', NULL, 1.0, 2.0)"))  # fmt: skip

    jobs = JobQueue(engine)

    old = jobs.get(1)
    assert old is not None and (old.status, old.ack_queued, old.acked_at) == (DONE, False, None)
    assert _acked(jobs, _new()) is not None and jobs.claim("w1") is not None


def test_many_workers_claim_each_job_exactly_once(jobs: JobQueue) -> None:
    for n in range(12):
        _acked(jobs, _new(f"Ev{n}", f"{n}.0001"))
    claimed: list[int] = []

    def work(worker: str) -> None:
        while (job := jobs.claim(worker)) is not None:
            claimed.append(job.id)
            assert jobs.complete(job.id, worker)

    threads = [threading.Thread(target=work, args=(f"host:1:{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(set(claimed)) and len(claimed) == 12 and jobs.counts() == {DONE: 12}
