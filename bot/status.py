"""The thread's "working on it" line: `assistant.threads.setStatus` where Slack allows it, otherwise the
placeholder message's text. A status that cannot be shown never stops an answer.
"""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)


class ThreadStatus:
    def __init__(self, client: WebClient, channel: str, thread_ts: str, placeholder_ts: str | None) -> None:
        self._client, self._channel, self._thread_ts = client, channel, thread_ts
        self._placeholder_ts = placeholder_ts
        self._assistant = True
        self.last: str | None = None

    def set(self, text: str) -> None:
        if text == self.last:
            return
        self.last = text
        if self._assistant:
            try:
                self._client.assistant_threads_setStatus(
                    channel_id=self._channel, thread_ts=self._thread_ts, status=text
                )
                return
            except SlackApiError as exc:
                self._assistant = False
                log.info(
                    "thread status unavailable, updating the placeholder",
                    extra={"error": exc.response.get("error")},
                )
        if self._placeholder_ts:
            try:
                self._client.chat_update(channel=self._channel, ts=self._placeholder_ts, text=text)
            except SlackApiError as exc:
                log.warning("placeholder progress not shown", extra={"error": exc.response.get("error")})

    def clear(self) -> None:
        if self._assistant and self.last is not None:
            try:
                self._client.assistant_threads_setStatus(
                    channel_id=self._channel, thread_ts=self._thread_ts, status=""
                )
            except SlackApiError as exc:
                log.info("thread status not cleared", extra={"error": exc.response.get("error")})
