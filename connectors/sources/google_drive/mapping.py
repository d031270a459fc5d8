"""Raw Drive JSON -> principals and `SourceDoc`. Pure: no I/O (group members arrive through a callback).

A Drive file is readable by the union of its permissions (and, in a shared drive, the drive's members): each
is a *grant*, so an entry Sleuth cannot map only narrows (`UNMAPPED_GRANT`). What each kind becomes:
- `user` -> `user:<email>` (the Google account's address, which counts for the Slack user Slack verified it
  for) and `user:<source>:<email>` (the same account, for an asker who linked it);
- `group` -> `group:<source>:<group email>` plus every member the Directory API lists (as users), so members
  see the file without linking; members Sleuth cannot list leave only the group principal;
- `domain` -> `group:<source>:domain:<domain>` for the Workspace's configured domains (another domain's
  users are not Sleuth's to name: unmapped);
- `anyone` (link sharing) -> nobody, or the configured domains with `treat_link_shared_as = "domain"`.
Deleted accounts and expired permissions grant nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from connectors.base import SourceDoc, account_principal, group_principal, user_principal
from connectors.sources.access import Mapped
from connectors.sources.google_drive.content import READINGS

Members = Callable[[str], frozenset[str] | None]  # group email -> member principals, None when unknown
READ_ROLES = {"owner", "organizer", "fileOrganizer", "writer", "commenter", "reader"}


class DriveFile(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str
    name: str
    mime_type: str = Field(alias="mimeType")
    modified_time: datetime = Field(alias="modifiedTime")
    parents: list[str] = []
    web_view_link: str = Field(default="", alias="webViewLink")
    drive_id: str | None = Field(default=None, alias="driveId")
    size: int | None = None
    trashed: bool = False


def doc_id(source: str, file_id: str) -> str:
    return f"{source}:{file_id}"


def domain_principal(source: str, domain: str) -> str:
    return group_principal(source, f"domain:{domain}")


def person(source: str, email: str) -> frozenset[str]:
    return frozenset({user_principal(email), account_principal(source, email)})


def permission_acl(
    perm: dict[str, object],
    *,
    source: str,
    domains: Iterable[str],
    link_shared_as: str,
    members: Members,
    now: datetime,
) -> Mapped:
    kind, role = str(perm.get("type") or ""), str(perm.get("role") or "")
    email = str(perm.get("emailAddress") or "").strip().lower()
    if perm.get("deleted") or _expired(perm.get("expirationTime"), now):
        return Mapped()
    if role not in READ_ROLES:
        return Mapped(unmapped=(f"{kind or 'permission'} with role {role or 'none'}",))
    if kind == "user":
        return Mapped(person(source, email)) if email else Mapped(unmapped=("user without an email",))
    if kind == "group":
        if not email:
            return Mapped(unmapped=("group without an email",))
        return Mapped(frozenset({group_principal(source, email)}) | (members(email) or frozenset()))
    if kind == "domain":
        domain = str(perm.get("domain") or "").strip().lower()
        if domain in set(domains):
            return Mapped(frozenset({domain_principal(source, domain)}))
        return Mapped(unmapped=(f"domain {domain or 'unnamed'} is not one of this source's domains",))
    if kind == "anyone":
        reach = domains if link_shared_as == "domain" else ()
        return Mapped(frozenset(domain_principal(source, d) for d in reach))
    return Mapped(unmapped=(f"permission of type {kind or 'none'}",))


def member_principals(raw: Iterable[object], *, source: str, domains: Iterable[str]) -> frozenset[str]:
    """A group's listed members (nested groups' members come listed too) as principals; suspended accounts
    and members of kinds Sleuth does not model add nothing."""
    found: set[str] = set()
    for member in raw:
        if not isinstance(member, dict) or member.get("status", "ACTIVE") != "ACTIVE":
            continue
        email = str(member.get("email") or "").strip().lower()
        kind = member.get("type")
        if kind == "USER" and email:
            found |= person(source, email)
        elif kind == "GROUP" and email:
            found.add(group_principal(source, email))
        elif kind == "CUSTOMER":  # the whole organisation is a member
            found |= {domain_principal(source, d) for d in domains}
    return frozenset(found)


def file_to_doc(file: DriveFile, *, source: str, text: str, acl: frozenset[str]) -> SourceDoc:
    reading = READINGS.get(file.mime_type)
    return SourceDoc(
        id=doc_id(source, file.id),
        source=source,
        kind=reading.kind if reading else "document",
        title=file.name,
        url=file.web_view_link,
        text=text,
        updated_at=file.modified_time,
        version=file.modified_time.isoformat(),
        acl=acl,
        metadata={"mime_type": file.mime_type, "drive_id": file.drive_id},
    )


def _expired(value: object, now: datetime) -> bool:
    if not value:
        return False
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) <= now
    except ValueError:
        return False
