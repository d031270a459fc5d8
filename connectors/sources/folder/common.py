"""What every reader of a folder shares: where a file's documents get their ids, URLs and ACLs, how text and
dates are read, and the links found in any text (`[[wikilinks]]` and ticket keys)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from connectors.base import PUBLIC, Link, LinkType, SourceDoc, group_principal, user_principal
from connectors.sources.access import Mapped
from connectors.text import TICKET_KEY

EMAIL = re.compile(r"[^@\s:]+@[^@\s:]+")

WIKI_LINK = re.compile(r"\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_DATE_FORMATS = (
    "%d/%b/%y %I:%M %p",  # Jira Cloud CSV: 14/Jul/25 3:42 PM
    "%d/%b/%Y %I:%M %p",
    "%d/%b/%y %H:%M",
    "%d/%b/%y",
    "%m/%d/%Y %H:%M",  # Jira "Excel CSV": 6/21/2025 16:14
    "%m/%d/%Y",
    "%b %d, %Y",  # Confluence page metadata: Mar 21, 2024
    "%d %b %Y",
)


class UnreadableItem(ValueError):
    """A file (or a row of one) that cannot become a document; reported as a Failure.

    `reason` is stable (it is what failures are counted by), `detail` says where exactly."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason} ({detail})" if detail else reason)
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class FolderContext:
    """Naming rules of one folder source: ids, URLs and ACLs of the documents read from it."""

    name: str
    root: Path
    url_base: str | None
    default_acl: tuple[str, ...]
    # entries of the ACLs read since the connector last took them that map to no principal (`take_unmapped`)
    unmapped: list[str] = field(default_factory=list, compare=False)

    def page_id(self, rel: str) -> str:
        return f"{self.name}:{Path(rel).with_suffix('').as_posix()}"

    def ticket_id(self, key: str) -> str:
        return f"{self.name}:{key}"

    def url(self, rel: str, anchor: str = "") -> str:
        base = self.url_base.rstrip("/") + "/" + rel if self.url_base else (self.root / rel).as_uri()
        return f"{base}#{anchor}" if anchor else base

    def page(self, rel: str, **fields: Any) -> SourceDoc:
        """A page read from the file at `rel` (markdown or an exported HTML page): its id and URL say where."""
        return SourceDoc(id=self.page_id(rel), source=self.name, kind="page", url=self.url(rel), **fields)

    def acl(self, value: Any) -> frozenset[str]:
        """A document's declared ACL (or the default) as principals of this source (see `acl_principal`);
        nobody when an entry maps to no principal, which the connector then reports for the document."""
        items = as_list(value) if value is not None else list(self.default_acl)
        mapped = Mapped()
        for item in items:
            mapped |= acl_principal(str(item), self.name)
        self.unmapped.extend(mapped.unmapped)
        return mapped.restricted

    def take_unmapped(self) -> str:
        """The unmapped entries of the ACLs read since the last call, as a failure's detail ('' if none)."""
        found, self.unmapped[:] = Mapped(unmapped=tuple(self.unmapped)), []
        return found.detail()


def acl_principal(entry: str, source: str) -> Mapped:
    """`public`, `user:<email>` and `group:<name>` as a reader writes them, as principals of `source`.

    `group:<name>` names a group of the people file, which this source grants as `group:<source>:<name>`;
    the already namespaced `group:<source>:<name>` is accepted as it is. Anything else (`team:x`, `user:ann`
    without an email, an empty entry) maps to no principal and is returned as unmapped."""
    entry = entry.strip()
    kind, _, rest = entry.partition(":")
    kind, rest = kind.lower(), rest.strip()
    if entry.lower() == PUBLIC:
        return Mapped(frozenset({PUBLIC}))
    if kind == "user" and EMAIL.fullmatch(rest):
        return Mapped(frozenset({user_principal(rest)}))
    if kind == "group" and rest:
        prefix = f"{source.lower()}:"
        name = rest[len(prefix) :] if rest.lower().startswith(prefix) else rest
        if name.strip():
            return Mapped(frozenset({group_principal(source, name)}))
    return Mapped(unmapped=(f"ACL entry {entry!r}",))


def name_links(text: str, *, own_key: str | None = None) -> list[Link]:
    """Links any text carries by name: `[[Title]]` wikilinks and ticket keys it mentions."""
    links = [Link(target=t.strip(), type=LinkType.LINKS_TO, by_name=True) for t in WIKI_LINK.findall(text)]
    links += [
        Link(target=k, type=LinkType.MENTIONS, by_name=True)
        for k in sorted(set(TICKET_KEY.findall(text)) - {own_key})
    ]
    return links


def readable(body: str) -> str:
    """Markdown as a reader sees it: link and wikilink text without targets, no bold markers. Links are
    taken out as typed edges; quoting "[Checklist](ios-release-checklist.md)" helps nobody."""
    body = WIKI_LINK.sub(lambda m: m.group(1), body)
    body = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", body)
    body = re.sub(r"\[([^\]]+)\]\([^)\s]+\)", r"\1", body)
    return _EMPHASIS.sub(r"\2", body)


def read_text(path: Path) -> str:
    data = path.read_bytes()
    if not data.strip():
        raise UnreadableItem("empty file")
    if b"\x00" in data[:4096]:
        raise UnreadableItem("binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableItem("not UTF-8 text") from exc


def parse_when(value: Any) -> datetime | None:
    """A date or time as exports write them (ISO, Jira's `14/Jul/25 3:42 PM`, Confluence's `Mar 21, 2024`);
    None when empty; UnreadableItem when it is no date."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    text = str(value or "").strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        for fmt in _DATE_FORMATS:
            try:
                parsed = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
        else:
            raise UnreadableItem("bad date", repr(text)) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def when(value: Any, path: Path) -> datetime:
    """A document's date, or its file's modification time when it declares none."""
    return parse_when(value) or datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def plain(value: Any) -> Any:
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
