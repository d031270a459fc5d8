"""The durable queue of questions: ack fast, answer exactly once.

A Slack listener only `enqueue`s (one atomic INSERT) and returns, so Slack gets its ack well inside 3 s. Two
unique constraints make every duplicate delivery a no-op: (team, event_id) catches Slack's retries (HTTP
`X-Slack-Retry-Num`, Socket Mode `retry_attempt`), and (team, message_key) catches the same message seen twice
(a channel mention arrives as `app_mention` *and* `message`).

Right after the ack the question is acknowledged visibly (`bot.receipt`, off the request path): a placeholder
in the thread, saved with `record_ack`. A job becomes claimable once acknowledged (or `ACK_GRACE_S` after it was
queued, should the acknowledgement never finish), so a worker never races the intake to post a placeholder.

Workers `claim` a job with a short lease (claimed_by, lease_until) that a heartbeat renews while the job runs; a
job whose lease ran out is claimable again, so a crashed worker's job is picked up within seconds. The worker
saves the answer (`save_result`) before posting it, and `complete`s last: a worker that resumes a job updates
the same placeholder and reuses the saved answer, so the thread sees one answer. A transient Slack failure
`defer`s the job: pending again, not before a backoff, result kept; `failing_since` bounds how long.

Table `slack_jobs`; status: pending -> claimed -> done, or cancelled (the question was deleted), or failed
(Slack kept refusing the answer past the give-up time; the thread was told).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Engine,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    exists,
    func,
    insert,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError

from bot.slack_columns import slack_id, slack_ts
from connectors.database import create_tables, owned_table, serial_id
from graph_flows.flow import thread_id

log = logging.getLogger(__name__)

Clock = Callable[[], float]
PENDING, CLAIMED, DONE, CANCELLED, FAILED = "pending", "claimed", "done", "cancelled", "failed"
QUESTION, EDIT, COMMAND = "question", "edit", "command"
DEFAULT_LEASE_S = 15.0  # renewed every third of it while the job runs (bot.worker.Heartbeat)
ACK_GRACE_S = 10.0  # an unacknowledged job (intake died mid-ack) is claimable after this
MAX_ATTEMPTS = 3  # a job whose worker died this many times is answered with an apology instead

slack_jobs = owned_table(
    "slack_jobs",
    serial_id(),
    slack_id("team"),
    Column("event_id", String(128), nullable=False),
    Column("message_key", String(256), nullable=False),  # "{channel}:{ts}", "...:edit:{edit ts}", "cmd:..."
    Column("kind", String(16), nullable=False),  # question | edit | command
    slack_id("channel"),
    slack_ts("message_ts"),  # the question's own ts (None for /sleuth ask)
    slack_ts("thread_ts"),  # None until the placeholder starts a thread (/sleuth ask)
    slack_id("user"),
    Column("text", Text, nullable=False),
    Column("trace_id", String(40), nullable=False, unique=True),
    Column("response_url", Text),
    Column("status", String(16), nullable=False),
    Column("claimed_by", String(128)),
    Column("lease_until", Float),
    Column("attempts", Integer, nullable=False, default=0),
    slack_ts("placeholder_ts"),
    Column("acked_at", Float),  # the intake's visible acknowledgement finished (placeholder or not)
    Column("ack_queued", Integer, nullable=False, default=0, server_default="0"),  # placeholder says "queued"
    # asked of the channel, not of Sleuth (a `questions` channel, bot.help_channel): no placeholder, a reaction
    Column("unsolicited", Integer, nullable=False, default=0, server_default="0"),
    Column("failing_since", Float),  # first transient Slack failure of the current delivery streak
    Column("result", Text),  # JSON saved before posting: {"question", "answer", "trace"}
    Column("created_at", Float, nullable=False),
    Column("finished_at", Float),
    UniqueConstraint("team", "event_id", name="uq_slack_jobs_event"),
    UniqueConstraint("team", "message_key", name="uq_slack_jobs_message"),
    Index("ix_slack_jobs_thread", "team", "channel", "thread_ts"),
    Index("ix_slack_jobs_message", "team", "channel", "message_ts"),
    Index("ix_slack_jobs_status", "status", "lease_until"),
)


def _add_new_columns(engine: Engine) -> None:
    """A table made by an older Sleuth gets the columns added since (all nullable or defaulted)."""
    present = {column["name"] for column in inspect(engine).get_columns(slack_jobs.name)}
    missing = [column for column in slack_jobs.columns if column.name not in present]
    with engine.begin() as conn:
        for column in missing:
            kind = column.type.compile(dialect=engine.dialect)
            default = (
                f" NOT NULL DEFAULT {column.server_default.arg}" if column.server_default is not None else ""
            )
            conn.execute(text(f"ALTER TABLE {slack_jobs.name} ADD COLUMN {column.name} {kind}{default}"))
            log.info("job table column added", extra={"column": column.name})


@dataclass(frozen=True)
class NewJob:
    team: str
    event_id: str
    message_key: str
    channel: str
    user: str
    text: str
    kind: str = QUESTION
    message_ts: str | None = None
    thread_ts: str | None = None
    response_url: str | None = None
    unsolicited: bool = False


@dataclass(frozen=True)
class Job:
    id: int
    team: str
    event_id: str
    kind: str
    channel: str
    message_ts: str | None
    thread_ts: str | None
    user: str
    text: str
    trace_id: str
    response_url: str | None
    status: str
    claimed_by: str | None
    attempts: int
    placeholder_ts: str | None
    result: dict[str, Any] | None
    acked_at: float | None = None
    ack_queued: bool = False
    failing_since: float | None = None
    unsolicited: bool = False

    @property
    def redelivered(self) -> bool:
        """An earlier try may have posted something (it crashed, or Slack failed), so look before posting."""
        return self.attempts > 1 or self.failing_since is not None

    @property
    def thread_id(self) -> str:
        return thread_id(self.team, self.channel, self.thread_ts or self.placeholder_ts or "")


def _job(row: Any) -> Job:
    m = row._mapping
    return Job(
        id=m["id"], team=m["team"], event_id=m["event_id"], kind=m["kind"], channel=m["channel"],
        message_ts=m["message_ts"], thread_ts=m["thread_ts"], user=m["user"], text=m["text"],
        trace_id=m["trace_id"], response_url=m["response_url"], status=m["status"],
        claimed_by=m["claimed_by"], attempts=m["attempts"], placeholder_ts=m["placeholder_ts"],
        result=json.loads(m["result"]) if m["result"] else None, acked_at=m["acked_at"],
        ack_queued=bool(m["ack_queued"]), failing_since=m["failing_since"],
        unsolicited=bool(m["unsolicited"]),
    )  # fmt: skip


class JobQueue:
    """Jobs in the shared database; every method is one short transaction, safe across threads and processes."""

    def __init__(self, engine: Engine, *, clock: Clock = time.time, lease_s: float = DEFAULT_LEASE_S) -> None:
        self._engine, self._clock, self.lease_s = engine, clock, lease_s
        self._wake = threading.Condition()
        create_tables(slack_jobs.metadata, engine)
        _add_new_columns(engine)

    def enqueue(self, new: NewJob) -> Job | None:
        """Inserts the job; None when this event or this message was already queued (a duplicate)."""
        values = {
            **new.__dict__,
            "status": PENDING,
            "attempts": 0,
            "ack_queued": 0,
            "unsolicited": int(new.unsolicited),
            "created_at": self._clock(),
        }
        values["trace_id"] = f"tr{uuid.uuid4().hex[:16]}"
        try:
            with self._engine.begin() as conn:
                job_id = conn.execute(insert(slack_jobs).values(**values)).inserted_primary_key[0]
        except IntegrityError:
            log.info("duplicate delivery ignored", extra={"team": new.team, "event_id": new.event_id})
            return None
        self.wake_all()
        log.info("job queued", extra={"job": job_id, "kind": new.kind})
        return self.get(job_id)

    def wait(self, timeout_s: float, *, unless: Callable[[], bool] = lambda: False) -> None:
        """Sleeps until a job is queued in this process or `timeout_s` passes (other processes: by polling).

        `unless` is checked under the same lock that `wake_all` takes, so a wake-up between check and wait is
        never lost (the worker pool passes its stop flag).
        """
        with self._wake:
            if not unless():
                self._wake.wait(timeout_s)

    def wake_all(self) -> None:
        with self._wake:
            self._wake.notify_all()

    def _claimable(self, now: float) -> Any:
        due = slack_jobs.c.lease_until.is_(None) | (slack_jobs.c.lease_until < now)  # deferred: not before
        acked = slack_jobs.c.acked_at.is_not(None) | (slack_jobs.c.created_at < now - ACK_GRACE_S)
        return or_(
            (slack_jobs.c.status == PENDING) & due & acked,
            (slack_jobs.c.status == CLAIMED) & (slack_jobs.c.lease_until < now),
        )

    def claim(self, worker: str) -> Job | None:
        """Claims the oldest due job, or one whose lease expired; atomic, so one worker wins each job."""
        now = self._clock()
        claimable = self._claimable(now)
        if self._engine.dialect.name == "postgresql":
            return self._claim_skip_locked(worker, now, claimable)
        with self._engine.begin() as conn:
            ids = conn.execute(select(slack_jobs.c.id).where(claimable).order_by(slack_jobs.c.id).limit(8))
            candidates = [row[0] for row in ids]
        for job_id in candidates:
            with self._engine.begin() as conn:
                won = conn.execute(
                    update(slack_jobs)
                    .where((slack_jobs.c.id == job_id) & claimable)
                    .values(
                        status=CLAIMED,
                        claimed_by=worker,
                        lease_until=now + self.lease_s,
                        attempts=slack_jobs.c.attempts + 1,
                    )
                ).rowcount
            if won:
                return self.get(job_id)
        return None

    def _claim_skip_locked(self, worker: str, now: float, claimable: Any) -> Job | None:
        """PostgreSQL: lock the oldest claimable row, skipping rows other workers hold, and take it in the same
        transaction; many workers claim side by side without retrying on each other's rows."""
        pick = select(slack_jobs.c.id).where(claimable).order_by(slack_jobs.c.id).limit(1)
        with self._engine.begin() as conn:
            job_id = conn.execute(pick.with_for_update(skip_locked=True)).scalar()
            if job_id is None:
                return None
            conn.execute(
                update(slack_jobs)
                .where(slack_jobs.c.id == job_id)
                .values(
                    status=CLAIMED,
                    claimed_by=worker,
                    lease_until=now + self.lease_s,
                    attempts=slack_jobs.c.attempts + 1,
                )
            )
        return self.get(job_id)

    def _owned(self, job_id: int, worker: str, **values: Any) -> bool:
        mine = (
            (slack_jobs.c.id == job_id)
            & (slack_jobs.c.claimed_by == worker)
            & (slack_jobs.c.status == CLAIMED)
        )
        with self._engine.begin() as conn:
            return bool(conn.execute(update(slack_jobs).where(mine).values(**values)).rowcount)

    def renew(self, job_id: int, worker: str) -> bool:
        """Extends the lease; False when the job is no longer this worker's (lease lost, cancelled, done)."""
        return self._owned(job_id, worker, lease_until=self._clock() + self.lease_s)

    def record_ack(
        self, job_id: int, *, placeholder_ts: str | None, thread_ts: str | None, queued: bool = False
    ) -> bool:
        """The intake's acknowledgement is done; keeps its placeholder unless a worker already posted one.

        False when a placeholder was already recorded (the caller then removes its own).
        """
        values: dict[str, Any] = {"acked_at": self._clock()}
        if placeholder_ts is not None:
            values.update(placeholder_ts=placeholder_ts, ack_queued=int(queued))
        if thread_ts is not None:
            values["thread_ts"] = thread_ts
        with self._engine.begin() as conn:
            won = conn.execute(
                update(slack_jobs)
                .where((slack_jobs.c.id == job_id) & slack_jobs.c.placeholder_ts.is_(None))
                .values(**values)
            ).rowcount
            if not won:
                conn.execute(
                    update(slack_jobs).where(slack_jobs.c.id == job_id).values(acked_at=self._clock())
                )
        self.wake_all()
        return bool(won)

    def settle_post(self, job_id: int, column: str, ts: str, *, queued: bool = False) -> str | None:
        """One owner for the job's placeholder (`placeholder_ts`) or a command's echo (`thread_ts`): records `ts`
        unless one is recorded already, atomically, and returns the one kept (None: the job is over without
        one, e.g. dropped). Whoever posted a message that was not kept deletes it."""
        target = slack_jobs.c[column]
        values: dict[str, Any] = {column: ts}
        if column == "placeholder_ts":
            values["ack_queued"] = int(queued)
        live = slack_jobs.c.status.in_((PENDING, CLAIMED))
        with self._engine.begin() as conn:
            conn.execute(
                update(slack_jobs)
                .where((slack_jobs.c.id == job_id) & target.is_(None) & live)
                .values(**values)
            )
            kept = conn.execute(select(target).where(slack_jobs.c.id == job_id)).scalar()
        return str(kept) if kept is not None else None

    def ahead_of(self, job_id: int) -> int:
        """Questions that will be answered before this one: older pending jobs plus the running ones."""
        older = (slack_jobs.c.status == PENDING) & (slack_jobs.c.id < job_id)
        with self._engine.connect() as conn:
            ahead = (
                select(func.count()).select_from(slack_jobs).where(older | (slack_jobs.c.status == CLAIMED))
            )
            return int(conn.execute(ahead).scalar() or 0)

    def defer(self, job_id: int, worker: str, delay_s: float) -> bool:
        """Slack failed transiently: back to pending, due after `delay_s`, keeping the saved result.

        A deferral is not a crash, so it does not count as an attempt.
        """
        now = self._clock()
        done = self._owned(
            job_id,
            worker,
            status=PENDING,
            claimed_by=None,
            lease_until=now + delay_s,
            attempts=slack_jobs.c.attempts - 1,
            failing_since=func.coalesce(slack_jobs.c.failing_since, now),
        )
        self.wake_all()
        return done

    def fail(self, job_id: int, worker: str) -> bool:
        """Gave up delivering (the thread was told); the job leaves the queue."""
        done = self._owned(job_id, worker, status=FAILED, finished_at=self._clock(), lease_until=None)
        self.wake_all()
        return done

    def release_orphans(self, is_dead: Callable[[str], bool]) -> int:
        """Claimed jobs whose worker `is_dead` (a process on this host that is gone) are claimable now."""
        with self._engine.begin() as conn:
            rows = conn.execute(
                select(slack_jobs.c.id, slack_jobs.c.claimed_by).where(slack_jobs.c.status == CLAIMED)
            ).all()
            orphans = [job_id for job_id, worker in rows if worker and is_dead(worker)]
            if orphans:
                conn.execute(
                    update(slack_jobs)
                    .where(slack_jobs.c.id.in_(orphans) & (slack_jobs.c.status == CLAIMED))
                    .values(lease_until=0.0)
                )
        if orphans:
            log.info("jobs of dead workers released", extra={"jobs": len(orphans)})
            self.wake_all()
        return len(orphans)

    def drop(self, job_id: int) -> None:
        """A job the intake already answered (e.g. "invite me first"): never claimed."""
        with self._engine.begin() as conn:
            conn.execute(
                update(slack_jobs)
                .where((slack_jobs.c.id == job_id) & (slack_jobs.c.status == PENDING))
                .values(status=CANCELLED, finished_at=self._clock())
            )
        self.wake_all()

    def now(self) -> float:
        return self._clock()

    def set_placeholder(self, job_id: int, worker: str, ts: str, thread_ts: str) -> bool:
        return self._owned(job_id, worker, placeholder_ts=ts, thread_ts=thread_ts)

    def save_result(self, job_id: int, worker: str, result: dict[str, Any]) -> bool:
        return self._owned(job_id, worker, result=json.dumps(result, default=str))

    def complete(self, job_id: int, worker: str) -> bool:
        """Marks the job done; False when it is no longer this worker's (lease lost, or cancelled meanwhile)."""
        done = self._owned(
            job_id, worker, status=DONE, finished_at=self._clock(), lease_until=None, failing_since=None
        )
        self.wake_all()
        return done

    def wait_idle(self, timeout_s: float) -> bool:
        """Blocks until no job is pending or claimed (as seen from this process); False at the deadline."""
        deadline = time.monotonic() + timeout_s
        with self._wake:
            while True:
                counts = self.counts()
                if not counts.get(PENDING) and not counts.get(CLAIMED):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._wake.wait(remaining)

    def cancel_message(self, team: str, channel: str, message_ts: str) -> list[Job]:
        """The question was deleted: cancels its unfinished jobs; returns all of its jobs (to withdraw answers)."""
        of_message = (
            (slack_jobs.c.team == team)
            & (slack_jobs.c.channel == channel)
            & (slack_jobs.c.message_ts == message_ts)
        )
        with self._engine.begin() as conn:
            conn.execute(
                update(slack_jobs)
                .where(of_message & slack_jobs.c.status.in_([PENDING, CLAIMED]))
                .values(status=CANCELLED, finished_at=self._clock())
            )
            rows = conn.execute(select(slack_jobs).where(of_message).order_by(slack_jobs.c.id)).all()
        return [_job(r) for r in rows]

    def cancel_unsolicited(self, team: str, channel: str, thread_ts: str) -> list[Job]:
        """Someone else answered in the thread first: cancels its unfinished unsolicited jobs; returns them."""
        mine = (
            (slack_jobs.c.team == team)
            & (slack_jobs.c.channel == channel)
            & (slack_jobs.c.thread_ts == thread_ts)
            & (slack_jobs.c.unsolicited == 1)
            & slack_jobs.c.status.in_([PENDING, CLAIMED])
        )
        with self._engine.begin() as conn:
            ids = [row[0] for row in conn.execute(select(slack_jobs.c.id).where(mine))]
            if ids:
                conn.execute(
                    update(slack_jobs)
                    .where(slack_jobs.c.id.in_(ids) & slack_jobs.c.status.in_([PENDING, CLAIMED]))
                    .values(status=CANCELLED, finished_at=self._clock())
                )
        self.wake_all()
        return [job for job in (self.get(i) for i in ids) if job is not None]

    def get(self, job_id: int) -> Job | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(slack_jobs).where(slack_jobs.c.id == job_id)).first()
        return _job(row) if row else None

    def by_trace(self, trace_id: str) -> Job | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(slack_jobs).where(slack_jobs.c.trace_id == trace_id)).first()
        return _job(row) if row else None

    def of_thread(self, thread: str) -> list[Job]:
        """The jobs asked in one thread ("{team}:{channel}:{thread_ts}"), oldest first."""
        team, _, rest = thread.partition(":")
        channel, _, thread_ts = rest.partition(":")
        where = (
            (slack_jobs.c.team == team)
            & (slack_jobs.c.channel == channel)
            & (slack_jobs.c.thread_ts == thread_ts)
        )
        with self._engine.connect() as conn:
            return [_job(r) for r in conn.execute(select(slack_jobs).where(where).order_by(slack_jobs.c.id))]

    def answered_since(self, since: float) -> list[Job]:
        """Jobs finished with a saved answer since `since`, newest first (reports: round-cap questions)."""
        query = (
            select(slack_jobs)
            .where((slack_jobs.c.finished_at >= since) & slack_jobs.c.result.is_not(None))
            .order_by(slack_jobs.c.finished_at.desc())
        )
        with self._engine.connect() as conn:
            return [_job(r) for r in conn.execute(query)]

    def for_message(self, team: str, channel: str, message_ts: str) -> list[Job]:
        where = (
            (slack_jobs.c.team == team)
            & (slack_jobs.c.channel == channel)
            & (slack_jobs.c.message_ts == message_ts)
        )
        with self._engine.connect() as conn:
            return [_job(r) for r in conn.execute(select(slack_jobs).where(where).order_by(slack_jobs.c.id))]

    def in_thread(self, team: str, channel: str, thread_ts: str) -> bool:
        """Whether Sleuth took a question in this thread (so a reply there needs no mention)."""
        where = (
            (slack_jobs.c.team == team)
            & (slack_jobs.c.channel == channel)
            & (slack_jobs.c.thread_ts == thread_ts)
        )
        with self._engine.connect() as conn:
            return bool(conn.execute(select(exists().where(where))).scalar())

    def counts(self) -> dict[str, int]:
        with self._engine.connect() as conn:
            rows = conn.execute(select(slack_jobs.c.status, slack_jobs.c.id)).all()
        found: dict[str, int] = {}
        for status, _ in rows:
            found[status] = found.get(status, 0) + 1
        return found

    def recent_results(self, limit: int) -> list[dict[str, Any]]:
        """The saved results of the `limit` most recently finished jobs, newest first (for the admin home)."""
        finished = (slack_jobs.c.status == DONE) & slack_jobs.c.result.is_not(None)
        query = select(slack_jobs.c.result).where(finished).order_by(slack_jobs.c.finished_at.desc())
        with self._engine.connect() as conn:
            return [json.loads(row[0]) for row in conn.execute(query.limit(limit))]
