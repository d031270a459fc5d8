"""Raw Confluence JSON -> `SourceDoc` and principals. Pure: no I/O; bad items raise `ValidationError`."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from connectors.base import PUBLIC, Link, LinkType, SourceDoc, group_principal, person_principals
from connectors.sources.access import Mapped, Members, intersect
from connectors.sources.adf import storage_content
from connectors.text import ISSUE_KEY

PAGE_URL_RE = re.compile(r"/pages/(?:viewpage\.action\?pageId=)?(\d+)")
BROWSE_RE = re.compile(r"/browse/([A-Z][A-Z0-9_]+-\d+)")
KNOWN_USER_TYPES = {"known", "user"}  # v1 `User.type`; `unknown` and `anonymous` name no account


class _Raw(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Version(_Raw):
    number: int
    createdAt: datetime
    authorId: str | None = None


class Storage(_Raw):
    value: str = ""


class Body(_Raw):
    storage: Storage | None = None


class PageLinks(_Raw):
    webui: str = ""


class Page(_Raw):
    id: str
    title: str
    spaceId: str
    parentId: str | None = None
    parentType: str | None = None
    version: Version
    body: Body | None = None
    links: PageLinks = Field(default_factory=PageLinks, alias="_links")


class Label(_Raw):
    name: str


class Space(_Raw):
    id: str
    key: str
    name: str = ""


def doc_id(source: str, page_id: str) -> str:
    return f"{source}:page-{page_id}"


def space_read_principals(
    assignments: list[dict[str, Any]], group_names: dict[str, str], source: str
) -> Mapped:
    """Space permission assignments (v2) -> who may read the space; groups (by id) named by `group_names`.
    A read grant Sleuth cannot express is left out (narrower) and listed in `unmapped`."""
    found = Mapped()
    for item in assignments:
        operation = item.get("operation") or {}
        if operation.get("key") != "read" or operation.get("targetType") != "space":
            continue
        principal = item.get("principal") or {}
        kind, ident = str(principal.get("type", "")).lower(), str(principal.get("id") or "")
        if kind == "user" and ident:
            found |= Mapped(frozenset(person_principals(source, ident, None)))
        elif kind == "group" and ident in group_names:
            found |= Mapped(frozenset({group_principal(source, group_names[ident])}))
        elif kind in ("role", "access_class") and ident == "anonymous-users":
            found |= Mapped(frozenset({PUBLIC}))
        else:
            found |= Mapped(unmapped=(f"space read grant to {kind or 'no type'} {ident or '(no id)'}",))
    return found


def restriction_principals(
    body: dict[str, Any], source: str, group_names: dict[str, str] | None = None
) -> Mapped | None:
    """A v1 `restriction/byOperation/read` answer -> its entries as principals; None when the content is not
    restricted. A user Confluence could not resolve (type `unknown`, `anonymous`, no account id) or a group
    known by an id `group_names` cannot name is listed in `unmapped`, which makes the restriction admit nobody."""
    restrictions = body.get("restrictions") or {}
    users = (restrictions.get("user") or {}).get("results") or []
    groups = (restrictions.get("group") or {}).get("results") or []
    if not users and not groups:
        return None
    found = Mapped()
    for user in users:
        found |= _restricted_user(user, source)
    for group in groups:
        found |= _restricted_group(group, source, group_names or {})
    return found


def _restricted_user(user: Any, source: str) -> Mapped:
    if not isinstance(user, dict):
        return Mapped(unmapped=("user entry that is not an object",))
    kind = str(user.get("type") or "known").lower()
    account = str(user.get("accountId") or "")
    if kind not in KNOWN_USER_TYPES:
        return Mapped(unmapped=(f"user of type {kind}",))
    if not account or account == "unknown":
        return Mapped(unmapped=("user without an account id",))
    return Mapped(frozenset(person_principals(source, account, user.get("email"))))


def _restricted_group(group: Any, source: str, group_names: dict[str, str]) -> Mapped:
    if not isinstance(group, dict):
        return Mapped(unmapped=("group entry that is not an object",))
    name = str(group.get("name") or "") or group_names.get(str(group.get("id") or ""), "")
    if name:
        return Mapped(frozenset({group_principal(source, name)}))
    if group.get("id"):
        return Mapped(unmapped=(f"group given by id only ({group['id']})",))
    return Mapped(unmapped=("group without a name or id",))


def effective_acl(
    space: set[str] | frozenset[str], restricted_levels: list[frozenset[str] | None], members: Members
) -> frozenset[str]:
    """Space readers unless the page or an ancestor restricts viewing (a level that is not None); then only
    who reads the space *and* passes every restricting level (read restrictions inherit downwards). A level
    that admits nobody (empty) leaves the page to nobody. A restricted page is never public."""
    levels = [level for level in restricted_levels if level is not None]
    if not levels:
        return frozenset(space)
    if not all(levels):
        return frozenset()
    return frozenset(intersect([space, *levels], members) - {PUBLIC})


def identity_principals(me: dict[str, Any], groups: list[dict[str, Any]], source: str) -> set[str]:
    found = {PUBLIC, *person_principals(source, me.get("accountId"), me.get("email"))}
    found |= {group_principal(source, str(g["name"])) for g in groups if g.get("name")}
    return found


def _url_link(url: str, source: str, site: str) -> Link:
    page = PAGE_URL_RE.search(url)
    if page and url.startswith(site):
        return Link(target=doc_id(source, page.group(1)), type=LinkType.LINKS_TO)
    browse = BROWSE_RE.search(url)
    if browse:
        return Link(target=browse.group(1), type=LinkType.LINKS_TO, by_name=True)
    return Link(target=url, type=LinkType.LINKS_TO, by_name=True)


def page_to_doc(
    page: Page,
    *,
    source: str,
    site: str,
    space: Space | None,
    labels: list[Label],
    ancestors: list[str],
    acl: frozenset[str],
) -> SourceDoc:
    content = storage_content(page.body.storage.value if page.body and page.body.storage else "")
    links: list[Link] = []
    if page.parentId and page.parentType in (None, "page"):
        links.append(Link(target=doc_id(source, page.parentId), type=LinkType.PARENT))
    links += [Link(target=title, type=LinkType.LINKS_TO, by_name=True) for title in content.page_titles]
    links += [Link(target=key, type=LinkType.LINKS_TO, by_name=True) for key in content.jira_keys]
    links += [_url_link(url, source, site.rstrip("/")) for url in content.urls]
    explicit = {link.target for link in links}
    for key in sorted(set(ISSUE_KEY.findall(content.text)) - explicit):
        links.append(Link(target=key, type=LinkType.MENTIONS, by_name=True))
    return SourceDoc(
        id=doc_id(source, page.id),
        source=source,
        kind="page",
        title=page.title,
        url=f"{site.rstrip('/')}/wiki{page.links.webui}" if page.links.webui else "",
        text=f"{page.title}\n\n{content.text}".strip(),
        updated_at=page.version.createdAt,
        version=str(page.version.number),
        acl=acl,
        links=tuple(dict.fromkeys(links)),
        metadata={
            "page_id": page.id,
            "space": space.key if space else page.spaceId,
            "space_name": space.name if space else "",
            "labels": [label.name for label in labels],
            "ancestors": ancestors,
            "version": page.version.number,
            "author": page.version.authorId,
        },
    )
