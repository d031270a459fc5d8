"""Raw Confluence JSON -> `SourceDoc` and principals. Pure: no I/O; bad items raise `ValidationError`."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from connectors.base import PUBLIC, Link, LinkType, SourceDoc, group_principal, person_principals
from connectors.sources.access import Members, intersect
from connectors.sources.adf import storage_content
from connectors.text import ISSUE_KEY

PAGE_URL_RE = re.compile(r"/pages/(?:viewpage\.action\?pageId=)?(\d+)")
BROWSE_RE = re.compile(r"/browse/([A-Z][A-Z0-9_]+-\d+)")


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
) -> set[str]:
    """Space permission assignments (v2) -> who may read the space; groups (by id) named by `group_names`."""
    found: set[str] = set()
    for item in assignments:
        operation = item.get("operation") or {}
        if operation.get("key") != "read" or operation.get("targetType") != "space":
            continue
        principal = item.get("principal") or {}
        kind, ident = str(principal.get("type", "")).lower(), str(principal.get("id", ""))
        if kind == "user":
            found |= person_principals(source, ident, None)
        elif kind == "group" and ident in group_names:
            found.add(group_principal(source, group_names[ident]))
        elif kind in ("role", "access_class") and ident == "anonymous-users":
            found.add(PUBLIC)
    return found


def restriction_principals(body: dict[str, Any], source: str) -> set[str]:
    """A v1 `restriction/byOperation/read` answer -> principals; empty when the content is not restricted."""
    restrictions = body.get("restrictions") or {}
    found: set[str] = set()
    for user in (restrictions.get("user") or {}).get("results") or []:
        found |= person_principals(source, user.get("accountId"), user.get("email"))
    for group in (restrictions.get("group") or {}).get("results") or []:
        if group.get("name"):
            found.add(group_principal(source, str(group["name"])))
    return found


def effective_acl(space: set[str], restricted_levels: list[set[str]], members: Members) -> frozenset[str]:
    """Space readers unless the page or an ancestor restricts viewing; then only who reads the space *and*
    passes every restricting level (read restrictions inherit downwards). A restricted page is never public."""
    levels = [level for level in restricted_levels if level]
    if not levels:
        return frozenset(space)
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
