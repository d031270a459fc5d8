"""One claimed job -> investigation -> answer in the thread, exactly once.

    placeholder ("Looking into it…", its ts saved on the job)
      -> status while the flow runs (setStatus, or the placeholder's text)
      -> result saved on the job -> chat.update of the placeholder -> job done

A worker that resumes a job after a crash finds the placeholder's ts (and the saved result, if the flow had
finished) and updates that same message, so the thread gets one answer. If the question is deleted meanwhile,
the placeholder becomes a short note instead. Errors end as a short apology in the thread, never as silence or
exception text; this is one of the two places that catch `Exception`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from bot.askers import AskerDirectory, UnknownAsker
from bot.audience import PRIVATE_NOTE, ChannelAudience
from bot.jobs import CANCELLED, COMMAND, EDIT, MAX_ATTEMPTS, Job, JobQueue
from bot.logcontext import log_context
from bot.mrkdwn import clip, escape
from bot.render import UPDATE_NOTE, Message, notice, progress_text, render_answer
from bot.status import StatusBoard

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000
PLACEHOLDER = "Looking into it…"
EMPTY_HINT = "Ask me something after the mention, e.g. *why did the Android 4.2 release slip?*"
TOO_LONG = "That's too long for me — please ask in under 4,000 characters."
FAILED = "Sorry, something went wrong while I was looking into this. Please ask again in a minute."
NO_IDENTITY = (
    "I couldn't confirm who you are in Slack just now, so I didn't search. Please ask again in a minute."
)
WITHDRAWN = "_The question was deleted, so I removed my answer._"
NOT_IN_CHANNEL = "I can't post in this channel. Invite me with `/invite @Sleuth`, or ask me in a DM."


class Asks(Protocol):
    """What the pipeline needs of `graph_flows.flow.Investigator`."""

    def ask(
        self, thread: str, question: str, *, asker: str, principals: frozenset[str], **kw: Any
    ) -> Any: ...


def question_problem(text: str) -> str | None:
    """Why a question can't be investigated as typed (told to the user), or None."""
    if not text.strip():
        return EMPTY_HINT
    if len(text) > MAX_QUESTION_CHARS:
        return TOO_LONG
    return None


class Answerer:
    def __init__(
        self,
        client: WebClient,
        jobs: JobQueue,
        investigator: Asks,
        askers: AskerDirectory,
        audience: ChannelAudience | None = None,
        status: StatusBoard | None = None,
    ) -> None:
        self._client, self._jobs, self._investigator, self._askers = client, jobs, investigator, askers
        self._audience = audience
        self._status = status or StatusBoard(client)

    def run(self, job: Job, worker: str) -> None:
        context = {
            "team": job.team,
            "channel": job.channel,
            "thread": job.thread_ts,
            "user": job.user,
            "job": job.id,
        }
        with log_context(**context):
            started = time.monotonic()
            try:
                self._run(job, worker)
            except Exception:
                log.exception("job failed")
                self._apologise(job, worker, FAILED)
            log.info(
                "job finished",
                extra={"ms": round((time.monotonic() - started) * 1000), "attempt": job.attempts},
            )

    def _run(self, job: Job, worker: str) -> None:
        problem = question_problem(job.text) or (FAILED if job.attempts > MAX_ATTEMPTS else None)
        if problem is not None:
            self._publish(job, worker, [notice(problem)])
            return
        job = self.ensure_placeholder(job, worker)
        if job.placeholder_ts is None:
            return  # told the user why not (e.g. not in the channel)
        try:
            result = job.result or self._investigate(job, worker)
        except UnknownAsker:
            self._apologise(job, worker, NO_IDENTITY)
            return
        note = UPDATE_NOTE if job.kind == EDIT else None
        if job.kind == COMMAND:
            note = f"<@{job.user}> asked: {escape(clip(job.text, 500))}"
        messages = render_answer(result["answer"], trace_id=job.trace_id, note=note)
        if self._audience is not None and self._audience.needs_private(
            job.team, job.channel, result["answer"]
        ):
            for message in messages:
                self._client.chat_postEphemeral(
                    channel=job.channel, user=job.user, thread_ts=job.thread_ts, **message
                )
            messages = [notice(PRIVATE_NOTE)]
        self._publish(job, worker, messages)

    def ensure_placeholder(self, job: Job, worker: str) -> Job:
        """Posts "Looking into it…" once and saves its ts; a resumed job keeps the one it has."""
        if job.placeholder_ts:
            return job
        text = (
            f"<@{job.user}> asked: {escape(clip(job.text, 500))}\n{PLACEHOLDER}"
            if job.kind == COMMAND
            else PLACEHOLDER
        )
        try:
            posted = self._client.chat_postMessage(channel=job.channel, thread_ts=job.thread_ts, text=text)
        except SlackApiError as exc:
            if job.kind != COMMAND or exc.response.get("error") not in (
                "not_in_channel",
                "channel_not_found",
            ):
                raise
            self._respond(job, NOT_IN_CHANNEL)
            self._jobs.complete(job.id, worker)
            return job
        ts = posted["ts"]
        self._jobs.set_placeholder(job.id, worker, ts, job.thread_ts or ts)
        return self._jobs.get(job.id) or job

    def _investigate(self, job: Job, worker: str) -> dict[str, Any]:
        asker = self._askers.resolve(job.team, job.user)
        status = self._status.thread(job.channel, job.thread_ts or "", job.placeholder_ts)
        status.set(PLACEHOLDER)

        def progress(step: dict[str, Any]) -> None:
            text = progress_text(step)
            if text:
                status.set(text)
            self._jobs.renew(job.id, worker)

        principals = asker.principals
        if self._audience is not None:
            principals = self._audience.principals(job.team, job.channel, principals)
        from graph_flows.reasoners.llm_client import HEARTBEAT

        token = HEARTBEAT.set(lambda: self._jobs.renew(job.id, worker))  # long model calls keep the lease
        try:
            out = self._investigator.ask(
                job.thread_id, job.text, asker=asker.label, principals=principals, progress=progress
            )
        finally:
            HEARTBEAT.reset(token)
            status.clear()  # before the answer or apology replaces the placeholder
        result = {"question": job.text, "answer": out["answer"], "trace": out.get("trace") or []}
        self._jobs.save_result(job.id, worker, result)
        for note in asker.notes:
            self._tell_privately(job, note)
        return result

    def _publish(self, job: Job, worker: str, messages: Sequence[Message]) -> None:
        current = self._jobs.get(job.id) or job
        if current.status == CANCELLED:
            withdraw(self._client, current)
            return
        first, *rest = messages
        if current.placeholder_ts:
            self._client.chat_update(channel=job.channel, ts=current.placeholder_ts, **first)
        else:
            posted = self._client.chat_postMessage(channel=job.channel, thread_ts=job.thread_ts, **first)
            self._jobs.set_placeholder(job.id, worker, posted["ts"], job.thread_ts or posted["ts"])
        thread_ts = current.thread_ts or current.placeholder_ts
        for message in rest:
            self._client.chat_postMessage(channel=job.channel, thread_ts=thread_ts, **message)
        if not self._jobs.complete(job.id, worker):
            latest = self._jobs.get(job.id)
            if latest is not None and latest.status == CANCELLED:
                withdraw(self._client, latest)

    def _apologise(self, job: Job, worker: str, text: str) -> None:
        try:
            self._publish(job, worker, [notice(text)])
        except SlackApiError:
            log.exception("apology not posted")
            self._respond(job, text)
            self._jobs.complete(job.id, worker)

    def _respond(self, job: Job, text: str) -> None:
        if job.response_url:
            WebhookClient(job.response_url).send(text=text, response_type="ephemeral")

    def _tell_privately(self, job: Job, text: str) -> None:
        try:
            self._client.chat_postEphemeral(
                channel=job.channel, user=job.user, text=text, thread_ts=job.thread_ts
            )
        except SlackApiError as exc:
            log.warning("private note not posted", extra={"error": exc.response.get("error")})


def withdraw(client: WebClient, job: Job) -> None:
    """Replaces the job's placeholder or answer with a short note (its question was deleted)."""
    if not job.placeholder_ts:
        return
    try:
        client.chat_update(channel=job.channel, ts=job.placeholder_ts, **notice(WITHDRAWN))
    except SlackApiError as exc:
        log.warning("answer not withdrawn", extra={"error": exc.response.get("error")})
