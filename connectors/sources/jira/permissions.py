"""Who may read a Jira issue: the project's BROWSE_PROJECTS grants, narrowed by the issue's security level.

A security level narrows Browse, it does not replace it: the ACL is who passes both (`sources.access.intersect`,
which lists group members where the two sides name different groups). One instance per run; schemes, roles,
level members and group members are fetched once and cached.

A token that may not read a project's permission scheme (a non-admin account: 403) does not stop the sync: the
project's issues get an empty ACL (visible to no one) and `problems` says why, once per project, for the run's
failures. A group whose members cannot be listed counts only where both sides name it.

A security level member that maps to no principal (a custom-field holder, a group given by id only) leaves
the issue to nobody; a Browse grant that does is left out. `failures` names both (`sources.access.Mapped`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from connectors.base import PUBLIC, Failure, Forbidden, account_principal, user_principal
from connectors.sources.access import UNMAPPED, UNMAPPED_GRANT, Mapped, intersect
from connectors.sources.jira.client import JiraClient
from connectors.sources.jira.mapping import (
    Issue,
    actor_principals,
    doc_id,
    holder_principals,
    user_principals,
)
from connectors.sources.rest import RequestRejected

log = logging.getLogger(__name__)
BROWSE = "BROWSE_PROJECTS"
UNREADABLE = "cannot read {what} (HTTP 403): the issues that depend on it are visible to no one"


@dataclass(frozen=True)
class Access:
    """Principals from static holders, plus whether the issue's reporter/assignee are granted too."""

    principals: frozenset[str]
    reporter: bool = False
    assignee: bool = False
    unmapped: tuple[str, ...] = ()  # holders that map to no principal

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
        self.problems: dict[str, str] = {}  # project key -> why its issues are visible to no one
        self._members: dict[str, set[str]] = {}
        self._projects: dict[str, Access] = {}
        self._levels: dict[tuple[str, str], Access] = {}
        self._roles: dict[tuple[str, str], Mapped] = {}
        self._pending: dict[str, Failure] = {}  # failure id -> failure, not yet handed out
        self._told: set[str] = set()

    def failures(self) -> Iterator[Failure]:
        """Unmapped holders found since the last call: one per issue left to nobody, one per project grant."""
        pending, self._pending = self._pending, {}
        for ident, failure in sorted(pending.items()):
            if ident not in self._told:
                self._told.add(ident)
                yield failure

    def acl(self, issue: Issue) -> frozenset[str]:
        project = issue.key.rsplit("-", 1)[0]
        security = issue.fields.security
        try:
            grants = self._project(project)
            browse = grants.for_issue(issue, self._source)
            if grants.unmapped:
                self._report(doc_id(self._source, project), UNMAPPED_GRANT, grants.unmapped)
            if security is not None and security.id:
                # A security level narrows who may browse the issue; such an issue is never public.
                restriction = self._level(project, security.id)
                if restriction.unmapped:
                    self._report(doc_id(self._source, issue.key), UNMAPPED, restriction.unmapped)
                    return frozenset()
                level = restriction.for_issue(issue, self._source)
                return frozenset(intersect([browse, level], self._group_members) - {PUBLIC})
        except Forbidden:  # a role or security level this token may not read: the issue is visible to no one
            log.warning("jira permissions unreadable; issue visible to no one", extra={"issue": issue.key})
            self.problems.setdefault(project, UNREADABLE.format(what="a role or security level"))
            return frozenset()
        return frozenset(browse)

    def _project(self, key: str) -> Access:
        if key not in self._projects:
            try:
                scheme = self._client.permission_scheme(key)
            except Forbidden:
                log.warning("jira permissions unreadable; issues visible to no one", extra={"project": key})
                self.problems[key] = UNREADABLE.format(what="the permission scheme")
                self._projects[key] = Access(frozenset())
                return self._projects[key]
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

    def _report(self, ident: str, reason: str, unmapped: tuple[str, ...]) -> None:
        if ident not in self._told:
            self._pending[ident] = Failure(id=ident, reason=reason, detail=Mapped(unmapped=unmapped).detail())

    def _access(self, key: str, holders: list[dict[str, Any]]) -> Access:
        found = Mapped()
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
                found |= Mapped(frozenset({account_principal(self._source, str(lead))})) if lead else Mapped()
            else:
                found |= holder_principals(holder, self._source)
        return Access(found.principals, reporter, assignee, found.unmapped)

    def _group_members(self, group: str) -> set[str]:
        """A group principal's members as user principals (account id, and email where Jira shows it)."""
        prefix = f"group:{self._source}:"
        if not group.startswith(prefix) or group.startswith(f"{prefix}app:"):
            return set()  # application roles: no member listing
        if group not in self._members:
            found: set[str] = set()
            try:
                for user in self._client.group_members(group[len(prefix) :]):
                    if isinstance(user, dict) and user.get("accountId"):
                        found.add(account_principal(self._source, str(user["accountId"])))
                        if user.get("emailAddress"):
                            found.add(user_principal(str(user["emailAddress"])))
            except (Forbidden, RequestRejected):
                log.warning("jira group members unreadable", extra={"group": group})
            self._members[group] = found
        return self._members[group]

    def _role(self, key: str, role_id: str) -> Mapped:
        if not role_id:
            return Mapped(unmapped=("projectRole holder without a role id",))
        if (key, role_id) not in self._roles:
            self._roles[(key, role_id)] = actor_principals(self._client.role(key, role_id), self._source)
        return self._roles[(key, role_id)]
