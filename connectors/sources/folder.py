"""A local folder as a source: markdown pages with YAML front matter, and tickets as JSON files.

Layout (see examples/acme/README.md): pages match `pages_glob` (default `wiki/**/*.md`), tickets match
`tickets_glob` (default `tickets/**/*.json`, one ticket per file or a JSON list of tickets), and an optional
`people.json` maps accounts to groups for `principals()`. The cursor remembers each file's (mtime, size), so an
unchanged folder is not even re-read; sync then compares content hashes, so unchanged documents are never
re-embedded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import BaseModel, Field

from connectors.base import (
    PUBLIC,
    Checkpoint,
    Cursor,
    Deleted,
    Failure,
    Link,
    LinkedIdentity,
    LinkType,
    Pulled,
    SourceDoc,
    group_principal,
    user_principal,
)
from connectors.text import TICKET_KEY, comment_text, join_comments

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)
_MD_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_WIKI_LINK = re.compile(r"\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]")
_TICKET_LINK_TYPES = {
    "blocks": LinkType.BLOCKS,
    "is blocked by": LinkType.BLOCKS,
    "relates": LinkType.RELATES,
    "relates to": LinkType.RELATES,
    "duplicates": LinkType.DUPLICATES,
    "is duplicated by": LinkType.DUPLICATES,
    "clones": LinkType.CLONES,
    "parent": LinkType.PARENT,
}
CHECKPOINT_EVERY = 200
PARSER_VERSION = 2  # bump when parsing changes: stored file stamps then no longer short-cut a re-read


class FolderConfig(BaseModel):
    path: Path
    pages_glob: str = "wiki/**/*.md"
    tickets_glob: str = "tickets/**/*.json"
    people_file: str = "people.json"
    url_base: str | None = Field(default=None, description="Public URL prefix for links; default file://")
    default_acl: list[str] = Field(default_factory=lambda: [PUBLIC], description="ACL when none is declared")


class UnreadableItem(ValueError):
    """A file that cannot become a document; reported as a Failure."""


class FolderConnector:
    kind: ClassVar[str] = "folder"
    auth_kind: ClassVar[str] = "none"
    config_model: ClassVar[type[BaseModel]] = FolderConfig

    def __init__(self, config: FolderConfig, *, name: str, **_: Any) -> None:
        self.config = config
        self.name = name
        self.root = config.path.resolve()

    # ------------------------------------------------------------------ protocol
    def pull(self, cursor: Cursor | None) -> Pulled:
        cursor = cursor or {}
        seen: dict[str, list[int]] = (
            dict(cursor.get("files", {})) if cursor.get("parser") == PARSER_VERSION else {}
        )
        current: dict[str, list[int]] = {}
        done = 0
        for path in self._files():
            rel = path.relative_to(self.root).as_posix()
            stat = path.stat()
            stamp = [stat.st_mtime_ns, stat.st_size]
            current[rel] = stamp
            if seen.get(rel) == stamp:
                continue
            try:
                yield from self._read(path, rel)
            except (UnreadableItem, OSError) as exc:
                yield Failure(id=f"{self.name}:{rel}", reason=str(exc))
                current.pop(rel)  # retried next run
            done += 1
            if done % CHECKPOINT_EVERY == 0:
                yield Checkpoint(cursor={"parser": PARSER_VERSION, "files": {**seen, **current}})
        for rel in sorted(set(cursor.get("files", {})) - set(self._all_relpaths())):
            for doc_id in _ids_for_path(self.name, rel, self.root):
                yield Deleted(id=doc_id)
        return {"parser": PARSER_VERSION, "files": current}

    def list_ids(self) -> Iterable[str]:
        ids: list[str] = []
        for path in self._files():
            rel = path.relative_to(self.root).as_posix()
            if path.suffix == ".md":
                ids.append(self._page_id(rel))
            else:
                try:
                    ids.extend(f"{self.name}:{t['key']}" for t in _ticket_records(path))
                except (UnreadableItem, OSError, KeyError, TypeError):
                    ids.extend(f"{self.name}:{key}" for key in _keys_from_name(path))
        return ids

    def principals(self, identity: LinkedIdentity) -> set[str]:
        account = identity.account.strip().lower()
        found = {PUBLIC, user_principal(account)}
        for person in self._people():
            if str(person.get("email", "")).lower() == account:
                found.update(group_principal(self.name, g) for g in person.get("groups", []))
        found.update(group_principal(self.name, g) for g in identity.groups)
        return found

    def people(self) -> list[str]:
        """The accounts of the folder's directory (people.json)."""
        return [str(p["email"]).lower() for p in self._people() if p.get("email")]

    # ------------------------------------------------------------------ reading
    def _files(self) -> Iterator[Path]:
        seen: set[Path] = set()
        for pattern in (self.config.pages_glob, self.config.tickets_glob):
            folder = pattern.split("/", 1)[0] if "/" in pattern else ""
            for path in sorted((self.root / folder).rglob("*") if folder else self.root.glob(pattern)):
                if path.is_file() and not path.name.startswith(".") and path not in seen:
                    seen.add(path)
                    yield path

    def _all_relpaths(self) -> list[str]:
        return [p.relative_to(self.root).as_posix() for p in self._files()]

    def _read(self, path: Path, rel: str) -> Iterator[SourceDoc]:
        if path.match(self.config.pages_glob) or (path.suffix == ".md" and rel.startswith("wiki/")):
            yield self._page(path, rel)
        elif path.suffix == ".json":
            for record in _ticket_records(path):
                yield self._ticket(record, path)
        else:
            raise UnreadableItem(f"unsupported file type {path.suffix or '(none)'}")

    def _page_id(self, rel: str) -> str:
        return f"{self.name}:{rel.removesuffix('.md')}"

    def _url(self, rel: str) -> str:
        if self.config.url_base:
            return self.config.url_base.rstrip("/") + "/" + rel
        return (self.root / rel).as_uri()

    def _page(self, path: Path, rel: str) -> SourceDoc:
        raw = _text(path)
        match = _FRONT_MATTER.match(raw)
        if not match:
            raise UnreadableItem("missing front matter (--- title: ... ---)")
        try:
            front = yaml.safe_load(match.group(1)) or {}
        except yaml.YAMLError as exc:
            raise UnreadableItem(f"bad front matter: {exc.__class__.__name__}") from exc
        if not isinstance(front, dict) or not front.get("title"):
            raise UnreadableItem("front matter needs a title")
        body = raw[match.end() :].strip()
        links: list[Link] = []
        for target in _MD_LINK.findall(body):
            resolved = _resolve_md_link(self.root, path, target)
            if resolved:
                links.append(Link(target=self._page_id(resolved), type=LinkType.LINKS_TO))
        links += [
            Link(target=t.strip(), type=LinkType.LINKS_TO, by_name=True) for t in _WIKI_LINK.findall(body)
        ]
        links += [
            Link(target=k, type=LinkType.MENTIONS, by_name=True)
            for k in sorted(set(TICKET_KEY.findall(body)))
        ]
        for old in _as_list(front.get("supersedes")):
            links.append(Link(target=old, type=LinkType.SUPERSEDES, by_name=True))
        return SourceDoc(
            id=self._page_id(rel),
            source=self.name,
            kind="page",
            title=str(front["title"]).strip(),
            url=self._url(rel),
            text=_readable(body),
            updated_at=_when(front.get("updated"), path),
            version=str(front.get("version", "")),
            acl=frozenset(_acl(front.get("acl"), self.config.default_acl)),
            links=tuple(dict.fromkeys(links)),
            aliases=tuple(str(a) for a in _as_list(front.get("aliases"))),
            metadata={k: _plain(v) for k, v in front.items() if k in {"space", "status", "owner", "labels"}},
        )

    def _ticket(self, record: dict[str, Any], path: Path) -> SourceDoc:
        try:
            key = str(record["key"]).strip()
            summary = str(record["summary"]).strip()
        except (KeyError, TypeError) as exc:
            raise UnreadableItem(f"ticket needs key and summary ({exc!r})") from exc
        if not TICKET_KEY.fullmatch(key):
            raise UnreadableItem(f"not a ticket key: {key!r}")
        fields = [
            f"{label}: {_plain(record[name]) if not isinstance(record[name], list) else ', '.join(record[name])}"
            for name, label in (
                ("type", "Type"),
                ("status", "Status"),
                ("priority", "Priority"),
                ("assignee", "Assignee"),
                ("reporter", "Reporter"),
                ("components", "Components"),
                ("labels", "Labels"),
            )
            if record.get(name)
        ]
        body = f"{summary}\n\n{record.get('description') or ''}\n\n" + ". ".join(fields)
        comments = [
            comment_text(c.get("author"), c.get("created"), str(c.get("body", "")))
            for c in record.get("comments") or []
            if isinstance(c, dict)
        ]
        text = join_comments(body, comments)
        links: list[Link] = []
        for link in record.get("links") or []:
            kind = _TICKET_LINK_TYPES.get(str(link.get("type", "")).lower(), LinkType.RELATES)
            links.append(Link(target=f"{self.name}:{link['key']}", type=kind))
        links += [
            Link(target=str(t), type=LinkType.LINKS_TO, by_name=True) for t in record.get("pages") or []
        ]
        links += [
            Link(target=k, type=LinkType.MENTIONS, by_name=True)
            for k in sorted(set(TICKET_KEY.findall(text)) - {key})
        ]
        rel = path.relative_to(self.root).as_posix()
        return SourceDoc(
            id=f"{self.name}:{key}",
            source=self.name,
            kind="ticket",
            title=f"{key}: {summary}",
            url=self._url(rel),
            text=text,
            updated_at=_when(record.get("updated") or record.get("created"), path),
            version=str(record.get("updated", "")),
            acl=frozenset(_acl(record.get("acl"), self.config.default_acl)),
            links=tuple(dict.fromkeys(links)),
            aliases=(key,),
            metadata={
                k: _plain(record[k]) for k in ("status", "priority", "assignee", "type") if record.get(k)
            },
        )

    def _people(self) -> list[dict[str, Any]]:
        path = self.root / self.config.people_file
        if not path.is_file():
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
        return list(data.get("users", [])) if isinstance(data, dict) else []


_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")


def _readable(body: str) -> str:
    """Markdown as a reader sees it: link and wikilink text without targets, no bold markers. Links were
    already taken out as typed edges; quoting "[Checklist](ios-release-checklist.md)" helps nobody."""
    body = _WIKI_LINK.sub(lambda m: m.group(1), body)
    body = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", body)
    body = re.sub(r"\[([^\]]+)\]\([^)\s]+\)", r"\1", body)
    return _EMPHASIS.sub(r"\2", body)


def _text(path: Path) -> str:
    data = path.read_bytes()
    if not data.strip():
        raise UnreadableItem("empty file")
    if b"\x00" in data[:4096]:
        raise UnreadableItem("binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableItem("not UTF-8 text") from exc


def _ticket_records(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise UnreadableItem(f"bad JSON at line {exc.lineno}") from exc
    records = data if isinstance(data, list) else [data]
    if not all(isinstance(r, dict) for r in records):
        raise UnreadableItem("a ticket file holds an object or a list of objects")
    return records


def _keys_from_name(path: Path) -> list[str]:
    return TICKET_KEY.findall(path.stem)


def _ids_for_path(source: str, rel: str, root: Path) -> list[str]:
    if rel.endswith(".md"):
        return [f"{source}:{rel.removesuffix('.md')}"]
    return [f"{source}:{key}" for key in TICKET_KEY.findall(Path(rel).stem)]


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


def _acl(value: Any, default: list[str]) -> set[str]:
    items = _as_list(value) if value is not None else default
    return {str(item).strip() for item in items if str(item).strip()}


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _when(value: Any, path: Path) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise UnreadableItem(f"bad date {value!r}") from exc
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)


def _plain(value: Any) -> Any:
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
