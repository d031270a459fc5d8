"""A local folder as a source: a team's pages and tickets as they are on disk, and what tools export.

Every file under the folder is looked at (hidden ones and the people file aside) and read by what it is:
- markdown with YAML front matter: a ticket when it has `key:`, a page otherwise (markdown.py);
- JSON in the tickets folder: one ticket or a list of them (tickets.py);
- a Jira CSV export, and the pages of a Confluence HTML space export (exports.py).
Anything else is skipped, and the run's summary says so in one line. A file that was meant to be a document
but cannot be read (bad front matter, bad JSON, a markdown file in the pages or tickets folder without front
matter) is a Failure. The cursor remembers each file's (mtime, size), so an unchanged file is not re-read;
sync then compares content hashes, so unchanged documents are never re-embedded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator

from connectors.base import (
    PUBLIC,
    Checkpoint,
    Cursor,
    Deleted,
    Failure,
    LinkedIdentity,
    Pulled,
    Skipped,
    SourceDoc,
    group_principal,
)
from connectors.sources.access import UNMAPPED
from connectors.sources.folder import exports, markdown
from connectors.sources.folder.common import FolderContext, UnreadableItem, read_text
from connectors.sources.folder.people import (
    Person,
    known_principals,
    people_or_none,
    person_principals,
    read_people,
)
from connectors.sources.folder.tickets import ticket_doc, ticket_records
from connectors.text import TICKET_KEY

CHECKPOINT_EVERY = 200
PARSER_VERSION = 3  # bump when parsing changes: stored file stamps then no longer short-cut a re-read
MARKDOWN = {".md", ".markdown"}


class FolderConfig(BaseModel):
    path: Path
    pages_glob: str = "wiki/**/*.md"
    tickets_glob: str = "tickets/**/*.json"
    people_file: str = "people.json"
    url_base: str | None = Field(default=None, description="Public URL prefix for links; default file://")
    default_acl: list[str] = Field(default_factory=lambda: [PUBLIC], description="ACL when none is declared")

    @field_validator("default_acl", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """`--set default_acl=group:eng,user:ann@team.io` arrives as one string."""
        return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value


class FolderConnector:
    kind: ClassVar[str] = "folder"
    auth_kind: ClassVar[str] = "none"
    config_model: ClassVar[type[BaseModel]] = FolderConfig

    def __init__(self, config: FolderConfig, *, name: str, **_: Any) -> None:
        self.config = config
        self.name = name
        self.root = config.path.resolve()
        self.ctx = FolderContext(name, self.root, config.url_base, tuple(config.default_acl))
        self._expected = {p.split("/", 1)[0] for p in (config.pages_glob, config.tickets_glob) if "/" in p}
        self._pulled: dict[str, tuple[list[int], list[str]]] = {}  # rel -> (stamp, ids), from the last pull

    # ------------------------------------------------------------------ protocol
    def pull(self, cursor: Cursor | None) -> Pulled:
        cursor = cursor or {}
        same_parser = cursor.get("parser") == PARSER_VERSION
        seen: dict[str, list[int]] = dict(cursor.get("files", {})) if same_parser else {}
        seen_ids: dict[str, list[str]] = dict(cursor.get("ids", {})) if same_parser else {}
        current: dict[str, list[int]] = {}
        ids: dict[str, list[str]] = {}  # the documents each stamped file holds: pruning needs no re-read
        done = 0
        try:
            read_people(self._people_path())
        except UnreadableItem as exc:
            yield Failure(id=f"{self.name}:{self.config.people_file}", reason=exc.reason, detail=exc.detail)
        exports_at = self._export_roots()
        for path in self._files():
            rel = path.relative_to(self.root).as_posix()
            stat = path.stat()
            stamp = [stat.st_mtime_ns, stat.st_size]
            if seen.get(rel) == stamp:
                current[rel] = stamp
                ids[rel] = seen_ids[rel] if rel in seen_ids else self._ids_or_named(path, rel, exports_at)
                continue
            failed = False
            held: list[str] = []
            for item in self._read(path, rel, exports_at):
                failed |= not isinstance(item, SourceDoc)
                if isinstance(item, SourceDoc):
                    held.append(item.id)
                yield item
            if not failed:
                current[rel] = stamp  # a skipped or failed file is looked at again next run
                ids[rel] = held
            done += 1
            if done % CHECKPOINT_EVERY == 0:
                yield Checkpoint(
                    cursor={
                        "parser": PARSER_VERSION,
                        "files": {**seen, **current},
                        "ids": {**seen_ids, **ids},
                    }
                )
        alive = set(self._relpaths())
        for rel in sorted(set(cursor.get("files", {})) - alive):
            for doc_id in self._ids_for_gone(rel):
                yield Deleted(id=doc_id)
        self._pulled = {rel: (current[rel], ids[rel]) for rel in current}
        return {"parser": PARSER_VERSION, "files": current, "ids": ids}

    def list_ids(self) -> Iterable[str]:
        """Every document id the folder holds now. A file this connector's last pull stamped, and that still
        has that stamp, answers from the pull's record; only the others are read (an unchanged re-sync of a
        large folder used to parse every file here)."""
        found: list[str] = []
        exports_at = self._export_roots()
        for path in self._files():
            rel = path.relative_to(self.root).as_posix()
            stat = path.stat()
            pulled = self._pulled.get(rel)
            if pulled is not None and pulled[0] == [stat.st_mtime_ns, stat.st_size]:
                found.extend(pulled[1])
                continue
            found.extend(self._ids_or_named(path, rel, exports_at))
        return found

    def _ids_or_named(self, path: Path, rel: str, exports_at: set[Path]) -> list[str]:
        try:
            return self._ids(path, rel, exports_at)
        except (UnreadableItem, OSError):
            return self._ids_for_gone(rel)  # a broken edit does not delete what was read before

    def _ids(self, path: Path, rel: str, exports_at: set[Path]) -> list[str]:
        """The ids a file holds, without building its documents (pruning asks for every file, every run)."""
        suffix = path.suffix.lower()
        export = _export_of(path, exports_at)
        if export is not None:
            return [] if _is_export_asset(path, export) else [self.ctx.page_id(rel)]
        if suffix in MARKDOWN:
            front, _ = markdown.front_matter(read_text(path))
            if front is None:
                return []
            return [
                self.ctx.ticket_id(str(front["key"]).strip())
                if markdown.is_ticket(front)
                else self.ctx.page_id(rel)
            ]
        if suffix == ".csv" or (suffix == ".json" and self._expected_here(rel)):
            items = list(self._read(path, rel, exports_at))
            if any(isinstance(i, Failure) for i in items):
                raise UnreadableItem("unreadable")  # keep what the file held before
            return [i.id for i in items if isinstance(i, SourceDoc)]
        if suffix == ".html" and exports.is_confluence_page(read_text(path)):
            return [self.ctx.page_id(rel)]
        return []

    def principals(self, identity: LinkedIdentity) -> set[str]:
        """The people file's entry for the identity's verified email. For the directory (no token) that is
        its account; for an identity linked through OAuth it is the email the provider verified, never the
        provider's `sub` (an id that may look like anyone's email): without one, only what all may see."""
        email = identity.email if identity.access_token is not None else identity.account
        found = person_principals(self._people(), self.name, email) if email else {PUBLIC}
        found.update(group_principal(self.name, g) for g in identity.groups)
        return found

    def people(self) -> list[str]:
        """The accounts of the folder's people file."""
        return [p.email for p in self._people()]

    def directory(self) -> list[Person]:
        return self._people()

    def known_principals(self) -> set[str]:
        """Every principal someone in the people file holds here (an ACL entry outside it matches nobody)."""
        return known_principals(self._people(), self.name)

    # ------------------------------------------------------------------ reading
    def _people_path(self) -> Path:
        return self.root / self.config.people_file

    def _people(self) -> list[Person]:
        return people_or_none(self._people_path())

    def _files(self) -> Iterator[Path]:
        people = self._people_path()
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if path.is_file() and path != people and not any(p.startswith(".") for p in rel.parts):
                yield path

    def _relpaths(self) -> list[str]:
        return [p.relative_to(self.root).as_posix() for p in self._files()]

    def _export_roots(self) -> set[Path]:
        return {p.parent for p in self.root.rglob("index.html") if exports.is_confluence_export(p.parent)}

    def _expected_here(self, rel: str) -> bool:
        """In the pages or tickets folder: a file there that cannot be read is a failure, not a skip."""
        return rel.split("/", 1)[0] in self._expected

    def _read(self, path: Path, rel: str, exports_at: set[Path]) -> Iterator[SourceDoc | Failure | Skipped]:
        """The file's documents; after one whose ACL names an entry that maps to no principal (it is then
        visible to no one), a failure saying which."""
        self.ctx.take_unmapped()
        try:
            for item in self._documents(path, rel, exports_at):
                yield item
                unmapped = self.ctx.take_unmapped()
                if unmapped and isinstance(item, SourceDoc):
                    yield Failure(id=item.id, reason=UNMAPPED, detail=unmapped)
        except UnreadableItem as exc:
            yield Failure(id=f"{self.name}:{rel}", reason=exc.reason, detail=exc.detail)
        except OSError as exc:
            yield Failure(id=f"{self.name}:{rel}", reason="unreadable file", detail=exc.__class__.__name__)

    def _documents(
        self, path: Path, rel: str, exports_at: set[Path]
    ) -> Iterator[SourceDoc | Failure | Skipped]:
        suffix = path.suffix.lower()
        export = _export_of(path, exports_at)
        if export is not None:
            if _is_export_asset(path, export):
                yield Skipped(id=f"{self.name}:{rel}", reason="Confluence export files (index, attachments)")
                return
            yield exports.confluence_page_doc(read_text(path), self.ctx, path)
        elif suffix in MARKDOWN:
            yield from self._markdown(path, rel)
        elif suffix == ".json" and self._expected_here(rel):
            for record in ticket_records(path):
                yield ticket_doc(record, self.ctx, path)
        elif suffix == ".csv" and exports.is_jira_csv(path):
            for number, record in exports.jira_csv_records(path):
                try:
                    if isinstance(record, UnreadableItem):
                        raise record
                    yield ticket_doc(record, self.ctx, path, anchor=str(record.get("key")))
                except UnreadableItem as exc:
                    yield Failure(id=f"{self.name}:{rel}#row{number}", reason=exc.reason, detail=exc.detail)
        elif suffix == ".html" and exports.is_confluence_page(raw := read_text(path)):
            yield exports.confluence_page_doc(raw, self.ctx, path)
        else:
            yield Skipped(id=f"{self.name}:{rel}", reason=_skip_reason(suffix))

    def _markdown(self, path: Path, rel: str) -> Iterator[SourceDoc | Skipped]:
        front, body = markdown.front_matter(read_text(path))
        if front is None:
            if self._expected_here(rel):
                raise UnreadableItem("missing front matter", "--- title: ... --- or --- key: ... ---")
            yield Skipped(id=f"{self.name}:{rel}", reason="markdown without front matter")
        elif markdown.is_ticket(front):
            yield markdown.markdown_ticket_doc(front, body, self.ctx, path)
        else:
            yield markdown.page_doc(front, body, self.ctx, path)

    def _ids_for_gone(self, rel: str) -> list[str]:
        """Ids a deleted file held, as far as its name tells; pruning against list_ids catches the rest."""
        if Path(rel).suffix.lower() in MARKDOWN | {".html"}:
            return [
                self.ctx.page_id(rel),
                *(self.ctx.ticket_id(k) for k in TICKET_KEY.findall(Path(rel).stem)),
            ]
        return [self.ctx.ticket_id(key) for key in TICKET_KEY.findall(Path(rel).stem)]


def _export_of(path: Path, exports_at: set[Path]) -> Path | None:
    """The Confluence export folder a file lies in, if any."""
    return next((root for root in exports_at if root in path.parents), None)


def _is_export_asset(path: Path, export: Path) -> bool:
    """index.html, attachments/, images/, styles/: parts of an export that are not pages."""
    return (
        path.suffix.lower() != ".html"
        or path.name == "index.html"
        or path.relative_to(export).parts[0] in exports.EXPORT_ASSET_DIRS
    )


def _skip_reason(suffix: str) -> str:
    return {
        ".csv": "CSV that is not a Jira export",
        ".html": "HTML that is not a Confluence page",
        ".json": "JSON outside the tickets folder",
    }.get(suffix, f"not a document type ({suffix or 'no extension'})")
