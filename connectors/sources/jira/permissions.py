"""Who may read a Jira issue: the project's BROWSE_PROJECTS grants, narrowed by the issue's security level.

One instance per run; schemes, roles and level members are fetched once per project and cached.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from connectors.base import PUBLIC, account_principal
from connectors.sources.jira.client import JiraClient
from connectors.sources.jira.mapping import Issue, actor_principals, holder_principals, user_principals

log = logging.getLogger(__name__)
BROWSE = "BROWSE_PROJECTS"


@dataclass(frozen=True)
class Access:
    """Principals from static holders, plus whether the issue's reporter/assignee are granted too."""

    principals: frozenset[str]
    reporter: bool = False
    assignee: bool = False

    def for_issue(self, issue: Issue, source: str) -> set[str]:
        found = set(self.principals)
        if self.reporter:
            found |= user_principals(issue.fields.reporter, source)
        if self.assignee:
            found |= user_principals(issue.fields.assignee, source)
        return found


class JiraPermissions:
    def __init__(self, client: JiraClient, source: str) -> None:
        self._client, self._source = client, source
        self._projects: dict[str, Access] = {}
        self._levels: dict[tuple[str, str], Access] = {}
        self._roles: dict[tuple[str, str], set[str]] = {}

    def acl(self, issue: Issue) -> frozenset[str]:
        project = issue.key.rsplit("-", 1)[0]
        security = issue.fields.security
        if security is not None and security.id:
            # A security level narrows who may see the issue; such an issue is never public.
            return frozenset(self._level(project, security.id).for_issue(issue, self._source) - {PUBLIC})
        return frozenset(self._project(project).for_issue(issue, self._source))

    def _project(self, key: str) -> Access:
        if key not in self._projects:
            scheme = self._client.permission_scheme(key)
            grants = [
                g.get("holder") or {}
                for g in scheme.get("permissions") or []
                if g.get("permission") == BROWSE
            ]
            self._projects[key] = self._access(key, grants)
            log.debug("project permissions read", extra={"project": key, "grants": len(grants)})
        return self._projects[key]

    def _level(self, project: str, level_id: str) -> Access:
        if (project, level_id) not in self._levels:
            scheme = self._client.security_scheme(project)
            members: list[Any] = []
            if scheme is not None and scheme.get("id") is not None:
                members = self._client.security_level_members(str(scheme["id"]), level_id)
            holders = [
                m.get("holder") or {} for m in members if str(m.get("issueSecurityLevelId")) == level_id
            ]
            self._levels[(project, level_id)] = self._access(project, holders)
        return self._levels[(project, level_id)]

    def _access(self, key: str, holders: list[dict[str, Any]]) -> Access:
        found: set[str] = set()
        reporter = assignee = False
        for holder in holders:
            kind = holder.get("type")
            if kind == "reporter":
                reporter = True
            elif kind == "assignee":
                assignee = True
            elif kind == "projectRole":
                found |= self._role(key, str(holder.get("parameter") or holder.get("value") or ""))
            elif kind == "projectLead":
                lead = (self._client.project(key).get("lead") or {}).get("accountId")
                found |= {account_principal(self._source, str(lead))} if lead else set()
            else:
                found |= holder_principals(holder, self._source)
        return Access(frozenset(found), reporter, assignee)

    def _role(self, key: str, role_id: str) -> set[str]:
        if not role_id:
            return set()
        if (key, role_id) not in self._roles:
            self._roles[(key, role_id)] = actor_principals(self._client.role(key, role_id), self._source)
        return self._roles[(key, role_id)]
