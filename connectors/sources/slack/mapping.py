"""Raw Slack JSON -> `SourceDoc`, channel ACLs and the people Slack knows. Pure: no I/O.

A thread (its parent and every reply) is one document, `{source}:{channel}:{thread_ts}`, titled by the
parent's first line, linked by its permalink. Only people's messages count: a bot's message (Sleuth's own
answers among them), a join/leave/topic notice and a deleted message's tombstone are left out, and so is a
whole thread whose parent addresses Sleuth (a conversation with Sleuth holds its answers, not the team's).

ACLs: a public channel's threads are for every full member of the workspace (`group:<source>:members`) and
the guests invited to that channel; a private channel's for its members only (`user:<source>:<Slack id>`).
Deactivated users, bots and members Slack does not list in the workspace (another organisation's people in
a shared channel) grant nothing.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from connectors.base import Link, LinkType, SourceDoc, account_principal, group_principal
from connectors.text import ISSUE_KEY, comment_text, join_comments

MEMBERS = "members"  # the group of the workspace's full members (not guests, bots or the deactivated)
KEPT_SUBTYPES = {None, "thread_broadcast", "file_share", "me_message"}
TITLE_CHARS = 120
_USER_REF = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_CHANNEL_REF = re.compile(r"<#([CG][A-Z0-9]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")


@dataclass(frozen=True)
class Person:
    id: str
    handle: str  # the name shown in a thread's text: display name, else username
    email: str | None
    full_member: bool  # not a guest
    is_bot: bool
    deleted: bool  # deactivated

    @property
    def active(self) -> bool:
        """A human who may sign in."""
        return not (self.is_bot or self.deleted)


def person(raw: dict[str, Any]) -> Person:
    profile = raw.get("profile") or {}
    handle = profile.get("display_name") or raw.get("name") or raw.get("id", "someone")
    email = profile.get("email")
    return Person(
        id=str(raw["id"]),
        handle=str(handle).replace(" ", "_"),
        email=str(email).strip().lower() if email else None,
        full_member=not (raw.get("is_restricted") or raw.get("is_ultra_restricted")),
        is_bot=bool(raw.get("is_bot") or raw.get("id") == "USLACKBOT"),
        deleted=bool(raw.get("deleted")),
    )


def directory(users: Iterable[dict[str, Any]]) -> dict[str, Person]:
    return {p.id: p for p in (person(u) for u in users if isinstance(u, dict) and u.get("id"))}


def person_principals(source: str, found: Person | None) -> set[str]:
    """What one workspace member holds on this source: their Slack account, and the members group unless they
    are a guest. A deactivated account or a bot holds nothing."""
    if found is None or not found.active:
        return set()
    held = {account_principal(source, found.id)}
    return held | ({group_principal(source, MEMBERS)} if found.full_member else set())


def channel_acl(
    source: str, channel: dict[str, Any], members: list[str], people: dict[str, Person]
) -> frozenset[str]:
    """Who may read a channel's threads (see the module docstring)."""
    listed = [people[m] for m in members if m in people and people[m].active]
    if channel.get("is_private") or channel.get("is_group"):
        return frozenset(account_principal(source, p.id) for p in listed)
    guests = {account_principal(source, p.id) for p in listed if not p.full_member}
    return frozenset({group_principal(source, MEMBERS), *guests})


def doc_id(source: str, channel: str, thread_ts: str) -> str:
    return f"{source}:{channel}:{thread_ts}"


def is_human(message: dict[str, Any], people: dict[str, Person]) -> bool:
    if message.get("bot_id") or message.get("subtype") not in KEPT_SUBTYPES or not message.get("user"):
        return False
    found = people.get(str(message["user"]))
    return found is None or not found.is_bot  # a departed colleague's words still count


def addresses(message: dict[str, Any], bot_user: str) -> bool:
    return bool(bot_user) and f"<@{bot_user}" in str(message.get("text") or "")


def fingerprint(parent: dict[str, Any]) -> str:
    """What changes on a thread's parent in conversations.history when the thread changes: its text or edit,
    a reply added or deleted."""
    seen = [parent.get(k) for k in ("text", "subtype", "reply_count", "latest_reply", "user")]
    seen.append((parent.get("edited") or {}).get("ts"))
    return hashlib.sha256(json.dumps(seen, sort_keys=True, default=str).encode()).hexdigest()[:16]


def plain_text(text: str, people: dict[str, Person], channels: dict[str, str]) -> str:
    """Slack's mrkdwn as people read it: mentions by name, links by label and address, entities decoded."""
    text = _USER_REF.sub(lambda m: f"@{people[m[1]].handle}" if m[1] in people else "@someone", text)
    text = _CHANNEL_REF.sub(lambda m: f"#{m[2] or channels.get(m[1], 'a-channel')}", text)
    text = _SPECIAL.sub(lambda m: f"@{m[1]}", text)
    text = _LINK.sub(lambda m: f"{m[2]} ({m[1]})" if m[2] and m[2] != m[1] else m[1], text)
    return html.unescape(text).strip()


def thread_to_doc(
    *,
    source: str,
    channel: dict[str, Any],
    messages: list[dict[str, Any]],
    people: dict[str, Person],
    channels: dict[str, str],
    workspace_url: str,
    acl: frozenset[str],
) -> SourceDoc | None:
    """One thread's document, or None when no person's message is left in it."""
    kept = [m for m in messages if is_human(m, people)]
    if not kept:
        return None
    root = str(messages[0].get("thread_ts") or messages[0]["ts"])
    texts = [plain_text(str(m.get("text") or ""), people, channels) for m in kept]
    authors = [people[m["user"]].handle if m["user"] in people else str(m["user"]) for m in kept]
    dates = [_when(m["ts"]) for m in kept]
    first_line = next((line.strip() for line in texts[0].splitlines() if line.strip()), "")
    name = str(channel.get("name") or channel["id"])
    title = _clip(first_line) or f"Thread in #{name}"
    said = [comment_text(a, d.date(), t) for a, d, t in zip(authors, dates, texts, strict=True)]
    text = join_comments(said[0], said[1:])  # "Comment by ann on 2023-11-14: ...": the reader reads past it
    changed = max([*dates, *(_when(m["edited"]["ts"]) for m in kept if (m.get("edited") or {}).get("ts"))])
    return SourceDoc(
        id=doc_id(source, str(channel["id"]), root),
        source=source,
        kind="thread",
        title=title,
        url=permalink(workspace_url, str(channel["id"]), root),
        text=text,
        updated_at=changed,
        version=fingerprint(messages[0]),
        acl=acl,
        links=tuple(
            Link(target=key, type=LinkType.MENTIONS, by_name=True)
            for key in dict.fromkeys(ISSUE_KEY.findall(text))
        ),
        metadata={
            "channel": channel["id"],
            "channel_name": name,
            "thread_ts": root,
            "replies": len(kept) - 1,
            "messages": [
                {"author": a, "user": m["user"], "ts": m["ts"], "date": d.isoformat()}
                for a, m, d in zip(authors, kept, dates, strict=True)
            ],
        },
    )


def permalink(workspace_url: str, channel: str, ts: str) -> str:
    """The link Slack's chat.getPermalink gives a thread's parent, built without a call per thread."""
    return f"{workspace_url.rstrip('/')}/archives/{channel}/p{ts.replace('.', '')}"


def _when(ts: str) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=UTC)


def _clip(line: str) -> str:
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
