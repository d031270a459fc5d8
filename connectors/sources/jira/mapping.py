"""Raw Jira v3 JSON -> `SourceDoc` and principals. Pure: no I/O; bad items raise `ValidationError`."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from connectors.base import PUBLIC, Link, LinkType, SourceDoc, group_principal, person_principals
from connectors.sources.access import Mapped
from connectors.sources.adf import adf_content
from connectors.text import ISSUE_KEY, comment_text, join_comments

URL_RE = re.compile(r"https?://[^\s<>\"')\]]+")
LINK_TYPES = {"blocks": LinkType.BLOCKS, "duplicate": LinkType.DUPLICATES, "cloners": LinkType.CLONES}
SYMMETRIC = {LinkType.RELATES}


class _Raw(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Named(_Raw):
    id: str | None = None
    name: str = ""


class User(_Raw):
    accountId: str = ""
    displayName: str = ""
    emailAddress: str | None = None


class LinkedIssue(_Raw):
    key: str


class IssueLinkType(_Raw):
    name: str = ""


class IssueLink(_Raw):
    type: IssueLinkType
    inwardIssue: LinkedIssue | None = None
    outwardIssue: LinkedIssue | None = None


class Comment(_Raw):
    id: str
    author: User | None = None
    body: Any = None
    created: datetime | None = None
    updated: datetime | None = None
    visibility: dict[str, Any] | None = None  # restricted to a group or project role
    jsdPublic: bool | None = None  # False: a service-desk internal comment

    @property
    def shown_to_all(self) -> bool:
        """Whether everyone who may browse the issue may read the comment (else it is left out)."""
        return not self.visibility and self.jsdPublic is not False


class CommentPage(_Raw):
    comments: list[Comment] = []
    total: int = 0


class Fields(_Raw):
    summary: str
    description: Any = None
    status: Named | None = None
    assignee: User | None = None
    reporter: User | None = None
    components: list[Named] = []
    labels: list[str] = []
    fixVersions: list[Named] = []
    issuelinks: list[IssueLink] = []
    parent: LinkedIssue | None = None
    updated: datetime
    created: datetime | None = None
    project: Named | None = None
    security: Named | None = None
    issuetype: Named | None = None
    comment: CommentPage | None = None


class Issue(_Raw):
    id: str
    key: str
    fields: Fields

    @property
    def needs_comment_fetch(self) -> bool:
        page = self.fields.comment
        return page is not None and page.total > len(page.comments)


class RemoteObject(_Raw):
    url: str
    title: str = ""


class RemoteApp(_Raw):
    type: str = ""


class RemoteLink(_Raw):
    object: RemoteObject
    application: RemoteApp | None = None


def doc_id(source: str, key: str) -> str:
    return f"{source}:{key}"


def holder_principals(holder: dict[str, Any], source: str) -> Mapped:
    """A permission holder (scheme grant or security level member) -> principals. Dynamic holders (reporter,
    assignee, project lead, roles) are resolved by the caller; any other kind (custom fields, service-desk
    portal customers), and a group given by id only, maps to nothing and is listed as unmapped."""
    kind = str(holder.get("type") or "")
    parameter = str(holder.get("parameter") or "")
    if kind == "anyone":
        return Mapped(frozenset({PUBLIC}))
    if kind == "group" and parameter:  # `parameter` is the name; `value` alone is the group's id
        return Mapped(frozenset({group_principal(source, parameter)}))
    if kind == "user":
        account = parameter or str(holder.get("value") or "")
        user = holder.get("user") if isinstance(holder.get("user"), dict) else {}
        if account and account != "unknown":
            return Mapped(frozenset(person_principals(source, account, user.get("emailAddress"))))
    if kind == "applicationRole":
        app = parameter or str(holder.get("value") or "")
        return Mapped(frozenset({group_principal(source, f"app:{app or 'any'}")}))
    ident = parameter or str(holder.get("value") or "")
    return Mapped(unmapped=(f"{kind or 'untyped'} holder {ident}".rstrip(),))


def actor_principals(role: dict[str, Any], source: str) -> Mapped:
    """The actors of a project role (`GET /project/{key}/role/{id}`) -> principals; a group actor known by
    id only, or a user whose account Jira reports as `unknown` (deleted, corrupted), is unmapped."""
    found = Mapped()
    for actor in role.get("actors") or []:
        group = actor.get("actorGroup") or {}
        user = actor.get("actorUser") or {}
        account = str(user.get("accountId") or "")
        if group.get("name"):
            found |= Mapped(frozenset({group_principal(source, str(group["name"]))}))
        elif account and account != "unknown":
            found |= Mapped(frozenset(person_principals(source, account, None)))
        elif group.get("groupId"):
            found |= Mapped(unmapped=(f"role actor group given by id only ({group['groupId']})",))
        else:
            found |= Mapped(unmapped=(f"role actor {actor.get('type') or 'of no type'} without an account",))
    return found


def user_principals(user: User | None, source: str) -> set[str]:
    if user is None or not user.accountId:
        return set()
    return person_principals(source, user.accountId, user.emailAddress)


def identity_principals(me: dict[str, Any], source: str) -> set[str]:
    """`GET /myself?expand=groups,applicationRoles` -> what this user may see (in `source`'s namespace; the
    email counts only where it is the asker's Slack-verified one, which the resolver checks)."""
    found = {PUBLIC, *person_principals(source, me.get("accountId"), me.get("emailAddress"))}
    for group in (me.get("groups") or {}).get("items") or []:
        if group.get("name"):
            found.add(group_principal(source, str(group["name"])))
    roles = (me.get("applicationRoles") or {}).get("items") or []
    for role in roles:
        if role.get("key"):
            found.add(group_principal(source, f"app:{role['key']}"))
    if roles:
        found.add(group_principal(source, "app:any"))
    return found


def _issue_links(issue: Issue, source: str) -> tuple[list[Link], list[dict[str, str]]]:
    links: list[Link] = []
    inward: list[dict[str, str]] = []
    for raw in issue.fields.issuelinks:
        kind = LINK_TYPES.get(raw.type.name.strip().lower(), LinkType.RELATES)
        if raw.outwardIssue is not None:
            links.append(Link(target=doc_id(source, raw.outwardIssue.key), type=kind))
        if raw.inwardIssue is not None:
            if kind in SYMMETRIC:
                links.append(Link(target=doc_id(source, raw.inwardIssue.key), type=kind))
            else:  # the other issue points at us; its own document carries the edge
                inward.append({"type": kind.value, "from": raw.inwardIssue.key})
    return links, inward


def _wiki_link(url: str, confluence_url: str | None) -> bool:
    if confluence_url:
        return url.startswith(confluence_url.rstrip("/"))
    return "/wiki/" in url


def _comment_text(comment: Comment) -> tuple[str, list[str]]:
    body = adf_content(comment.body)
    who = comment.author.displayName if comment.author else None
    return comment_text(who, comment.created and comment.created.date(), body.text), body.urls


def issue_to_doc(
    issue: Issue,
    *,
    source: str,
    base_url: str,
    comments: list[Comment],
    remote_links: list[RemoteLink],
    acl: frozenset[str],
    confluence_url: str | None = None,
) -> SourceDoc:
    f = issue.fields
    description = adf_content(f.description)
    facts = [
        ("Type", f.issuetype.name if f.issuetype else ""),
        ("Status", f.status.name if f.status else ""),
        ("Assignee", f.assignee.displayName if f.assignee else "Unassigned"),
        ("Components", ", ".join(c.name for c in f.components)),
        ("Labels", ", ".join(f.labels)),
        ("Fix versions", ", ".join(v.name for v in f.fixVersions)),
    ]
    parts = [f"{issue.key}: {f.summary}", " | ".join(f"{k}: {v}" for k, v in facts if v), description.text]
    urls = list(description.urls)
    comment_parts = []
    for comment in comments:
        part, found = _comment_text(comment)
        comment_parts.append(part)
        urls.extend(found)
    text = join_comments("\n\n".join(p for p in parts if p), comment_parts)
    urls.extend(URL_RE.findall(text))

    links, inward = _issue_links(issue, source)
    if f.parent is not None:
        links.append(Link(target=doc_id(source, f.parent.key), type=LinkType.PARENT))
    linked_keys = {link.target for link in links}
    for key in sorted(set(ISSUE_KEY.findall(text)) - {issue.key}):
        if doc_id(source, key) not in linked_keys:
            links.append(Link(target=key, type=LinkType.MENTIONS, by_name=True))
    for url in dict.fromkeys(urls):
        if _wiki_link(url, confluence_url):
            links.append(Link(target=url, type=LinkType.LINKS_TO, by_name=True))
    for remote in remote_links:
        wiki = (remote.application and "confluence" in remote.application.type) or _wiki_link(
            remote.object.url, confluence_url
        )
        target = remote.object.title if wiki and remote.object.title else remote.object.url
        links.append(Link(target=target, type=LinkType.LINKS_TO, by_name=True))

    metadata: dict[str, Any] = {
        "key": issue.key,
        "project": f.project.name if f.project else issue.key.split("-")[0],
        "status": f.status.name if f.status else None,
        "issue_type": f.issuetype.name if f.issuetype else None,
        "assignee": f.assignee.displayName if f.assignee else None,
        "reporter": f.reporter.displayName if f.reporter else None,
        "components": [c.name for c in f.components],
        "labels": list(f.labels),
        "fix_versions": [v.name for v in f.fixVersions],
        "created": f.created.isoformat() if f.created else None,
        "comments": len(comments),
        "remote_links": [{"title": r.object.title, "url": r.object.url} for r in remote_links],
        "inward_links": inward,
        "security_level": f.security.name if f.security else None,
    }
    return SourceDoc(
        id=doc_id(source, issue.key),
        source=source,
        kind="ticket",
        title=f"{issue.key}: {f.summary}",
        url=f"{base_url.rstrip('/')}/browse/{issue.key}",
        text=text,
        updated_at=f.updated,
        version=f.updated.isoformat(),
        acl=acl,
        links=tuple(dict.fromkeys(links)),
        aliases=(issue.key,),
        metadata=metadata,
    )
