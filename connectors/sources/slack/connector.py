"""Slack conversations as a source: the public channels an admin picks and the private channels the bot is in.

Each sync asks conversations.history of every channel for the messages after `oldest` (the change listing):
the first sync reaches back `initial_days` (or everything), later ones `lookback_days`. A thread whose parent
changed there (new, edited, a reply added or deleted: `mapping.fingerprint`) is read whole with
conversations.replies; a thread whose parent is gone from the window is `Deleted`; a channel that is no longer
listed (deleted, or a private channel the bot left) loses all its threads. An unchanged channel costs one
history call and no replies call.

Slack's events reach further than that listing (`connectors.sync_hints`): the bot notes each thread a `message`
event named (an edited or deleted reply, which the parent does not show, or any change older than the window),
and the next pull re-reads those threads whatever the listing says; a noted thread Slack no longer has is
`Deleted`. The notes a pull applied are cleared by the pull after the one whose cursor was saved.

Cursor: `{"channels": {<channel id>: {<thread ts>: <fingerprint>, ...}}, "synced": [<channel id>, ...],
"hints": [<note id>, ...]}`; a fingerprint starting with "-" marks a thread read but not indexed (bots only, or
addressed to Sleuth); `hints` are the notes the pull that returned it applied.

The source trusts Slack's own directory (`auth_kind = "none"`): the asker's Slack-verified email is looked up
in users.list (cached for `DIRECTORY_TTL_S`) to give their Slack account and, for a full member, the members
group. Permission sync (`acls_of`) re-reads the directory and every channel's members, so someone who leaves a
private channel loses its threads within one permission-sync interval; a channel Slack no longer shows leaves
its threads to nobody until content sync removes them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, Self

from connectors.base import (
    Checkpoint,
    ConnectorError,
    CurrentAcl,
    Cursor,
    Deleted,
    Failure,
    LinkedIdentity,
    Pulled,
    SourceDoc,
    SourceUnavailable,
)
from connectors.sources.slack import mapping
from connectors.sources.slack.client import SlackClient, SlackRejected
from connectors.sources.slack.config import SlackSourceConfig
from connectors.sources.slack.mapping import Person

if TYPE_CHECKING:
    from collections.abc import Sequence

    from connectors.sync_hints import Hint

log = logging.getLogger(__name__)

DIRECTORY_TTL_S = 300.0
DAY_S = 86_400
SKIPPED = "-"
Item = SourceDoc | Deleted | Failure | Checkpoint


class ThreadHints(Protocol):
    """The threads noted as changed since the last sync (`connectors.sync_hints.SyncHints`)."""

    def pending(self, source: str) -> list[Hint]: ...

    def clear(self, ids: Sequence[int]) -> None: ...


class SlackConnector:
    kind = "slack"
    auth_kind = "none"  # Slack itself verified the asker's email; no link needed
    config_model = SlackSourceConfig

    def __init__(
        self,
        config: SlackSourceConfig,
        *,
        name: str,
        client: SlackClient | None = None,
        clock: Callable[[], float] = time.time,
        hints: ThreadHints | None = None,
        **_: Any,
    ) -> None:
        self.name = name
        self._config = config
        self._client = client or SlackClient.from_config(config, name=name)
        self._clock = clock
        self._hints = hints
        self._people: dict[str, Person] | None = None
        self._people_at = 0.0
        self._lock = threading.Lock()
        self._indexed: set[str] | None = None  # ids the last pull left indexed (for `list_ids`)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- content -----------------------------------------------------------------------------------------

    def pull(self, cursor: Cursor | None) -> Pulled:
        saved = (cursor or {}).get("channels") or {}
        known: dict[str, dict[str, str]] = {str(c): dict(t) for c, t in saved.items()}
        synced = {str(c) for c in (cursor or {}).get("synced") or []}
        notes = self._take_hints(cursor)
        hinted: dict[str, set[str]] = defaultdict(set)
        for note in notes:
            channel, _, ts = note.item.partition(":")
            hinted[channel].add(ts)
        workspace_url, bot_user = self._client.workspace_url()
        channels, kept, failures = self._channels()
        failed = {f.id for f in failures}
        yield from failures
        for gone in sorted(set(known) - set(channels) - kept):
            yield from (Deleted(id=mapping.doc_id(self.name, gone, ts)) for ts in known.pop(gone))
        names = {cid: str(c.get("name") or cid) for cid, c in channels.items()}
        counts: Counter[str] = Counter()
        for cid, channel in channels.items():
            threads = known.setdefault(cid, {})
            context = _Context(channel, names, workspace_url, bot_user)
            for item in self._channel(context, threads, first=cid not in synced, hinted=hinted[cid]):
                counts[type(item).__name__] += 1
                if isinstance(item, Failure):
                    failed.add(item.id)
                yield item
            synced.add(cid)
            yield Checkpoint(cursor=_cursor(known, synced))
        self._indexed = {
            mapping.doc_id(self.name, cid, ts)
            for cid, threads in known.items()
            for ts, mark in threads.items()
            if not mark.startswith(SKIPPED)
        }
        applied = [n.id for n in notes if not failed & _failure_ids(self.name, n.item)]
        log.info(
            "slack pull finished",
            extra={"connector": self.name, "channels": len(channels), "hints": len(applied), **counts},
        )
        return _cursor(known, synced, applied)

    def _take_hints(self, cursor: Cursor | None) -> list[Hint]:
        """Clears the notes the saved cursor applied, then reads the ones still pending."""
        if self._hints is None:
            return []
        applied = [int(i) for i in (cursor or {}).get("hints") or []]
        if applied:
            self._hints.clear(applied)
        return self._hints.pending(self.name)

    def list_ids(self) -> Iterator[str]:
        """The threads the last pull left indexed: Slack has no cheaper listing than reading every history."""
        if self._indexed is None:
            raise SourceUnavailable("the Slack source lists its threads only after a pull")
        yield from sorted(self._indexed)

    def _channels(self) -> tuple[dict[str, dict[str, Any]], set[str], list[Failure]]:
        """The channels to read; the ids of picked channels that cannot be read now (their threads are kept);
        a failure for each of those."""
        picked: dict[str, dict[str, Any]] = {}
        kept: set[str] = set()
        failures: list[Failure] = []
        if self._config.channels:
            public = self._client.channels("public_channel")
            wanted = set(self._config.channels)
            for channel in public:
                if channel["id"] in wanted or channel.get("name") in wanted:
                    wanted -= {channel["id"], str(channel.get("name"))}
                    if channel.get("is_member"):
                        picked[channel["id"]] = channel
                    else:
                        kept.add(channel["id"])
                        reason = "the bot is not in this channel: invite it with /invite @Sleuth"
                        failures.append(Failure(id=f"{self.name}:{channel['id']}", reason=reason))
            failures += [
                Failure(id=f"{self.name}:#{w}", reason="no such public channel") for w in sorted(wanted)
            ]
        if self._config.include_private:
            for channel in self._client.channels("private_channel"):
                if channel.get("is_member"):
                    picked[channel["id"]] = channel
        return picked, kept, failures

    def _channel(
        self, ctx: _Context, threads: dict[str, str], *, first: bool, hinted: set[str]
    ) -> Iterator[Item]:
        """One channel's changed threads (those in its history window whose parent changed, and the `hinted`
        ones) and deletions; its known threads (`threads`) updated in place."""
        cid = ctx.channel["id"]
        oldest = self._oldest(first)
        try:
            parents = [m for page in self._client.history(cid, oldest=oldest) for m in page]
        except SlackRejected as exc:
            yield Failure(id=f"{self.name}:{cid}", reason=f"channel history unreadable: {exc.error}")
            return
        seen: set[str] = set()
        for parent in parents:
            ts = str(parent.get("ts") or "")
            if not ts or parent.get("thread_ts") not in (None, ts):
                continue  # a reply also sent to the channel: read with its thread
            seen.add(ts)
            mark = mapping.fingerprint(parent)
            if ts not in hinted and threads.get(ts, "").removeprefix(SKIPPED) == mark:
                continue
            yield from self._thread(ctx, parent, threads, mark)
        for ts in [t for t in threads if (oldest is None or float(t) > oldest) and t not in seen]:
            if not threads.pop(ts).startswith(SKIPPED):
                yield Deleted(id=mapping.doc_id(self.name, cid, ts))
        for ts in sorted(t for t in hinted - seen if t in threads):  # known, older than the window
            yield from self._reread(ctx, ts, threads)

    def _reread(self, ctx: _Context, ts: str, threads: dict[str, str]) -> Iterator[Item]:
        """A noted thread the history window does not show: read whole, or `Deleted` when Slack has it no more."""
        cid = ctx.channel["id"]
        try:
            messages = self._client.replies(cid, ts)
        except SlackRejected as exc:
            if exc.error != "thread_not_found":
                yield Failure(id=mapping.doc_id(self.name, cid, ts), reason=f"thread unreadable: {exc.error}")
                return
            messages = []
        if not messages:
            if not threads.pop(ts).startswith(SKIPPED):
                yield Deleted(id=mapping.doc_id(self.name, cid, ts))
            return
        yield from self._thread(ctx, messages[0], threads, mapping.fingerprint(messages[0]), messages)

    def _thread(
        self,
        ctx: _Context,
        parent: dict[str, Any],
        threads: dict[str, str],
        mark: str,
        messages: list[dict[str, Any]] | None = None,
    ) -> Iterator[Item]:
        """One thread's document (its `messages` read now unless given), or its deletion."""
        cid, ts = ctx.channel["id"], str(parent["ts"])
        doc_id = mapping.doc_id(self.name, cid, ts)
        doc = None
        if not mapping.addresses(parent, ctx.bot_user):
            try:
                if messages is None:
                    messages = self._client.replies(cid, ts) if parent.get("reply_count") else [parent]
            except SlackRejected as exc:
                if exc.error != "thread_not_found":
                    yield Failure(id=doc_id, reason=f"thread unreadable: {exc.error}")
                    return
                messages = []
            if messages:
                acl = ctx.acl if ctx.acl is not None else self._acl(ctx)
                doc = mapping.thread_to_doc(
                    source=self.name,
                    channel=ctx.channel,
                    messages=messages,
                    people=self._directory(),
                    channels=ctx.names,
                    workspace_url=ctx.workspace_url,
                    acl=acl,
                )
        if doc is None:
            if ts in threads and not threads[ts].startswith(SKIPPED):
                yield Deleted(id=doc_id)
            threads[ts] = SKIPPED + mark
            return
        threads[ts] = mark
        yield doc

    def _oldest(self, first: bool) -> float | None:
        days = self._config.initial_days if first else self._config.lookback_days
        return None if days is None else self._clock() - days * DAY_S

    def _acl(self, ctx: _Context) -> frozenset[str]:
        ctx.acl = self._channel_acl(ctx.channel, self._directory())
        return ctx.acl

    def _channel_acl(self, channel: dict[str, Any], people: dict[str, Person]) -> frozenset[str]:
        return mapping.channel_acl(self.name, channel, self._client.members(channel["id"]), people)

    # -- permissions -------------------------------------------------------------------------------------

    def acls_of(self, ids: Iterable[str]) -> Iterator[CurrentAcl | Failure]:
        """The current ACL of each indexed thread: its channel's, from the directory and members read now. A
        thread of a channel Slack no longer shows the bot is for nobody (content sync then removes it)."""
        by_channel: dict[str, list[str]] = defaultdict(list)
        for doc_id in ids:
            channel = doc_id.removeprefix(f"{self.name}:").partition(":")[0]
            by_channel[channel].append(doc_id)
        if not by_channel:
            return
        people = self._directory(refresh=True)
        listed = {c["id"]: c for c in self._client.channels("public_channel,private_channel")}
        for cid, doc_ids in sorted(by_channel.items()):
            channel = listed.get(cid)
            acl: frozenset[str] = frozenset()
            if channel is not None and (channel.get("is_member") or not channel.get("is_private")):
                try:
                    acl = self._channel_acl(channel, people)
                except SlackRejected as exc:
                    yield Failure(id=f"{self.name}:{cid}", reason=f"channel members unreadable: {exc.error}")
            yield from (CurrentAcl(id=doc_id, acl=acl) for doc_id in doc_ids)

    # -- people ------------------------------------------------------------------------------------------

    def principals(self, identity: LinkedIdentity) -> set[str]:
        """The asker's Slack account (by their Slack-verified email) and, for a full member, the members group.
        When Slack cannot say now, nothing: Slack threads are then not searched for them."""
        email = identity.account.strip().lower()
        try:
            people = self._directory()
        except ConnectorError:
            log.warning("slack directory unavailable; no slack principals", extra={"connector": self.name})
            return set()
        found = next((p for p in people.values() if p.email == email and p.active), None)
        return mapping.person_principals(self.name, found)

    def people(self) -> list[str]:
        """Emails of the workspace's people (the permission audit asks as each of them)."""
        return sorted({p.email for p in self._directory().values() if p.active and p.email})

    def known_principals(self) -> set[str]:
        held: set[str] = set()
        for found in self._directory().values():
            held |= mapping.person_principals(self.name, found)
        return held

    def _directory(self, *, refresh: bool = False) -> dict[str, Person]:
        with self._lock:
            fresh = self._people is not None and time.monotonic() - self._people_at < DIRECTORY_TTL_S
            if fresh and not refresh and self._people is not None:
                return self._people
            self._people = mapping.directory(self._client.users())
            self._people_at = time.monotonic()
            return self._people


class _Context:
    """What every thread of one channel is read with; its ACL is read once, when first needed."""

    def __init__(
        self, channel: dict[str, Any], names: dict[str, str], workspace_url: str, bot_user: str
    ) -> None:
        self.channel, self.names, self.workspace_url, self.bot_user = channel, names, workspace_url, bot_user
        self.acl: frozenset[str] | None = None


def _cursor(
    known: dict[str, dict[str, str]], synced: set[str], hints: list[int] | None = None
) -> dict[str, Any]:
    """A mid-run checkpoint applies no notes yet (`hints` empty): a run that stops there leaves them pending."""
    return {
        "channels": {c: dict(sorted(t.items())) for c, t in sorted(known.items())},
        "synced": sorted(synced),
        "hints": sorted(hints or []),
    }


def _failure_ids(source: str, item: str) -> set[str]:
    """The failures that leave a note unapplied: its channel's, or its thread's."""
    channel, _, ts = item.partition(":")
    return {f"{source}:{channel}", mapping.doc_id(source, channel, ts)}
