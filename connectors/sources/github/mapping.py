"""Raw GitHub JSON -> `SourceDoc` and principals. Pure: no I/O; bad items raise `ValidationError`."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from connectors.base import PUBLIC, Link, LinkType, SourceDoc, account_principal, group_principal
from connectors.sources.access import Mapped
from connectors.text import ISSUE_KEY, comment_text, join_comments

REF_RE = re.compile(
    r"(?:(?P<verb>\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+)|(?P<dup>\bduplicate\s+of\s+))?"
    r"(?<![\w/])(?:(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+))?#(?P<number>\d+)\b",
    re.IGNORECASE,
)
URL_REF_RE = re.compile(r"github\.com/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+)/(?:issues|pull)/(?P<number>\d+)")
SHA_RE = re.compile(r"\b[0-9a-f]{40}\b")


class _Raw(BaseModel):
    model_config = ConfigDict(extra="ignore")


class User(_Raw):
    login: str


class Label(_Raw):
    name: str


class Issue(_Raw):
    number: int
    title: str
    body: str | None = None
    state: str = "open"
    html_url: str = ""
    user: User | None = None
    labels: list[Label] = []
    comments: int = 0
    created_at: datetime | None = None
    updated_at: datetime
    closed_at: datetime | None = None
    pull_request: dict[str, Any] | None = None

    @property
    def is_pull(self) -> bool:
        return self.pull_request is not None


class Comment(_Raw):
    id: int
    body: str | None = None
    user: User | None = None
    created_at: datetime | None = None


class Commit(_Raw):
    sha: str
    commit: dict[str, Any] = {}


def doc_id(source: str, repo: str, number: int) -> str:
    return f"{source}:{repo.lower()}#{number}"


def repo_acl(repo: dict[str, Any], collaborators: list[Any], teams: list[Any], source: str) -> Mapped:
    """Public repositories are readable by anyone; others by their collaborators and teams (and, for
    `internal` ones, the whole organisation). A collaborator without a login, a team without a slug or an
    internal repository without an owner is unmapped, and the repository then admits nobody
    (`Mapped.restricted`)."""
    if repo.get("private") is False and repo.get("visibility", "public") == "public":
        return Mapped(frozenset({PUBLIC}))
    owner = str((repo.get("owner") or {}).get("login") or "").lower()
    found = Mapped()
    for person in collaborators:
        login = person.get("login") if isinstance(person, dict) else None
        if not login:
            found |= Mapped(unmapped=("collaborator without a login",))
        elif (person.get("permissions") or {}).get("pull", True):
            found |= Mapped(frozenset({account_principal(source, str(login))}))
    for team in teams:
        slug = team.get("slug") if isinstance(team, dict) else None
        if slug and owner:
            found |= Mapped(frozenset({group_principal(source, f"{owner}/{slug}")}))
        else:
            found |= Mapped(unmapped=(f"team {slug or 'without a slug'} of {owner or 'no owner'}",))
    if repo.get("visibility") == "internal":
        org = frozenset({group_principal(source, owner)}) if owner else frozenset()
        found |= Mapped(org, () if owner else ("internal repository without an owner",))
    return found


def identity_principals(
    me: dict[str, Any], teams: list[dict[str, Any]], orgs: list[dict[str, Any]], source: str
) -> set[str]:
    found = {PUBLIC}
    if me.get("login"):
        found.add(account_principal(source, str(me["login"])))
    for team in teams:
        org = (team.get("organization") or {}).get("login")
        if org and team.get("slug"):
            found.add(group_principal(source, f"{str(org).lower()}/{team['slug']}"))
    found |= {group_principal(source, str(o["login"])) for o in orgs if o.get("login")}
    return found


def references(text: str, *, source: str, repo: str) -> list[Link]:
    """`#12`, `org/repo#45`, `closes #7`, `duplicate of #3` and issue URLs -> typed links."""
    links: list[Link] = []
    for m in REF_RE.finditer(text):
        target = doc_id(source, f"{m['owner']}/{m['repo']}" if m["owner"] else repo, int(m["number"]))
        kind = LinkType.RELATES if m["verb"] else LinkType.DUPLICATES if m["dup"] else LinkType.MENTIONS
        links.append(Link(target=target, type=kind))
    for m in URL_REF_RE.finditer(text):
        links.append(
            Link(target=doc_id(source, f"{m['owner']}/{m['repo']}", int(m["number"])), type=LinkType.MENTIONS)
        )
    links += [Link(target=key, type=LinkType.MENTIONS, by_name=True) for key in ISSUE_KEY.findall(text)]
    return links


def issue_to_doc(
    issue: Issue,
    *,
    source: str,
    repo: str,
    comments: list[Comment],
    commits: list[Commit],
    acl: frozenset[str],
) -> SourceDoc:
    labels = [label.name for label in issue.labels]
    facts = f"State: {issue.state}" + (f" | Labels: {', '.join(labels)}" if labels else "")
    parts = [f"{repo}#{issue.number}: {issue.title}", facts, issue.body or ""]
    if commits:
        parts.append("Commits:")
        parts += [
            f"{c.sha[:12]} {(str(c.commit.get('message', '')).splitlines() or [''])[0]}" for c in commits
        ]
    text = join_comments(
        "\n\n".join(p for p in parts if p),
        [
            comment_text(
                c.user.login if c.user else "ghost", c.created_at and c.created_at.date(), c.body or ""
            )
            for c in comments
        ],
    )
    me = doc_id(source, repo, issue.number)
    links = [link for link in references(text, source=source, repo=repo) if link.target != me]
    shas = list(dict.fromkeys([c.sha for c in commits] + SHA_RE.findall(text)))
    return SourceDoc(
        id=me,
        source=source,
        kind="pull_request" if issue.is_pull else "issue",
        title=f"{repo}#{issue.number}: {issue.title}",
        url=issue.html_url,
        text=text,
        updated_at=issue.updated_at,
        version=issue.updated_at.isoformat(),
        acl=acl,
        links=tuple(_strongest(links)),
        aliases=(f"{repo}#{issue.number}",),
        metadata={
            "repo": repo,
            "number": issue.number,
            "state": issue.state,
            "labels": labels,
            "author": issue.user.login if issue.user else None,
            "comments": len(comments),
            "commits": shas,
            "merged_at": (issue.pull_request or {}).get("merged_at"),
        },
    )


def _strongest(links: list[Link]) -> list[Link]:
    """One link per target: a typed reference (closes, duplicate of) beats a plain mention."""
    best: dict[str, Link] = {}
    for link in links:
        if link.target not in best or best[link.target].type == LinkType.MENTIONS:
            best[link.target] = link
    return list(best.values())
