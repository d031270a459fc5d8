"""The visible acknowledgement at intake: the asker sees Sleuth took the question within a second, however busy
the workers are, and Slack gets its ack before Sleuth makes any Web API call.

The listener only queues the job (one INSERT) and returns, so Bolt acks at once; the acknowledgement is handed
to a small pool of threads here (`Receipts.submit`), off the request path: it posts the placeholder in the
question's thread, "Looking into it…", or "Queued: N questions ahead of yours…" when every worker is busy.
`/sleuth ask` first posts the command's visible echo ("@ann asked: …"), the thread the answer goes into; when
Sleuth can't post in that channel the asker is told privately through the command's `response_url`.

The posts use their own WebClient without retries, and the intake waits for them at most `INTAKE_TIMEOUT_S`,
so a slow Slack delays the job by no more than that; whatever it could not post by then, the worker posts
(looking first, as the post may have landed). The job is claimable once this acknowledgement finished
(`JobQueue.record_ack`), or `ACK_GRACE_S` after it was queued should this process die first.

A post slower than that goes on (up to `LATE_POST_TIMEOUT_S`) and may land after the worker posted its own:
the placeholder (and a command's echo) has one owner, decided atomically (`JobQueue.settle_post`), and
whichever side's message was not kept deletes it, so the thread never shows a second, stale "Looking into it…".

Also here, because it needs Slack: a sender that Slack says is a bot user is ignored even when its event
carries no `bot_id` (unless `answer_bots` is on). No Web API call comes before the first visible sign: a user
Slack already said is a bot (`known_bot`, remembered past the cache's TTL) is dropped before anything is
posted; anyone else gets the placeholder first, and only then is `users.info` asked (`is_bot`, which also warms
the cache the worker reads); a bot's placeholder is then deleted and its job dropped.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitedTooLong

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient
from sqlalchemy.exc import SQLAlchemyError

from bot.jobs import COMMAND, Job, JobQueue, NewJob
from bot.mrkdwn import clip, escape
from bot.posting import find_posted, post_metadata
from bot.slack_retry import SLACK_FAILURES, error_code

log = logging.getLogger(__name__)

INTAKE_TIMEOUT_S = 1.0  # how long the intake waits for its posts before the job is claimable anyway
LATE_POST_TIMEOUT_S = 30.0  # how long a slower post may still answer (and be kept or deleted)
ACK_THREADS = (
    64  # acknowledgements posted at once: a burst of 50 is posted together, even from a Slack 100 ms away
)
PLACEHOLDER = "Looking into it…"
QUEUED = "Queued: {ahead} ahead of yours. I'll start on it shortly…"
NOT_IN_CHANNEL = "I can't post in this channel. Invite me with `/invite @Sleuth`, or ask me in a DM."
CANT_POST = ("not_in_channel", "channel_not_found", "is_archived")
WORKING_EMOJI = "eyes"  # on a question asked of the channel while Sleuth works on it


def _questions(n: int) -> str:
    return f"{n} question" if n == 1 else f"{n} questions"


def placeholder_key(job: Job) -> str:
    return f"{job.trace_id}:placeholder"


def echo_key(job: Job) -> str:
    return f"{job.trace_id}:echo"


def echo_text(job: Job) -> str:
    """The visible echo of a `/sleuth ask` (slash commands are otherwise invisible to the channel)."""
    return f"<@{job.user}> asked: {escape(clip(job.text, 500))}"


def is_placeholder(text: str) -> bool:
    return text == PLACEHOLDER or text.startswith(QUEUED.split("{", 1)[0])


def intake_client(client: WebClient) -> WebClient:
    """A copy of `client` that never retries (the worker's client does that); the intake waits on it for at
    most `INTAKE_TIMEOUT_S`, and a slower post may still answer within `LATE_POST_TIMEOUT_S`."""
    return WebClient(
        token=client.token, base_url=client.base_url, timeout=int(LATE_POST_TIMEOUT_S), retry_handlers=[]
    )  # type: ignore[arg-type]


def tell_asker(job: Job, text: str) -> None:
    """A private reply through the command's `response_url` (only `/sleuth` jobs have one)."""
    if job.response_url:
        WebhookClient(job.response_url).send(text=text, response_type="ephemeral")


class Receipts:
    """Queues questions on the request path and acknowledges them visibly off it."""

    def __init__(
        self,
        client: WebClient,
        jobs: JobQueue,
        *,
        workers: int,
        is_bot: Callable[[str], bool],
        known_bot: Callable[[str], bool | None] = lambda user: None,
        threads: int = ACK_THREADS,
    ) -> None:
        self._client, self._jobs, self._workers, self._is_bot = client, jobs, workers, is_bot
        self._known_bot = known_bot
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sleuth-receipt")
        self._posts = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sleuth-receipt-post")
        self._in_flight = 0
        self._settled = threading.Condition()

    def submit(self, new: NewJob) -> Job | None:
        """Queues a question (durably, before Slack's ack) and starts its acknowledgement in the background;
        None for a duplicate delivery (already queued, and acknowledged once)."""
        job = self._jobs.enqueue(new)
        if job is None:
            return None
        with self._settled:
            self._in_flight += 1
        context = contextvars.copy_context()  # the request's log context goes along
        self._pool.submit(context.run, self._receive, job, time.monotonic())
        return job

    def settle(self, timeout_s: float) -> bool:
        """Waits until every acknowledgement started so far is done; False at the timeout."""
        with self._settled:
            return self._settled.wait_for(lambda: self._in_flight == 0, timeout=timeout_s)

    def close(self) -> None:
        """Finishes the acknowledgements under way; the jobs of any that never ran get the worker's."""
        self._pool.shutdown(wait=True)
        self._posts.shutdown(wait=True)

    def _receive(self, job: Job, queued_at: float) -> None:
        waited_ms = round((time.monotonic() - queued_at) * 1000)
        try:
            if job.kind != COMMAND and self._known_bot(job.user):
                self._drop_bot(job, None)
                return
            problem = self.acknowledge(job, waited_ms=waited_ms)
            if problem:
                tell_asker(job, problem)
        except (SQLAlchemyError, *SLACK_FAILURES) as exc:  # the job is claimable after ACK_GRACE_S anyway
            log.warning("intake acknowledgement failed", extra={"job": job.id, "error": error_code(exc)})
        finally:
            with self._settled:
                self._in_flight -= 1
                self._settled.notify_all()

    def acknowledge(self, job: Job, *, waited_ms: int = 0) -> str | None:
        """Posts the placeholder (and a command's echo) and records it; what to tell the asker privately
        when the question can't be taken (the bot is not in the channel), else None."""
        started = time.monotonic()
        thread_ts, placeholder_ts, ahead = job.thread_ts, None, 0
        if job.unsolicited:
            self._react(job)
            self._jobs.record_ack(job.id, placeholder_ts=None, thread_ts=thread_ts)
            return None
        try:
            if job.kind == COMMAND and not thread_ts:
                thread_ts = self._post(job, None, echo_key(job), echo_text(job))
            if thread_ts:  # else the echo is late: the worker posts both (keeping the echo if it landed)
                ahead = self._jobs.ahead_of(job.id) - self._workers + 1
                text = QUEUED.format(ahead=_questions(ahead)) if ahead > 0 else PLACEHOLDER
                placeholder_ts = self._post(job, thread_ts, placeholder_key(job), text, queued=ahead > 0)
        except SlackApiError as exc:
            if job.kind == COMMAND and exc.response.get("error") in CANT_POST:
                self._jobs.drop(job.id)
                return NOT_IN_CHANNEL
            log.warning("no acknowledgement at intake", extra={"job": job.id, "error": error_code(exc)})
        except SLACK_FAILURES as exc:
            log.warning("no acknowledgement at intake", extra={"job": job.id, "error": error_code(exc)})
        if job.kind != COMMAND and self._known_bot(job.user) is None and self._is_bot(job.user):
            self._drop_bot(job, placeholder_ts)  # users.info only now, after the first visible sign
            return None
        queued = placeholder_ts is not None and ahead > 0
        if not self._jobs.record_ack(
            job.id, placeholder_ts=placeholder_ts, thread_ts=thread_ts, queued=queued
        ):
            self._withdraw(job.channel, placeholder_ts)  # a worker posted its own meanwhile (intake was slow)
        ms = round((time.monotonic() - started) * 1000)
        log.info("question acknowledged", extra={"job": job.id, "ms": ms, "waited_ms": waited_ms})
        return None

    def _react(self, job: Job) -> None:
        """A question asked of the channel, not of Sleuth, gets a reaction rather than a reply while Sleuth
        works on it (`bot.help_channel`): if Sleuth ends up with nothing to say, the thread stays empty."""
        try:
            self._client.reactions_add(channel=job.channel, timestamp=job.message_ts, name=WORKING_EMOJI)
        except SLACK_FAILURES as exc:
            log.warning("working reaction not added", extra={"job": job.id, "error": error_code(exc)})

    def _drop_bot(self, job: Job, placeholder_ts: str | None) -> None:
        log.info("message from a bot user ignored", extra={"user": job.user, "job": job.id})
        self._jobs.drop(job.id)
        self._withdraw(job.channel, placeholder_ts)

    def _post(
        self, job: Job, thread_ts: str | None, key: str, text: str, *, queued: bool = False
    ) -> str | None:
        """The post's ts, or None when Slack has not answered within `INTAKE_TIMEOUT_S`: the post goes on, and
        if it lands it is kept or deleted then (`_settle_late`)."""
        future = self._posts.submit(
            self._client.chat_postMessage,
            channel=job.channel,
            thread_ts=thread_ts,
            text=text,
            metadata=post_metadata(key),
        )
        try:
            return str(future.result(timeout=INTAKE_TIMEOUT_S)["ts"])
        except WaitedTooLong:
            log.warning("intake post slower than its timeout", extra={"job": job.id, "key": key})
        with self._settled:
            self._in_flight += 1
        column = "placeholder_ts" if key == placeholder_key(job) else "thread_ts"
        future.add_done_callback(lambda done: self._settle_late(job, thread_ts, key, column, done, queued))
        return None

    def _settle_late(
        self, job: Job, thread_ts: str | None, key: str, column: str, done: Future, queued: bool
    ) -> None:
        """A slow post answered: kept if nothing took its place meanwhile, else deleted. A post that never
        answered may still have landed: it is looked up by its key."""
        try:
            try:
                ts: str | None = str(done.result()["ts"])
            except SLACK_FAILURES as exc:
                log.warning("late intake post failed", extra={"job": job.id, "error": error_code(exc)})
                ts = find_posted(self._client, job.channel, thread_ts, key)
            if ts is not None and self._jobs.settle_post(job.id, column, ts, queued=queued) != ts:
                self._withdraw(job.channel, ts)
                log.info("late intake post removed", extra={"job": job.id, "key": key})
        except (SQLAlchemyError, *SLACK_FAILURES) as exc:
            log.warning("late intake post not settled", extra={"job": job.id, "error": error_code(exc)})
        finally:
            with self._settled:
                self._in_flight -= 1
                self._settled.notify_all()

    def _withdraw(self, channel: str, ts: str | None) -> None:
        if ts is None:
            return
        try:
            self._client.chat_delete(channel=channel, ts=ts)
        except SLACK_FAILURES as exc:
            log.warning("extra placeholder not removed", extra={"error": error_code(exc)})
