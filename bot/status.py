"""The thread's "working on it" line, kept off the investigation's hot path.

A job's `ThreadStatus.set(...)` only records the latest line and returns; one sender thread per process (the
`StatusBoard`) delivers it with `assistant.threads.setStatus`, or, in a thread where Slack refuses that for
good, as the placeholder message's text. Lines that arrive faster than a channel may be updated are coalesced
(only the newest is sent), each channel gets at most one status call per `STATUS_INTERVAL_S`, and a 429 pauses
that channel for its `Retry-After` without sleeping anywhere: the line stays pending and is sent when allowed.
A status that cannot be shown never stops or slows an answer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.mrkdwn import escape

log = logging.getLogger(__name__)

STATUS_INTERVAL_S = 1.0  # per channel; Slack allows roughly one update per second in a conversation
DEFAULT_RETRY_AFTER_S = 1.0
IDLE_EXIT_S = 5.0  # the sender thread ends after this long with nothing to send; the next line restarts it
MAX_DEFERRALS = 5  # a line Slack keeps deferring (429s, 5xx, no connection) is dropped after this many tries
STOP_TIMEOUT_S = 5.0
TRANSIENT_ERRORS = {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
ASSISTANT, PLACEHOLDER, HIDDEN = "assistant", "placeholder", "hidden"


@dataclass(eq=False)  # compared by identity: two jobs may share a thread
class _Line:
    """One thread's status: where it is shown and what is still to send."""

    channel: str
    thread_ts: str
    placeholder_ts: str | None
    mode: str = ASSISTANT
    pending: str | None = None
    sent: str | None = None
    sending: bool = False
    closed: bool = False
    deferrals: int = 0


class ThreadStatus:
    """A job's handle on its thread's status line; `set` never blocks on Slack."""

    def __init__(self, board: StatusBoard, line: _Line) -> None:
        self._board, self._line = board, line

    @property
    def last(self) -> str | None:
        return self._line.pending if self._line.pending is not None else self._line.sent

    def set(self, text: str) -> None:
        self._board.post(self._line, text)

    def clear(self) -> None:
        """Drops unsent lines and waits out one in flight (so it cannot overwrite the answer), then queues the
        clearing of a status Slack is showing."""
        self._board.finish(self._line)


class StatusBoard:
    """Delivers every job's status lines for one process: coalesced, rate-limited per channel, off-thread."""

    def __init__(
        self,
        client: WebClient,
        *,
        interval_s: float = STATUS_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        background: bool = True,
    ) -> None:
        # Without slack_sdk's rate-limit retry handler: a 429 must come back here, not sleep inside the call.
        self._client = WebClient(
            token=client.token,
            base_url=client.base_url,
            timeout=client.timeout,
            ssl=client.ssl,
            proxy=client.proxy,
            headers=dict(client.headers),
        )
        self._interval_s, self._clock, self._background = interval_s, clock, background
        self._cond = threading.Condition()
        self._lines: list[_Line] = []
        self._not_before: dict[str, float] = {}  # channel -> earliest time of its next call
        self._thread: threading.Thread | None = None
        self._stopped = False

    def thread(self, channel: str, thread_ts: str, placeholder_ts: str | None) -> ThreadStatus:
        return ThreadStatus(self, _Line(channel, thread_ts, placeholder_ts))

    def post(self, line: _Line, text: str) -> None:
        with self._cond:
            if line.closed or line.mode == HIDDEN or text == (line.pending or line.sent):
                return
            line.pending = text
            self._want(line)

    def finish(self, line: _Line) -> None:
        with self._cond:
            line.closed = True
            line.pending = None
            while line.sending:
                self._cond.wait()
            if line.mode == ASSISTANT and line.sent:
                line.pending = ""
                self._want(line)

    def close(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Ends the sender thread; lines not yet sent are dropped (the answers themselves are not affected)."""
        with self._cond:
            self._stopped = True
            self._lines.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout_s)

    def pump(self) -> float | None:
        """Sends every line that is due now; returns seconds until the next one is due (None: nothing waits)."""
        while True:
            with self._cond:
                line, wait = self._take_due()
            if line is None:
                return wait
            self._send(line)

    # -- internals ---------------------------------------------------------------------------------------

    def _want(self, line: _Line) -> None:
        if self._stopped:
            return
        if line not in self._lines:
            self._lines.append(line)
        self._cond.notify_all()
        if self._background and (self._thread is None or not self._thread.is_alive()):
            self._thread = threading.Thread(target=self._run, name="sleuth-status", daemon=True)
            self._thread.start()

    def _take_due(self, *, take: bool = True) -> tuple[_Line | None, float | None]:
        """The first line due now (marked as sending if `take`), or None and the seconds until the next is due."""
        now, wait = self._clock(), None
        for line in list(self._lines):
            if line.pending is None:
                if not line.sending:
                    self._lines.remove(line)
                continue
            if line.sending:
                continue
            due = self._not_before.get(line.channel, 0.0)
            if due <= now:
                line.sending = take
                return line, None
            wait = due - now if wait is None else min(wait, due - now)
        return None, wait

    def _run(self) -> None:
        """The sender thread: pump, then sleep until the next line is due or a new one arrives."""
        idle_since = self._clock()
        while True:
            self.pump()
            with self._cond:
                if self._stopped:
                    self._thread = None
                    return
                line, wait = self._take_due(take=False)
                if line is not None:  # arrived while pumping
                    continue
                if self._lines:
                    idle_since = self._clock()
                    self._cond.wait(wait)
                elif self._clock() - idle_since >= IDLE_EXIT_S:
                    self._thread = None
                    return
                else:
                    self._cond.wait(IDLE_EXIT_S)

    def _send(self, line: _Line) -> None:
        with self._cond:
            text = line.pending or ""
            line.pending = None
        outcome, retry_after = self._deliver(line, text)
        with self._cond:
            line.sending = False
            now = self._clock()
            line.deferrals = line.deferrals + 1 if outcome == "later" else 0
            if outcome == "sent":
                line.sent = text
                self._not_before[line.channel] = now + self._interval_s
            elif outcome == "later":
                self._not_before[line.channel] = now + max(retry_after, self._interval_s)
                retry = line.deferrals < MAX_DEFERRALS and not (line.closed and text) and not self._stopped
                if line.pending is None and retry:
                    line.pending = text  # still the newest line: send it when the channel allows
            elif outcome == "fallback" and not line.closed:
                line.mode = PLACEHOLDER if line.mode == ASSISTANT and line.placeholder_ts else HIDDEN
                if line.pending is None and line.mode == PLACEHOLDER:
                    line.pending = text
            self._cond.notify_all()

    def _deliver(self, line: _Line, text: str) -> tuple[str, float]:
        """One Slack call; "sent", "later" (rate limited or Slack trouble: retry), or "fallback" (refused)."""
        try:
            if line.mode == ASSISTANT:
                self._client.assistant_threads_setStatus(
                    channel_id=line.channel, thread_ts=line.thread_ts, status=text
                )
            elif text:  # the placeholder is replaced by the answer itself: nothing to clear
                self._client.chat_update(channel=line.channel, ts=line.placeholder_ts, text=escape(text))
            return "sent", 0.0
        except SlackApiError as exc:
            error = exc.response.get("error")
            status_code = getattr(exc.response, "status_code", 200)
            if status_code == 429 or status_code >= 500 or error in TRANSIENT_ERRORS:
                retry_after = _retry_after(exc)
                log.info("thread status deferred", extra={"error": error, "retry_after_s": retry_after})
                return "later", retry_after
            log.info("thread status refused", extra={"error": error, "mode": line.mode})
            return "fallback", 0.0
        except OSError as exc:  # connection trouble: like a 5xx
            log.info("thread status deferred", extra={"error": type(exc).__name__})
            return "later", DEFAULT_RETRY_AFTER_S


def _retry_after(exc: SlackApiError) -> float:
    headers = getattr(exc.response, "headers", None) or {}
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        return float(value[0] if isinstance(value, list) else value)
    except (TypeError, ValueError):
        return DEFAULT_RETRY_AFTER_S
