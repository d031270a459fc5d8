"""Markdown files with YAML front matter: pages (`title:`) and tickets (`key:`).

A ticket's body is its description, up to a `## Comments` section; that section holds one comment per
`### <date> — <author>` heading, per list item (`- 2026-03-02 ann@team.io: text`) or per paragraph
(`**Ann** (2026-03-02): text`). Each comment keeps its own author and date and becomes its own chunk.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from connectors.base import Link, LinkType, SourceDoc
from connectors.sources.folder.common import (
    FolderContext,
    UnreadableItem,
    as_list,
    name_links,
    plain,
    readable,
    when,
)
from connectors.sources.folder.tickets import ticket_doc

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)
_MD_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
_COMMENTS = re.compile(r"^comments?\s*:?$", re.IGNORECASE)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_ITEM = re.compile(r"^[-*+]\s+", re.MULTILINE)
_SEPARATORS = re.compile(r"^[\s\-—–|,:()\[\]]+|[\s\-—–|,:()\[\]]+$")
PAGE_KEYS = {"space", "status", "owner", "labels"}


def front_matter(raw: str) -> tuple[dict[str, Any] | None, str]:
    """(front matter, body); front matter None when the file has none. Bad YAML is an UnreadableItem."""
    match = _FRONT_MATTER.match(raw)
    if not match:
        return None, raw
    try:
        front = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise UnreadableItem("bad front matter", exc.__class__.__name__) from exc
    if not isinstance(front, dict):
        raise UnreadableItem("bad front matter", "not a mapping")
    return front, raw[match.end() :].strip()


def is_ticket(front: dict[str, Any]) -> bool:
    return bool(front.get("key"))


def page_doc(front: dict[str, Any], body: str, ctx: FolderContext, path: Path) -> SourceDoc:
    rel = path.relative_to(ctx.root).as_posix()
    heading = _H1.search(body)
    title = str(front.get("title") or (heading.group(1) if heading else "")).strip()
    if not title:
        raise UnreadableItem("page needs a title", "front matter `title:` or a `# Heading`")
    links: list[Link] = []
    for target in _MD_LINK.findall(body):
        resolved = _resolve_md_link(ctx.root, path, target)
        if resolved:
            links.append(Link(target=ctx.page_id(resolved), type=LinkType.LINKS_TO))
    links += name_links(body)
    links += [
        Link(target=old, type=LinkType.SUPERSEDES, by_name=True) for old in as_list(front.get("supersedes"))
    ]
    return ctx.page(
        rel,
        title=title,
        text=readable(body),
        updated_at=when(front.get("updated"), path),
        version=str(front.get("version", "")),
        acl=ctx.acl(front.get("acl")),
        links=tuple(dict.fromkeys(links)),
        aliases=tuple(str(a) for a in as_list(front.get("aliases"))),
        metadata={k: plain(v) for k, v in front.items() if k in PAGE_KEYS},
    )


def markdown_ticket_doc(front: dict[str, Any], body: str, ctx: FolderContext, path: Path) -> SourceDoc:
    description, comments = split_comments(body)
    heading = _H1.search(description)
    key = str(front["key"]).strip()
    summary = front.get("summary") or front.get("title")
    if not summary and heading:
        summary = re.sub(rf"^{re.escape(key)}\s*[:\-—]\s*", "", heading.group(1))
        description = description[: heading.start()] + description[heading.end() :]
    record = {**front, "key": key, "summary": summary, "description": description.strip()}
    record["comments"] = [*(c for c in as_list(front.get("comments")) if isinstance(c, dict)), *comments]
    return ticket_doc(record, ctx, path)


def split_comments(body: str) -> tuple[str, list[dict[str, str]]]:
    """(description, comments) of a ticket body; no `## Comments` section means no comments."""
    headings = list(_HEADING.finditer(body))
    for i, heading in enumerate(headings):
        if not _COMMENTS.match(heading.group(2).strip()):
            continue
        level = len(heading.group(1))
        end = next((h.start() for h in headings[i + 1 :] if len(h.group(1)) <= level), len(body))
        section = body[heading.end() : end]
        rest = body[: heading.start()] + body[end:]
        return rest.strip(), [c for c in _comments(section, level) if c["body"]]
    return body, []


def _comments(section: str, level: int) -> list[dict[str, str]]:
    sub = [h for h in _HEADING.finditer(section) if len(h.group(1)) > level]
    if sub:
        bounds = [*(h.start() for h in sub[1:]), len(section)]
        return [_comment(h.group(2), section[h.end() : end]) for h, end in zip(sub, bounds, strict=True)]
    if _ITEM.search(section):
        items = [i for i in _ITEM.split(section.strip()) if i.strip()]
        return [_comment(*_head_and_body(re.sub(r"\n\s+", "\n", i))) for i in items]
    return [_comment(*_head_and_body(p)) for p in re.split(r"\n\s*\n", section.strip()) if p.strip()]


def _head_and_body(text: str) -> tuple[str, str]:
    """`<date> <author>: body` or `**Author** (date): body` -> (header, body); no header when none fits."""
    first, _, more = text.partition("\n")
    head, sep, tail = first.partition(": ")
    if sep and (_DATE.search(head) or _EMAIL.search(head) or _BOLD.search(head)):
        return head, f"{tail}\n{more}".strip()
    return "", text


def _comment(header: str, body: str) -> dict[str, str]:
    date = _DATE.search(header)
    rest = header.replace(date.group(0), " ") if date else header
    email, bold = _EMAIL.search(rest), _BOLD.search(rest)
    if email:
        author = email.group(0)
    elif bold:
        author = bold.group(1) or bold.group(2)
    else:
        author = re.sub(r"\b(by|on|at)\b", " ", rest, flags=re.IGNORECASE)
        author = _SEPARATORS.sub("", re.sub(r"\s+", " ", author)).strip()
    return {"author": author, "created": date.group(0) if date else "", "body": body.strip()}


def _resolve_md_link(root: Path, page: Path, target: str) -> str | None:
    if "://" in target or target.startswith(("#", "mailto:")):
        return None
    clean = target.split("#", 1)[0]
    if not clean.endswith(".md"):
        return None
    resolved = (page.parent / clean).resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return None
