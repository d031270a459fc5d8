"""The answer streamed into its thread with Slack's chat streaming methods, where that is safe.

Safe means: what is streamed is grounded (a model's draft sentence only once it passed the grounding checks,
`bot.live_stream`; otherwise the final, checked answer) and the audience is decided (a DM, or a channel answer
that `bot.audience` lets everyone see; an answer going privately is never streamed). The text goes out a few
sentences at a time (`chat.startStream`, `chat.appendStream`), then `chat.stopStream` adds the rest of the answer
as blocks (conflicts, sources, gaps, confidence, the buttons) and the message metadata `bot.posting` looks for.
Where the checked answer does not go on from what the live drafts showed, it is written whole into the message
with `chat.update` after the stop, so no draft stays visible. Outside DMs Slack requires the recipient (the
asker and their team). The streamed message then stands in for the placeholder, which is deleted.

Exactly once, as for posts: before starting, the job's saved result notes that a stream was started, and the
stream's ts once known. A redelivered job finishes that stream instead of starting another: it stops it (if
still streaming) and writes the whole answer into it with `chat.update`, so a chunk lost or repeated on the wire
never shows. A stream whose start timed out is found in the thread (Sleuth's message without metadata, after the
placeholder). Where Slack refuses to start a stream (`STREAM_UNAVAILABLE`: no streaming for this app, and this
process stops trying; or any other refusal, for this answer) the answer is posted the ordinary way.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.jobs import Job
from bot.posting import EVENT_TYPE, post_metadata
from bot.render import Message
from bot.slack_retry import is_transient

log = logging.getLogger(__name__)

CHUNK_CHARS = 280  # text per streaming call: a sentence or two
STREAM_UNAVAILABLE = frozenset(
    {
        "unknown_method",
        "method_deprecated",
        "not_allowed_token_type",
        "missing_scope",
        "feature_not_enabled",
        "channel_type_not_supported",
        "team_not_allowed",
    }
)
NOT_STREAMING = "message_not_in_streaming_state"
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|\n|$)\s*")  # a sentence and the space after it


class StreamUnavailable(Exception):
    """Slack has no streaming for this app or channel; post the ordinary way."""


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """The text in pieces of about `size` characters, cut after sentences; joined, they are the text."""
    out: list[str] = []
    current = ""
    for piece in _SENTENCE.findall(text):
        if current and len(current) + len(piece) > size:
            out.append(current)
            current = ""
        current += piece
    if current:
        out.append(current)
    return out or [text]


@dataclass
class Streamed:
    """What the job's saved result keeps about its stream (`result["stream"]`)."""

    started: bool = False
    ts: str | None = None

    @classmethod
    def of(cls, result: dict[str, Any]) -> Streamed:
        saved = result.get("stream") or {}
        return cls(started=bool(saved.get("started")), ts=saved.get("ts"))

    def saved(self) -> dict[str, Any]:
        return {"started": self.started, "ts": self.ts}


class AnswerStream:
    """Streams one finished answer for a job; `save` keeps the stream's state on the job as it goes."""

    def __init__(self, client: WebClient) -> None:
        self._client = client
        self.available = True

    def deliver(
        self,
        job: Job,
        result: dict[str, Any],
        *,
        text: str,
        blocks: list[dict[str, Any]],
        full: Message,
        key: str,
        save: Callable[[dict[str, Any]], None],
        shown: str | None = None,
    ) -> str:
        """Streams `text` then stops with `blocks` (`full` is the same answer as one ordinary message);
        returns the streamed message's ts. Raises StreamUnavailable before anything was posted. `shown`: what
        this try's live drafts streamed already (`bot.live_stream`); the stream goes on from there when the
        checked answer starts with it, else the whole answer replaces it."""
        state = Streamed.of(result)
        ts = self.earlier(job, state)
        if ts is not None and shown is not None and text.startswith(shown):
            self._append(job, ts, text[len(shown) :])  # the rest of what this try streamed live
            self._stop(job, ts, blocks, key)
            return ts
        if ts is not None:  # an earlier try's stream, or a live one the checked answer does not extend
            self._finish(job, ts, blocks, full, key)
            return ts
        state.started = True
        save({**result, "stream": state.saved()})
        pieces = chunks(text)
        state.ts = self.start(job, pieces[0])
        save({**result, "stream": state.saved()})
        for piece in pieces[1:]:
            self.append(job, state.ts, piece)
        self._stop(job, state.ts, blocks, key)
        return state.ts

    def earlier(self, job: Job, state: Streamed) -> str | None:
        """The ts of the stream an earlier try (or this job's live drafts) started, if any."""
        if state.started and state.ts is None:
            state.ts = self._started_earlier(job, job.thread_ts or job.placeholder_ts or "")
        return state.ts

    def append(self, job: Job, ts: str, text: str) -> None:
        """More text at the end of a stream (one call: a live draft's newly grounded sentences)."""
        self._client.chat_appendStream(channel=job.channel, ts=ts, markdown_text=text)

    def discard(self, job: Job, result: dict[str, Any]) -> None:
        """A stream the answer will not be delivered in (it goes privately, in several messages, or the
        question was deleted): stopped and deleted, so no draft stays in the thread."""
        ts = self.earlier(job, Streamed.of(result))
        if ts is None:
            return
        for call, ignored in (
            (self._client.chat_stopStream, NOT_STREAMING),
            (self._client.chat_delete, "message_not_found"),
        ):
            try:
                call(channel=job.channel, ts=ts)
            except SlackApiError as exc:
                if exc.response.get("error") != ignored:
                    raise
        log.info("answer stream discarded", extra={"ts": ts})

    def _append(self, job: Job, ts: str, text: str) -> None:
        for piece in chunks(text) if text else []:
            self.append(job, ts, piece)

    def _stop(self, job: Job, ts: str, blocks: list[dict[str, Any]], key: str) -> None:
        self._client.chat_stopStream(channel=job.channel, ts=ts, blocks=blocks, metadata=post_metadata(key))

    def start(self, job: Job, first: str) -> str:
        """A new stream in the job's thread holding `first`; its ts. Raises StreamUnavailable where Slack
        refused it (nothing was posted)."""
        thread_ts = job.thread_ts or job.placeholder_ts or ""
        recipient: dict[str, str] = {}
        if not job.channel.startswith("D"):  # Slack wants the recipient outside DMs
            recipient = {"recipient_user_id": job.user, "recipient_team_id": job.team}
        try:
            started = self._client.chat_startStream(
                channel=job.channel, thread_ts=thread_ts, markdown_text=first, **recipient
            )
        except SlackApiError as exc:
            error = str(exc.response.get("error"))
            if error in STREAM_UNAVAILABLE:
                self.available = False  # for this app: stop trying
            if error in STREAM_UNAVAILABLE or not is_transient(exc):  # refused, so nothing was posted
                raise StreamUnavailable(error) from exc
            raise
        return str(started["ts"])

    def _finish(self, job: Job, ts: str, blocks: list[dict[str, Any]], full: Message, key: str) -> None:
        """An earlier try's stream: stopped if need be, then made the whole answer, whatever reached it."""
        try:
            self._client.chat_stopStream(
                channel=job.channel, ts=ts, blocks=blocks, metadata=post_metadata(key)
            )
        except SlackApiError as exc:
            if exc.response.get("error") != NOT_STREAMING:
                raise
        self._client.chat_update(channel=job.channel, ts=ts, **full)
        log.info("earlier answer stream finished", extra={"ts": ts})

    def _started_earlier(self, job: Job, thread_ts: str) -> str | None:
        """The stream an earlier try started but never heard back about: Sleuth's message in the thread,
        after the placeholder, that carries no metadata (a stopped stream, like every post, carries its key)."""
        after = job.placeholder_ts or thread_ts
        pages = self._client.conversations_replies(
            channel=job.channel, ts=thread_ts, include_all_metadata=True, limit=200
        )
        for page in pages:
            for message in page.get("messages", []):
                ours = (
                    message.get("bot_id") and (message.get("metadata") or {}).get("event_type") != EVENT_TYPE
                )
                if ours and float(message["ts"]) > float(after) and message["ts"] != thread_ts:
                    return str(message["ts"])
        return None
