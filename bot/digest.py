"""The weekly admin digest: a DM to each admin with the top recurring gaps, the answers marked not helpful and
the questions that hit the round cap, each with "Show trace", filtered by that admin's own permissions.

The sync scheduler calls `run_due` every tick, in every worker. Once per period and admin: a worker first
inserts the (period, admin) row of `admin_digests`; the unique key lets exactly one insert win, so two workers
never both send. A send that fails deletes its row again, so a later tick retries it. Off by default.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from slack_sdk import WebClient
from sqlalchemy import (
    Column,
    Engine,
    Float,
    String,
    UniqueConstraint,
    delete,
    insert,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from bot.askers import UnknownAsker
from bot.feedback import FeedbackLog
from bot.insights import Viewer, capped_questions, feedback_items, recurring_gaps
from bot.jobs import JobQueue
from bot.render import Message
from bot.render_insights import digest_message
from bot.settings import DigestConfig
from bot.slack_columns import slack_id
from bot.slack_retry import SLACK_FAILURES, error_code
from connectors.database import create_tables, owned_table
from graph_flows.gaplog import GapLog

log = logging.getLogger(__name__)

ViewerOf = Callable[[str], Viewer]  # admin's Slack user id -> that admin as a viewer


admin_digests = owned_table(
    "admin_digests",
    Column("period", String(16), nullable=False),  # ISO week, "2026-W49"
    slack_id("admin"),
    Column("claimed_by", String(128), nullable=False),
    Column("claimed_at", Float, nullable=False),
    Column("sent_at", Float),
    UniqueConstraint("period", "admin", name="uq_admin_digests_period_admin"),
)


def due_period(config: DigestConfig, now: datetime) -> str | None:
    """The ISO week whose digest is due at `now` (this week's, once its weekday and hour have come), or None."""
    if not config.enabled:
        return None
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    send_at = monday + timedelta(days=config.weekday, hours=config.hour)
    if now < send_at:
        return None
    year, week, _ = now.isocalendar()
    return f"{year}-W{week:02d}"


class AdminDigest:
    def __init__(
        self,
        engine: Engine,
        client: WebClient,
        *,
        config: DigestConfig,
        admins: Callable[[], Iterable[str]],
        viewer_of: ViewerOf,
        gaps: GapLog,
        feedback: FeedbackLog,
        jobs: JobQueue,
        worker: str | None = None,
    ) -> None:
        self._engine, self._client, self._config = engine, client, config
        self._admins, self._viewer_of = admins, viewer_of
        self._gaps, self._feedback, self._jobs = gaps, feedback, jobs
        self._worker = worker or f"{socket.gethostname()}:{id(self):x}"
        create_tables(admin_digests.metadata, engine)

    def run_due(self, now: datetime) -> list[str]:
        """Sends the due period's digest to every admin not yet sent to; returns whom this worker sent to."""
        period = due_period(self._config, now)
        if period is None:
            return []
        sent = []
        for admin in sorted(set(self._admins())):
            if not self._claim(period, admin, now):
                continue
            try:
                self._send(admin, now)
            except (UnknownAsker, *SLACK_FAILURES) as exc:
                log.warning("digest not sent, will retry", extra={"admin": admin, "error": error_code(exc)})
                self._release(period, admin)
                continue
            self._mark_sent(period, admin, now)
            sent.append(admin)
            log.info("digest sent", extra={"admin": admin, "period": period})
        return sent

    def message(self, admin: str, now: datetime) -> Message:
        viewer = self._viewer_of(admin)
        days, top = self._config.window_days, self._config.top
        since = now - timedelta(days=days)
        gaps = recurring_gaps(self._gaps, viewer, since=since, top=top, jobs=self._jobs)
        items = feedback_items(self._feedback, self._jobs, viewer, since=since.timestamp())[:top]
        capped = capped_questions(self._jobs, viewer, since=since.timestamp(), top=top)
        return digest_message(gaps, items, capped, days=days)

    def _send(self, admin: str, now: datetime) -> None:
        message = self.message(admin, now)
        channel = self._client.conversations_open(users=admin)["channel"]["id"]
        self._client.chat_postMessage(channel=channel, **message)

    def _claim(self, period: str, admin: str, now: datetime) -> bool:
        row = {"period": period, "admin": admin, "claimed_by": self._worker, "claimed_at": now.timestamp()}
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(admin_digests).values(**row))
        except IntegrityError:
            return False  # another worker has (or had) this one
        return True

    def _release(self, period: str, admin: str) -> None:
        with self._engine.begin() as conn:
            conn.execute(delete(admin_digests).where(_key(period, admin)))

    def _mark_sent(self, period: str, admin: str, now: datetime) -> None:
        with self._engine.begin() as conn:
            conn.execute(update(admin_digests).where(_key(period, admin)).values(sent_at=now.timestamp()))


def _key(period: str, admin: str) -> ColumnElement[bool]:
    return (admin_digests.c.period == period) & (admin_digests.c.admin == admin)
