"""Core types every source speaks: documents, links, deletions, failures, principals, the Connector protocol.

Data flows one way: a `Connector` yields `SourceDoc | Deleted | Failure` from `pull()`, `connectors.sync` writes
them to the knowledge store, and the flows read the store. Nothing here does I/O.

Principals are prefixed strings: `public`, `user:<verified email>`, `user:<source>:<account id>`,
`group:<source>:<name>`, where `<source>` is the source's configured name.
A document's `acl` is the set of principals any one of which may read it; an empty ACL means nobody.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Generator, Iterable, Iterator
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

PUBLIC = "public"
JSON = Any  # a value made only of dict/list/str/int/float/bool/None


def user_principal(account: str) -> str:
    return f"user:{account.strip().lower()}"


def account_principal(source: str, account: str) -> str:
    """A source's own account id, in that source's namespace: `user:<source>:<id>`. Only `user_principal` of
    a verified email is shared between sources."""
    return f"user:{source}:{account.strip().lower()}"


def group_principal(source: str, name: str) -> str:
    return f"group:{source}:{name.strip().lower()}"


def person_principals(source: str, account: object, email: object) -> set[str]:
    """A person as a source's payload names them: their account there, and the email when it shows one (which
    counts only where it is the asker's verified email; the resolver checks). Missing parts add nothing."""
    found = {account_principal(source, str(account))} if account else set()
    if email:
        found.add(user_principal(str(email)))
    return found


class LinkType(StrEnum):
    """Typed edges between documents (and from documents to named entities)."""

    LINKS_TO = "links_to"  # a hyperlink or [[wikilink]]
    MENTIONS = "mentions"  # a ticket key or a known name in the text
    PARENT = "parent"  # page hierarchy, epic -> story
    BLOCKS = "blocks"
    RELATES = "relates"
    DUPLICATES = "duplicates"
    CLONES = "clones"
    SUPERSEDES = "supersedes"  # a newer policy replacing an older one


class Link(BaseModel):
    """A typed reference from one document to another.

    `target` is either a document id (`"{source}:{native id}"`) or a name (a title, a ticket key, an alias)
    that the store resolves through its alias table; `by_name` tells which.
    """

    model_config = ConfigDict(frozen=True)

    target: str
    type: LinkType
    by_name: bool = False


class SourceDoc(BaseModel):
    """One document as a source sees it. `id` is `"{source}:{native id}"`."""

    model_config = ConfigDict(frozen=True)

    id: str
    source: str
    kind: str  # page, ticket, comment, issue, pull_request, passage, ...
    title: str
    url: str = ""
    text: str
    updated_at: datetime
    version: str = ""
    acl: frozenset[str]
    links: tuple[Link, ...] = ()
    aliases: tuple[str, ...] = ()  # other names of the thing this document is about ("S-8", "Supplier 8")
    metadata: dict[str, JSON] = Field(default_factory=dict)

    @field_validator("updated_at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return value if value.tzinfo else value.replace(tzinfo=UTC)

    @field_validator("id")
    @classmethod
    def _prefixed(cls, value: str) -> str:
        if ":" not in value:
            raise ValueError("document ids are '{source}:{native id}'")
        return value

    def content_hash(self) -> str:
        """Hash of everything that, when changed, must be re-indexed (text, title, ACL, links, aliases)."""
        payload = {
            "title": self.title,
            "text": self.text,
            "url": self.url,
            "kind": self.kind,
            "version": self.version,
            "updated_at": self.updated_at.isoformat(),
            "acl": sorted(self.acl),
            "links": sorted((link.target, link.type.value, link.by_name) for link in self.links),
            "aliases": sorted(self.aliases),
            "metadata": self.metadata,
        }
        blob = json.dumps(payload, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()


class Deleted(BaseModel):
    """The source says this document is gone (or no longer visible to Sleuth)."""

    model_config = ConfigDict(frozen=True)
    id: str


class Failure(BaseModel):
    """One item could not be read; the run goes on and the failure is recorded. `reason` is what failures
    are counted by ("bad JSON"); `detail` says where exactly ("line 3")."""

    model_config = ConfigDict(frozen=True)
    id: str
    reason: str
    detail: str = ""


class Skipped(BaseModel):
    """A file or item that is not a document (an image, a CSV that is not an export): no failure, but the
    run's summary says how many were skipped and why, in one line."""

    model_config = ConfigDict(frozen=True)
    id: str
    reason: str


class CurrentAcl(BaseModel):
    """A document's ACL as the source says it is now (permission sync: no text, nothing re-embedded)."""

    model_config = ConfigDict(frozen=True)
    id: str
    acl: frozenset[str]


class LinkedIdentity(BaseModel):
    """What the bot knows about the asker on one source: the account it linked and, if OAuth, its token.

    The token never enters graph state or traces; connectors use it only to ask the source who the user is.
    """

    model_config = ConfigDict(frozen=True)
    source: str
    account: str  # the source's own account id (or, for sources that trust the directory, the email)
    email: str | None = None  # only an email the provider (or Slack) verified for this account
    access_token: str | None = Field(default=None, repr=False)
    groups: tuple[str, ...] = ()  # groups the provider already told us (e.g. from a userinfo endpoint)


Cursor = dict[str, JSON]


class Checkpoint(BaseModel):
    """A resumable point mid-run: every item yielded before it is complete. Sync stores `cursor` once the
    items before it are written, so a crash resumes from here instead of from the start of the run."""

    model_config = ConfigDict(frozen=True)
    cursor: dict[str, JSON]


Pulled = Generator[SourceDoc | Deleted | Failure | Skipped | Checkpoint, None, Cursor]


@runtime_checkable
class Connector(Protocol):
    """A source of documents. Third-party connectors register under the entry-point group `sleuth.connectors`.

    - `pull(cursor)` yields documents changed since `cursor`, deletions, failures, skipped items and
      (optionally) mid-run `Checkpoint`s, and *returns* the next cursor (a JSON dict). Sync saves it once the generator is exhausted.
    - `list_ids()` lists every id the source still holds and Sleuth may index (for pruning deletions).
    - `principals(identity)` resolves what a linked user may see in this source.
    - Optional, for sources with their own directory (a folder's people file): `people()` lists its accounts
      and `known_principals()` every principal someone holds, so sync can warn about ACL entries that match
      nobody.
    """

    kind: ClassVar[str]
    auth_kind: ClassVar[str]  # "none" | "api_token" | "oauth2"
    config_model: ClassVar[type[BaseModel]]
    name: str

    def pull(self, cursor: Cursor | None) -> Pulled: ...

    def list_ids(self) -> Iterable[str]: ...

    def principals(self, identity: LinkedIdentity) -> set[str]: ...


@runtime_checkable
class PermissionLister(Protocol):
    """Optional: a connector that can list every document's current ACL more cheaply than a content pull
    (issue listings without bodies or comments, page listings without bodies). Permission sync uses it to
    narrow or widen indexed documents when only their permissions changed at the source."""

    name: str

    def acls(self) -> Iterator[CurrentAcl | Failure]: ...


@runtime_checkable
class IndexedPermissionLister(Protocol):
    """Optional, instead of `PermissionLister`: a connector whose documents take their container's ACL (a Slack
    channel's threads) and that has no cheap listing of them. Permission sync hands it the ids indexed from it;
    it yields each one's current ACL (one members read per container, not a re-read of every document)."""

    name: str

    def acls_of(self, ids: Iterable[str]) -> Iterator[CurrentAcl | Failure]: ...


@runtime_checkable
class LiveAccess(Protocol):
    """Optional: a connector that can ask its source, with a linked user's own token, whether that user may
    open one document now (the live check before an answer is posted, `connectors.live_access`). Returns
    False when the source refuses or does not find it; raises `ConnectorError` (or `ValueError` for an id
    that is not its own) when it cannot tell."""

    name: str

    def can_open(self, doc_id: str, access_token: str, *, timeout_s: float) -> bool: ...


class ConnectorError(Exception):
    """Raised by a connector when a whole run cannot go on (auth, 403, retry budget spent).

    Tree: ConnectorError > AuthExpired, Forbidden, RateLimited, SourceUnavailable.
    """


class AuthExpired(ConnectorError):
    pass


class Forbidden(ConnectorError):
    pass


class RateLimited(ConnectorError):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SourceUnavailable(ConnectorError):
    pass


def now_utc() -> datetime:
    return datetime.now(UTC)
