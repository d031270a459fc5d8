"""One claimed job -> investigation -> answer in the thread, exactly once, whatever Slack does meanwhile.

    placeholder (posted at intake by `bot.receipt`; here only if that failed)
      -> status while the flow runs (setStatus, or the placeholder's text)
      -> result saved on the job -> chat.update of the placeholder (+ further parts) -> job done

A worker that resumes a job after a crash finds the placeholder's ts (and the saved result, if the flow had
finished) and updates that same message; further parts are posted with `post_once`, which looks before it
posts, so the thread gets one answer. A transient Slack failure (429, 5xx, `fatal_error`, a lost connection)
that outlives the WebClient's own retries defers the job (`JobQueue.defer`): it stays pending with its saved
result and the next worker tick, or the next process, delivers it; after `give_up_s` of failures the thread is
told, once. If the question is deleted meanwhile, the placeholder becomes a short note instead. Other errors end
as a short apology in the thread, never as silence or exception text; this is one of the two places that catch
`Exception`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.askers import AskerDirectory, UnknownAsker
from bot.audience import PRIVATE_NOTE, ChannelAudience
from bot.channel_activity import ANSWERED, SILENT, ChannelActivity
from bot.channel_activity import CANCELLED as THREAD_CANCELLED
from bot.channel_reply import remove_working_reaction, someone_replied
from bot.channels import ChannelConfig, ChannelSettings
from bot.jobs import CANCELLED, COMMAND, EDIT, MAX_ATTEMPTS, Job, JobQueue
from bot.live_stream import LiveStream, live_allowed
from bot.logcontext import log_context
from bot.posting import post_once
from bot.receipt import (
    CANT_POST,
    NOT_IN_CHANNEL,
    PLACEHOLDER,
    echo_key,
    echo_text,
    placeholder_key,
    tell_asker,
)
from bot.render import UPDATE_NOTE, Message, notice, progress_text, render_answer, streamed_answer
from bot.render_channel import with_channel_actions
from bot.slack_retry import SLACK_FAILURES, error_code, is_transient, retry_after
from bot.status import StatusBoard
from bot.streaming import AnswerStream, StreamUnavailable
from graph_flows.access import AccessCheck

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000
GIVE_UP_S = 900.0  # after this long of transient Slack failures, the thread is told and the job ends
MIN_RETRY_DELAY_S, MAX_RETRY_DELAY_S = 2.0, 60.0
EMPTY_HINT = "Ask me something after the mention, e.g. *why did the Android 4.2 release slip?*"
TOO_LONG = "That's too long for me — please ask in under 4,000 characters."
FAILED = "Sorry, something went wrong while I was looking into this. Please ask again in a minute."
UNDELIVERED = (
    "Sorry, I had an answer, but Slack kept failing when I tried to post it, so I gave up. "
    "Please ask again in a few minutes."
)
NO_IDENTITY = (
    "I couldn't confirm who you are in Slack just now, so I didn't search. Please ask again in a minute."
)
WITHDRAWN = "_The question was deleted, so I removed my answer._"
EPHEMERAL_NOTE = "I've replied to you privately."


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
        *,
        give_up_s: float = GIVE_UP_S,
        stream: bool = False,
        access_for: Callable[[str, str], AccessCheck | None] | None = None,
        channels: ChannelSettings | None = None,
        activity: ChannelActivity | None = None,
    ) -> None:
        """`access_for(team, user)`: the live check of what an answer shows, as that user (or None);
        `channels`: per-channel settings (sources, reply, buttons; `bot.channels`), None: none anywhere."""
        self._client, self._jobs, self._investigator, self._askers = client, jobs, investigator, askers
        self._channels, self._activity = channels, activity
        self._audience, self._give_up_s = audience, give_up_s
        self._status = status or StatusBoard(client)
        self._stream = AnswerStream(client) if stream else None
        self._access_for = access_for

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
            except Exception as exc:
                if is_transient(exc):
                    self._retry_later(job, worker, exc)
                elif job.unsolicited:  # not asked of Sleuth: no apology in someone else's thread
                    log.exception("job failed")
                    self._stay_silent(job, worker, None)
                else:
                    log.exception("job failed")
                    self._apologise(job, worker, FAILED)
            log.info(
                "job finished",
                extra={"ms": round((time.monotonic() - started) * 1000), "attempt": job.attempts},
            )

    def _run(self, job: Job, worker: str) -> None:
        problem = question_problem(job.text) or (FAILED if job.attempts > MAX_ATTEMPTS else None)
        if problem is not None and job.unsolicited:
            self._stay_silent(job, worker, None)  # not asked of Sleuth: no hint, no apology
            return
        if problem is not None:
            self._publish(job, worker, [notice(problem)])
            return
        config = self._config(job)
        if not job.unsolicited:  # one asked of the channel got a reaction instead (bot.receipt)
            job = self.ensure_placeholder(job, worker)
            if job.placeholder_ts is None:
                return  # told the user why not (e.g. not in the channel)
        saved, shown = job.result or {}, None
        try:
            result = saved
            if "answer" not in saved:
                result, shown = self._investigate(job, worker, config, saved)
        except UnknownAsker as exc:
            if exc.__cause__ is not None and is_transient(exc.__cause__):
                raise exc.__cause__ from None  # Slack is down, not the asker unknown: try again later
            if job.unsolicited:
                self._stay_silent(job, worker, None)
                return
            self._apologise(job, worker, NO_IDENTITY)
            return
        if job.unsolicited and self._unwelcome(job, worker, config, result):
            return
        self._deliver(job, worker, config, result, shown)

    def _deliver(
        self, job: Job, worker: str, config: ChannelConfig, result: dict[str, Any], shown: str | None = None
    ) -> None:
        """The answer in the thread (streamed when it can be), or privately to the asker where the channel's
        audience or its `reply` setting says so, with the channel's buttons."""
        note = UPDATE_NOTE if job.kind == EDIT else None
        messages = render_answer(result["answer"], trace_id=job.trace_id, note=note)
        private = config.reply == "ephemeral" or (
            self._audience is not None
            and self._audience.needs_private(job.team, job.channel, result["answer"])
        )
        messages = with_channel_actions(
            messages, trace_id=job.trace_id, escalate=bool(config.escalate_to),
            remove=job.unsolicited and not private,
        )  # fmt: skip
        plain = not config.escalate_to and not job.unsolicited
        if not private and plain and job.kind != EDIT and self._stream_answer(job, worker, result, shown):
            return
        if self._stream is not None and (result.get("stream") or {}).get("started"):
            self._stream.discard(self._jobs.get(job.id) or job, result)  # a draft stream, not the answer
        if job.unsolicited:  # before posting: the job counts as done once the answer is out
            self._finish_unsolicited(job, ANSWERED)
        if private:
            result = self._post_privately(job, worker, result, messages)
            if job.unsolicited and job.placeholder_ts is None:
                self._jobs.complete(job.id, worker)
                return
            messages = [notice(EPHEMERAL_NOTE if config.reply == "ephemeral" else PRIVATE_NOTE)]
        self._jobs.save_result(job.id, worker, {**result, "shown_in_thread": not private})
        self._publish(job, worker, messages)

    def _post_privately(
        self, job: Job, worker: str, result: dict[str, Any], messages: Sequence[Message]
    ) -> dict[str, Any]:
        sent = int(result.get("private_sent") or 0)  # ephemeral messages can't be looked up: count them
        for n, message in enumerate(messages[sent:], start=sent + 1):
            self._client.chat_postEphemeral(
                channel=job.channel, user=job.user, thread_ts=job.thread_ts, **message
            )
            result = {**result, "private_sent": n, "shown_in_thread": False}
            self._jobs.save_result(job.id, worker, result)
        return result

    def _config(self, job: Job) -> ChannelConfig:
        return self._channels.for_channel(job.channel) if self._channels is not None else ChannelConfig()

    def _unwelcome(self, job: Job, worker: str, config: ChannelConfig, result: dict[str, Any]) -> bool:
        """A question asked of the channel gets no reply when a person already answered in its thread, or,
        with `post_only_when_confident`, when Sleuth would decline; True when it stays silent."""
        if someone_replied(self._client, job):
            self._stay_silent(job, worker, THREAD_CANCELLED)
            return True
        if config.post_only_when_confident and not result["answer"].get("answered"):
            self._stay_silent(job, worker, SILENT)
            return True
        return False

    def _stay_silent(self, job: Job, worker: str, kind: str | None) -> None:
        self._finish_unsolicited(job, kind)
        self._jobs.complete(job.id, worker)

    def _finish_unsolicited(self, job: Job, kind: str | None) -> None:
        """Takes the working reaction off the question; records what happened (`bot.channel_activity`)."""
        if kind is not None and self._activity is not None and job.thread_ts:
            self._activity.record(job.channel, job.thread_ts, kind, user=job.user)
        remove_working_reaction(self._client, job)

    def _stream_answer(self, job: Job, worker: str, result: dict[str, Any], shown: str | None) -> bool:
        """Streams the answer (`bot.streaming`), once its audience is known to be the thread, on from what
        live drafts `shown`; False when it is posted the ordinary way instead (streaming off or unavailable, a
        long answer, nothing to say)."""
        parts = streamed_answer(result["answer"], trace_id=job.trace_id)
        started = bool((result.get("stream") or {}).get("started"))
        if self._stream is None or not (self._stream.available or started) or parts is None:
            return False
        current = self._jobs.get(job.id) or job
        if current.status == CANCELLED or current.claimed_by != worker:
            return False  # _publish withdraws it, or leaves it to the job's new worker
        text, blocks, full = parts

        def save(saved: dict[str, Any]) -> None:
            self._jobs.save_result(job.id, worker, saved)

        try:
            ts = self._stream.deliver(
                current, result, text=text, blocks=blocks, full=full, key=_part(job, 0), save=save,
                shown=shown,
            )  # fmt: skip
        except StreamUnavailable as exc:
            log.info("answer streaming unavailable, posting instead", extra={"error": str(exc)})
            return False
        if current.placeholder_ts and current.placeholder_ts != ts:
            try:
                self._client.chat_delete(channel=job.channel, ts=current.placeholder_ts)
            except SlackApiError as exc:
                if exc.response.get("error") != "message_not_found":
                    raise
        self._jobs.set_placeholder(job.id, worker, ts, current.thread_ts or ts)
        if not self._jobs.complete(job.id, worker):
            latest = self._jobs.get(job.id)
            if latest is not None and latest.status == CANCELLED:  # deleted while it streamed
                withdraw(self._client, replace(latest, placeholder_ts=ts))
        return True

    def ensure_placeholder(self, job: Job, worker: str) -> Job:
        """The placeholder the intake posted (switched from "queued" to working), or, if the intake could not
        post one, one posted now (and, for `/sleuth ask`, the echo it goes under)."""
        if job.placeholder_ts:
            if job.ack_queued and job.result is None:
                self._client.chat_update(channel=job.channel, ts=job.placeholder_ts, text=PLACEHOLDER)
            return job
        thread_ts = job.thread_ts
        try:
            if job.kind == COMMAND and not thread_ts:
                echo = post_once(
                    self._client, job.channel, None, echo_key(job), {"text": echo_text(job)}, look_first=True
                )
                thread_ts = self._one_owner(job, "thread_ts", echo)
            ts = post_once(
                self._client,
                job.channel,
                thread_ts,
                placeholder_key(job),
                {"text": PLACEHOLDER},
                look_first=True,
            )
        except SlackApiError as exc:
            if job.kind != COMMAND or exc.response.get("error") not in CANT_POST:
                raise
            tell_asker(job, NOT_IN_CHANNEL)
            self._jobs.complete(job.id, worker)
            return job
        kept = self._one_owner(job, "placeholder_ts", ts)
        if kept != ts:  # the intake's late placeholder landed first: it may still say "Queued"
            self._client.chat_update(channel=job.channel, ts=kept, text=PLACEHOLDER)
        self._jobs.set_placeholder(job.id, worker, kept, thread_ts or kept)
        return self._jobs.get(job.id) or job

    def _one_owner(self, job: Job, column: str, ts: str) -> str:
        """`ts` if it is the job's placeholder (or echo) now; else the intake's, which landed late but was
        recorded first, and ours is deleted (`bot.receipt`: one owner, decided atomically)."""
        kept = self._jobs.settle_post(job.id, column, ts)
        if kept is None or kept == ts:
            return ts
        try:
            self._client.chat_delete(channel=job.channel, ts=ts)
        except SlackApiError as exc:
            if exc.response.get("error") != "message_not_found":
                raise
        log.info("intake's late post kept, ours removed", extra={"column": column})
        return kept

    def _investigate(
        self, job: Job, worker: str, config: ChannelConfig, saved: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None]:
        """The flow's answer, saved on the job, and what live drafts showed of it (None: no live stream, or
        what it holds is uncertain); shown live while the model writes it where that is safe
        (`bot.live_stream`: not on a try after one that started a stream)."""
        asker = self._askers.resolve(job.team, job.user)
        status: Any = _NoStatus()  # a question asked of the channel shows its reaction, not a status
        if not job.unsolicited:
            status = self._status.thread(job.channel, job.thread_ts or "", job.placeholder_ts)
        status.set(PLACEHOLDER)
        nameable = self._nameable(job)

        def progress(step: dict[str, Any]) -> None:
            text = progress_text(step, nameable=nameable)
            if text:
                status.set(text)
            self._jobs.renew(job.id, worker)

        principals = asker.principals
        if self._audience is not None:
            principals = self._audience.principals(job.team, job.channel, principals)
        from graph_flows.reasoners.llm_client import HEARTBEAT

        token = HEARTBEAT.set(lambda: self._jobs.renew(job.id, worker))  # long model calls keep the lease
        access = self._access_for(job.team, job.user) if self._access_for is not None else None
        live = self._live(job, worker, config, saved)
        try:
            out = self._investigator.ask(
                job.thread_id,
                job.text,
                asker=asker.label,
                principals=principals,
                progress=progress,
                access=access,
                scope=config.scope,
                **({"draft": live} if live is not None else {}),
            )
        finally:
            HEARTBEAT.reset(token)
            streamed = live.close() if live is not None else {}
            status.clear()  # before the answer or apology replaces the placeholder
        result = {**saved, "question": job.text, "answer": out["answer"], "trace": out.get("trace") or []}
        result |= streamed
        self._jobs.save_result(job.id, worker, result)
        for note in asker.notes:
            self._tell_privately(job, note)
        return result, live.shown if live is not None and streamed else None

    def _live(self, job: Job, worker: str, config: ChannelConfig, saved: dict[str, Any]) -> LiveStream | None:
        """The draft sink for this question, or None: streaming off, not safe here, or an earlier try's."""
        if self._stream is None or not self._stream.available or saved.get("stream"):
            return None
        if not live_allowed(job, config, self._audience):
            return None

        def save(stream: dict[str, Any]) -> None:
            self._jobs.save_result(job.id, worker, {**saved, "stream": stream})

        return LiveStream(self._stream, job, save)

    def _nameable(self, job: Job) -> Callable[[str], bool] | None:
        """What the channel-wide status may name; without an audience policy, in a channel, nothing."""
        if self._audience is not None:
            return self._audience.nameable(job.team, job.channel)
        return None if job.channel.startswith("D") else (lambda doc_id: False)

    def _publish(self, job: Job, worker: str, messages: Sequence[Message]) -> None:
        current = self._jobs.get(job.id) or job
        if current.status == CANCELLED:
            withdraw(self._client, current)
            return
        if current.claimed_by != worker:  # the lease ran out (a stalled heartbeat): its new worker delivers
            log.warning("job taken over, not posting", extra={"now_with": current.claimed_by})
            return
        first, *rest = messages
        look = current.redelivered
        if current.placeholder_ts:
            self._client.chat_update(channel=job.channel, ts=current.placeholder_ts, **first)
        else:
            ts = post_once(
                self._client, job.channel, current.thread_ts, _part(job, 0), first, look_first=look
            )
            self._jobs.set_placeholder(job.id, worker, ts, current.thread_ts or ts)
            current = self._jobs.get(job.id) or current
        thread_ts = current.thread_ts or current.placeholder_ts
        for n, message in enumerate(rest, start=1):
            post_once(self._client, job.channel, thread_ts, _part(job, n), message, look_first=look)
        if not self._jobs.complete(job.id, worker):
            latest = self._jobs.get(job.id)
            if latest is not None and latest.status == CANCELLED:
                withdraw(self._client, latest)

    def _apologise(self, job: Job, worker: str, text: str) -> None:
        try:
            current = self._jobs.get(job.id) or job
            if self._stream is not None and ((current.result or {}).get("stream") or {}).get("started"):
                self._stream.discard(current, current.result or {})  # no draft stays above an apology
            self._publish(job, worker, [notice(text)])
        except SLACK_FAILURES as exc:
            if is_transient(exc):
                self._retry_later(job, worker, exc)
                return
            log.error("apology not posted", extra={"error": error_code(exc)})
            tell_asker(job, text)
            self._jobs.complete(job.id, worker)

    def _retry_later(self, job: Job, worker: str, exc: BaseException) -> None:
        """Slack failed transiently: the job goes back to the table (result kept), or, past `give_up_s`,
        the thread is told and the job ends."""
        current = self._jobs.get(job.id) or job
        now = self._jobs.now()
        since = current.failing_since if current.failing_since is not None else now
        if now - since >= self._give_up_s:
            self._give_up(current, worker)
            return
        delay = retry_after(exc) or min(MAX_RETRY_DELAY_S, max(MIN_RETRY_DELAY_S, now - since))
        log.warning(
            "slack failed, job kept for another try",
            extra={"error": error_code(exc), "retry_in_s": round(delay, 1), "failing_s": round(now - since)},
        )
        self._jobs.defer(job.id, worker, delay)

    def _give_up(self, job: Job, worker: str) -> None:
        log.error(
            "gave up delivering the answer",
            extra={"failing_s": round(self._jobs.now() - (job.failing_since or 0))},
        )
        thread_ts = job.thread_ts or job.placeholder_ts
        try:
            post_once(
                self._client,
                job.channel,
                thread_ts,
                f"{job.trace_id}:gave-up",
                notice(UNDELIVERED),
                look_first=True,
            )
        except SLACK_FAILURES as exc:
            log.error("could not say so in the thread either", extra={"error": error_code(exc)})
            tell_asker(job, UNDELIVERED)
        self._jobs.fail(job.id, worker)

    def _tell_privately(self, job: Job, text: str) -> None:
        try:
            self._client.chat_postEphemeral(
                channel=job.channel, user=job.user, text=text, thread_ts=job.thread_ts
            )
        except SlackApiError as exc:
            log.warning("private note not posted", extra={"error": exc.response.get("error")})


class _NoStatus:
    def set(self, text: str) -> None:
        """Nothing shown."""

    def clear(self) -> None:
        """Nothing to clear."""


def _part(job: Job, n: int) -> str:
    return f"{job.trace_id}:part{n}"


def withdraw(client: WebClient, job: Job) -> None:
    """Replaces the job's placeholder or answer with a short note (its question was deleted)."""
    if not job.placeholder_ts:
        return
    try:
        client.chat_update(channel=job.channel, ts=job.placeholder_ts, **notice(WITHDRAWN))
    except SlackApiError as exc:
        log.warning("answer not withdrawn", extra={"error": exc.response.get("error")})
