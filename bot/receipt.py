"""The visible acknowledgement at intake: the asker sees Sleuth took the question within a second, however busy
the workers are.

The listener queues the job and, before it returns (and Slack gets its ack), posts the placeholder in the
question's thread: "Looking into it…", or "Queued: N questions ahead of yours…" when every worker is busy.
`/sleuth ask` first posts the command's visible echo ("@ann asked: …"), the thread the answer goes into.

This uses its own WebClient with a short timeout and no retries, so a slow Slack delays the ack by at most
`INTAKE_TIMEOUT_S`; whatever it could not post, the worker posts later (looking first, as the post may have
landed). The job is claimable only once this acknowledgement finished (`JobQueue.record_ack`).

Also here, because it needs Slack: a sender that Slack says is a bot user (`is_bot`, the asker directory's
cached `users.info`) is ignored even when its event carries no `bot_id` (unless `answer_bots` is on).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.jobs import COMMAND, Job, JobQueue, NewJob
from bot.mrkdwn import clip, escape
from bot.posting import post_metadata
from bot.slack_retry import SLACK_FAILURES, error_code

log = logging.getLogger(__name__)

INTAKE_TIMEOUT_S = 1.0
PLACEHOLDER = "Looking into it…"
QUEUED = "Queued: {ahead} ahead of yours. I'll start on it shortly…"
NOT_IN_CHANNEL = "I can't post in this channel. Invite me with `/invite @Sleuth`, or ask me in a DM."
CANT_POST = ("not_in_channel", "channel_not_found", "is_archived")


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
    """A copy of `client` that gives up fast and never retries (the worker's client does that)."""
    return WebClient(
        token=client.token, base_url=client.base_url, timeout=INTAKE_TIMEOUT_S, retry_handlers=[]
    )  # type: ignore[arg-type]


class Receipts:
    def __init__(
        self, client: WebClient, jobs: JobQueue, *, workers: int, is_bot: Callable[[str], bool]
    ) -> None:
        self._client, self._jobs, self._workers, self._is_bot = client, jobs, workers, is_bot

    def submit(self, new: NewJob) -> tuple[Job | None, str | None]:
        """Queues and acknowledges a question: (the job, or None for a duplicate or an ignored sender;
        a reply for the command's ack when the question can't be taken, e.g. the bot is not in the channel)."""
        if new.kind != COMMAND and self._is_bot(new.user):
            log.info("message from a bot user ignored", extra={"user": new.user})
            return None, None
        job = self._jobs.enqueue(new)
        if job is None:
            return None, None
        return job, self.acknowledge(job)

    def acknowledge(self, job: Job) -> str | None:
        started = time.monotonic()
        thread_ts, placeholder_ts, ahead = job.thread_ts, None, 0
        try:
            if job.kind == COMMAND and not thread_ts:
                thread_ts = self._post(job, None, echo_key(job), echo_text(job))
            ahead = self._jobs.ahead_of(job.id) - self._workers + 1
            text = QUEUED.format(ahead=_questions(ahead)) if ahead > 0 else PLACEHOLDER
            placeholder_ts = self._post(job, thread_ts, placeholder_key(job), text)
        except SlackApiError as exc:
            if job.kind == COMMAND and exc.response.get("error") in CANT_POST:
                self._jobs.drop(job.id)
                return NOT_IN_CHANNEL
            log.warning("no acknowledgement at intake", extra={"job": job.id, "error": error_code(exc)})
        except SLACK_FAILURES as exc:
            log.warning("no acknowledgement at intake", extra={"job": job.id, "error": error_code(exc)})
        queued = placeholder_ts is not None and ahead > 0
        if not self._jobs.record_ack(
            job.id, placeholder_ts=placeholder_ts, thread_ts=thread_ts, queued=queued
        ):
            self._withdraw(job.channel, placeholder_ts)  # a worker posted its own meanwhile (intake was slow)
        log.info(
            "question acknowledged", extra={"job": job.id, "ms": round((time.monotonic() - started) * 1000)}
        )
        return None

    def _post(self, job: Job, thread_ts: str | None, key: str, text: str) -> str:
        posted = self._client.chat_postMessage(
            channel=job.channel, thread_ts=thread_ts, text=text, metadata=post_metadata(key)
        )
        return str(posted["ts"])

    def _withdraw(self, channel: str, ts: str | None) -> None:
        if ts is None:
            return
        try:
            self._client.chat_delete(channel=channel, ts=ts)
        except SLACK_FAILURES as exc:
            log.warning("extra placeholder not removed", extra={"error": error_code(exc)})
