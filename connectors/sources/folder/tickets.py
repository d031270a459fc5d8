"""Tickets, whatever file they came from: every ticket format of a folder (JSON files, markdown with front
matter, Jira's CSV export) becomes one record shape, and this module turns a record into a `SourceDoc`.

Record: `key, summary, description, type, status, priority, assignee, reporter, components, labels, created,
updated, comments[{author, created, body}], links, pages[], acl`. `links` may be a list of `{type, key}`, of
keys, of strings such as `"blocks ENG-2"` or `"[[Page Title]]"`, or a mapping `{blocks: [ENG-2]}`.
Each comment becomes its own chunk (`connectors.text.join_comments`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from connectors.base import Link, LinkType, SourceDoc
from connectors.sources.folder.common import (
    WIKI_LINK,
    FolderContext,
    UnreadableItem,
    as_list,
    name_links,
    plain,
    read_text,
    readable,
    when,
)
from connectors.text import TICKET_KEY, comment_text, join_comments

LINK_TYPES = {
    "blocks": LinkType.BLOCKS,
    "is blocked by": LinkType.BLOCKS,
    "blocked by": LinkType.BLOCKS,
    "relates": LinkType.RELATES,
    "relates to": LinkType.RELATES,
    "duplicates": LinkType.DUPLICATES,
    "is duplicated by": LinkType.DUPLICATES,
    "clones": LinkType.CLONES,
    "is cloned by": LinkType.CLONES,
    "parent": LinkType.PARENT,
}
_FIELDS = (
    ("type", "Type"),
    ("status", "Status"),
    ("priority", "Priority"),
    ("assignee", "Assignee"),
    ("reporter", "Reporter"),
    ("components", "Components"),
    ("labels", "Labels"),
)
_TYPED_KEY = re.compile(r"^\s*(?P<type>[a-z][a-z ]*?)\s*:?\s+(?P<key>[A-Z][A-Z0-9]{1,9}-\d{1,6})\s*$", re.I)


def ticket_records(path: Path) -> list[dict[str, Any]]:
    """The tickets of a JSON file: one object or a list of them."""
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise UnreadableItem("bad JSON", f"line {exc.lineno}") from exc
    records = data if isinstance(data, list) else [data]
    if not all(isinstance(r, dict) for r in records):
        raise UnreadableItem("a ticket file holds an object or a list of objects")
    return records


def ticket_doc(record: dict[str, Any], ctx: FolderContext, path: Path, *, anchor: str = "") -> SourceDoc:
    """A ticket record as a document; `anchor` tells apart the tickets of one export file in their URLs."""
    key = str(record.get("key") or "").strip()
    summary = str(record.get("summary") or "").strip()
    if not key or not summary:
        raise UnreadableItem("ticket needs key and summary", key or "no key")
    if not TICKET_KEY.fullmatch(key):
        raise UnreadableItem("not a ticket key", repr(key))
    fields = [
        f"{label}: {', '.join(map(str, value)) if isinstance(value, list) else plain(value)}"
        for name, label in _FIELDS
        if (value := record.get(name))
    ]
    description = str(record.get("description") or "")
    body = f"{summary}\n\n{readable(description)}\n\n" + ". ".join(fields)
    raw_comments = [c for c in record.get("comments") or [] if isinstance(c, dict)]
    comments = [
        comment_text(c.get("author"), c.get("created"), readable(str(c.get("body", ""))))
        for c in raw_comments
    ]
    text = join_comments(body, comments)
    written = " ".join([description, *(str(c.get("body", "")) for c in raw_comments)])
    links = [*_declared_links(record.get("links"), ctx)]
    links += [Link(target=str(t), type=LinkType.LINKS_TO, by_name=True) for t in as_list(record.get("pages"))]
    links += name_links(written, own_key=key)
    rel = path.relative_to(ctx.root).as_posix()
    return SourceDoc(
        id=ctx.ticket_id(key),
        source=ctx.name,
        kind="ticket",
        title=f"{key}: {summary}",
        url=ctx.url(rel, anchor),
        text=text,
        updated_at=when(record.get("updated") or record.get("created"), path),
        version=str(plain(record.get("updated")) or ""),
        acl=ctx.acl(record.get("acl")),
        links=tuple(dict.fromkeys(links)),
        aliases=(key,),
        metadata={k: plain(record[k]) for k in ("status", "priority", "assignee", "type") if record.get(k)},
    )


def _declared_links(value: Any, ctx: FolderContext) -> list[Link]:
    if isinstance(value, dict):  # {blocks: [ENG-2], relates: ENG-3}
        value = [{"type": kind, "key": key} for kind, keys in value.items() for key in as_list(keys)]
    links: list[Link] = []
    for item in as_list(value):
        if isinstance(item, dict) and item.get("key"):
            kind = LINK_TYPES.get(str(item.get("type", "")).strip().lower(), LinkType.RELATES)
            links.append(Link(target=ctx.ticket_id(str(item["key"]).strip()), type=kind))
        elif isinstance(item, str):
            links += _link_from_text(item.strip(), ctx)
    return links


def _link_from_text(item: str, ctx: FolderContext) -> list[Link]:
    if TICKET_KEY.fullmatch(item):
        return [Link(target=ctx.ticket_id(item), type=LinkType.RELATES)]
    typed = _TYPED_KEY.match(item)
    if typed and typed["type"].lower() in LINK_TYPES:
        return [Link(target=ctx.ticket_id(typed["key"]), type=LINK_TYPES[typed["type"].lower()])]
    titles = WIKI_LINK.findall(item)
    if titles:
        return [Link(target=t.strip(), type=LinkType.LINKS_TO, by_name=True) for t in titles]
    return name_links(item)
