"""What Slack's events mean for the Slack sources (connectors/sources/slack), so the index follows Slack at once
instead of at the next scheduled sync.

- Membership (`member_joined_channel`, `member_left_channel`, `group_left`) and channels going away or being
  archived (`channel_deleted`, `group_deleted`, `channel_archive`, `group_archive`): a permission sync of every
  Slack source, debounced; someone who left a private channel stops seeing its threads within seconds. When the
  bot itself joined or left, or a channel went, a content sync follows (it indexes or removes the threads).
- A thread's messages (a new reply, an edit, a deletion, in a public or private channel): the thread is noted
  in `connectors.sync_hints`, which the next content sync of each Slack source reads, and (unless
  `SLEUTH_SLACK_EVENT_CONTENT_SYNC=false`) a debounced content sync is asked for.

Listeners call these and return: the database note is one insert, the syncs run on the trigger's thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from connectors.catalog import SourceEntry
from connectors.sync_hints import SyncHints
from connectors.sync_trigger import SyncTrigger

log = logging.getLogger(__name__)

SLACK_KIND = "slack"
INDEXED_CHANNEL_TYPES = {"channel", "group"}  # the Slack source reads public and private channels, not DMs


class SourceEvents:
    def __init__(
        self,
        sources: Callable[[], list[SourceEntry]],
        hints: Callable[[], SyncHints],
        trigger: SyncTrigger,
        *,
        content_sync: bool = True,
    ) -> None:
        self._sources, self._hints, self._trigger = sources, hints, trigger
        self._content_sync = content_sync

    def members_changed(self, channel: str, *, bot_itself: bool = False) -> None:
        """Who may read `channel` changed; `bot_itself`: what the bot may read changed too."""
        names = self._slack_sources()
        for name in names:
            self._trigger.request(name, "permissions")
            if bot_itself:
                self._trigger.request(name, "content")
        if names:
            log.info("slack membership event", extra={"channel": channel, "sources": len(names)})

    def thread_changed(self, event: dict[str, Any], thread_ts: str) -> None:
        """A message of the thread `thread_ts` in the event's channel was added, edited or deleted."""
        channel = str(event.get("channel") or "")
        if not channel or not thread_ts or event.get("channel_type") not in INDEXED_CHANNEL_TYPES:
            return
        names = self._slack_sources()
        if not names:
            return
        self._hints().note(names, f"{channel}:{thread_ts}")
        if self._content_sync:
            for name in names:
                self._trigger.request(name, "content")

    def _slack_sources(self) -> list[str]:
        return [entry.name for entry in self._sources() if entry.kind == SLACK_KIND]


def thread_of(message: dict[str, Any]) -> str:
    """The thread a message belongs to: its parent's ts, or its own for a top-level message."""
    return str(message.get("thread_ts") or message.get("ts") or "")
