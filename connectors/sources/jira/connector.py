"""Jira Cloud connector: incremental pull by `updated` through JQL search, id listing, principals."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ValidationError

from connectors.base import Checkpoint, CurrentAcl, Cursor, Failure, Pulled, SourceDoc
from connectors.sources.jira.client import ISSUE_FIELDS, JiraClient
from connectors.sources.jira.config import JiraConfig
from connectors.sources.jira.mapping import (
    Comment,
    Issue,
    RemoteLink,
    doc_id,
    identity_principals,
    issue_to_doc,
)
from connectors.sources.jira.permissions import JiraPermissions
from connectors.sources.rest import OwnsClient, RequestRejected, Watermark, bad_fields, counted
from connectors.text import ISSUE_KEY

log = logging.getLogger(__name__)
ACL_FIELDS = ["summary", "updated", "security", "reporter", "assignee"]  # what an issue's ACL depends on
# Jira's search index lags behind updates, and JQL dates are whole minutes: each run re-reads this much before
# its mark, taking only issue versions it has not taken yet.
OVERLAP = timedelta(minutes=10)


# The source's own declarations (kind, config, client), shaped like GitHub's; what they share is in OwnsClient.
class JiraConnector(OwnsClient):
    kind = "jira"
    config_model = JiraConfig
    client_class = JiraClient

    def pull(self, cursor: Cursor | None) -> Pulled:
        """Issues updated since `cursor`, oldest first; a `Checkpoint` after each page of search results."""
        mark = Watermark.load(cursor)
        permissions = JiraPermissions(self._client, self.name)
        counts: Counter[str] = Counter()
        told: set[str] = set()
        for page in self._client.search(
            self._jql(mark), fields=ISSUE_FIELDS, page_size=self._config.page_size
        ):
            yield from counted((self._item(raw, mark, permissions) for raw in page.issues), counts)
            yield from self._problems(permissions, told)
            yield Checkpoint(cursor=mark.dump())
        log.info("jira pull finished", extra={"connector": self.name, **counts})
        return mark.dump()

    def _problems(self, permissions: JiraPermissions, told: set[str]) -> Iterator[Failure]:
        """One failure per project whose permissions could not be read (its issues are visible to no one),
        and one per holder Sleuth cannot map (`JiraPermissions.failures`)."""
        for project, reason in sorted(permissions.problems.items()):
            if project not in told:
                told.add(project)
                yield Failure(id=doc_id(self.name, project), reason=reason)
        yield from permissions.failures()

    def list_ids(self) -> Iterator[str]:
        jql = f"{self._projects_clause()} ORDER BY key ASC"
        for page in self._client.search(jql, fields=["updated"], page_size=self._config.page_size):
            for raw in page.issues:
                if isinstance(raw, dict) and isinstance(raw.get("key"), str):
                    yield doc_id(self.name, raw["key"])

    def acls(self) -> Iterator[CurrentAcl | Failure]:
        """Every issue's ACL from a listing of the fields permissions depend on (no bodies, no comments);
        schemes, roles and security levels are read afresh."""
        permissions = JiraPermissions(self._client, self.name)
        jql = f"{self._projects_clause()} ORDER BY key ASC"
        told: set[str] = set()
        for page in self._client.search(jql, fields=ACL_FIELDS, page_size=self._config.page_size):
            for raw in page.issues:
                try:
                    issue = Issue.model_validate(raw)
                except ValidationError as exc:
                    ident = raw.get("key") if isinstance(raw, dict) else None
                    yield Failure(id=doc_id(self.name, str(ident or "unknown")), reason=bad_fields(exc))
                    continue
                try:
                    yield CurrentAcl(id=doc_id(self.name, issue.key), acl=permissions.acl(issue))
                except RequestRejected as exc:
                    yield Failure(id=doc_id(self.name, issue.key), reason=str(exc))
            yield from self._problems(permissions, told)

    def _token_principals(self, access_token: str) -> set[str]:
        return identity_principals(self._client.myself_as(access_token), self.name)

    def can_open(self, doc_id: str, access_token: str, *, timeout_s: float) -> bool:
        """The live check (`connectors.base.LiveAccess`): the issue asked for with the user's own token
        (Jira answers 404 for an issue the user may not browse)."""
        key = doc_id.removeprefix(f"{self.name}:")
        if key == doc_id or not ISSUE_KEY.fullmatch(key):
            raise ValueError("not an issue of this source")
        return bool(self._client.issue_opens_as(access_token, key, timeout_s=timeout_s))

    def _item(self, raw: Any, mark: Watermark, permissions: JiraPermissions) -> SourceDoc | Failure | None:
        try:
            issue = Issue.model_validate(raw)
        except ValidationError as exc:
            ident = raw.get("key") or raw.get("id") if isinstance(raw, dict) else None
            log.warning("jira issue malformed", extra={"connector": self.name, "issue": ident})
            return Failure(
                id=doc_id(self.name, str(ident or "unknown")), reason=f"malformed issue: {bad_fields(exc)}"
            )
        if mark.seen_within(issue.fields.updated, issue.key, OVERLAP):
            return None
        try:
            doc = self._doc(issue, permissions)
        except RequestRejected as exc:  # e.g. deleted between the search and the follow-up calls
            log.warning("jira issue unreadable", extra={"connector": self.name, "issue": issue.key})
            return Failure(id=doc_id(self.name, issue.key), reason=str(exc))
        except ValidationError as exc:
            return Failure(
                id=doc_id(self.name, issue.key), reason=f"malformed issue parts: {bad_fields(exc)}"
            )
        finally:
            mark.take(issue.fields.updated, issue.key, OVERLAP)
        return doc

    def _doc(self, issue: Issue, permissions: JiraPermissions) -> SourceDoc:
        page = issue.fields.comment
        comments = page.comments if page is not None else []
        if issue.needs_comment_fetch:
            comments = [Comment.model_validate(c) for c in self._client.comments(issue.key)]
        comments = [c for c in comments if c.shown_to_all]  # group/role-restricted and internal: left out
        remote = [RemoteLink.model_validate(r) for r in self._client.remote_links(issue.key)]
        return issue_to_doc(
            issue,
            source=self.name,
            base_url=self._config.base_url,
            comments=comments,
            remote_links=remote,
            acl=permissions.acl(issue),
            confluence_url=self._config.confluence_url,
        )

    def _projects_clause(self) -> str:
        return "project in (" + ", ".join(f'"{key}"' for key in self._config.projects) + ")"

    def _jql(self, mark: Watermark) -> str:
        clause = self._projects_clause()
        since = mark.since(OVERLAP)
        if since is not None:
            # JQL dates are minutes in the searching user's zone; `>=` on the floor re-reads the boundary.
            local = since.astimezone(self._zone())
            clause += f' AND updated >= "{local:%Y-%m-%d %H:%M}"'
        return clause + " ORDER BY updated ASC, key ASC"

    def _zone(self) -> ZoneInfo:
        name = self._client.myself().get("timeZone") or "UTC"
        try:
            return ZoneInfo(str(name))
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")
