"""The only code that speaks HTTP to Jira Cloud (REST v3). Returns raw JSON; `mapping` gives it meaning."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from connectors.sources.rest import (
    RequestRejected,
    SourceClient,
)

API = "/rest/api/3"
HEADERS = {"Accept": "application/json"}
ISSUE_FIELDS = [
    "summary", "description", "comment", "status", "assignee", "reporter", "components", "labels",
    "fixVersions", "issuelinks", "parent", "updated", "created", "project", "security", "issuetype",
]  # fmt: skip


@dataclass(frozen=True)
class SearchPage:
    issues: list[Any]  # raw IssueBeans; mapping validates each one
    next_token: str | None


class JiraClient(SourceClient):
    label = "Jira"

    def myself(self) -> Any:
        return self._rest.get_json(f"{API}/myself")

    def search(self, jql: str, *, fields: list[str], page_size: int) -> Iterator[SearchPage]:
        """`GET /search/jql`, page by page through `nextPageToken` until `isLast`."""
        token: str | None = None
        while True:
            params: dict[str, Any] = {"jql": jql, "fields": ",".join(fields), "maxResults": page_size}
            if token:
                params["nextPageToken"] = token
            body = self._rest.get_json(f"{API}/search/jql", params)
            issues = body.get("issues") if isinstance(body, dict) else None
            token = body.get("nextPageToken") if isinstance(body, dict) else None
            yield SearchPage(issues if isinstance(issues, list) else [], token)
            if not token or body.get("isLast", False):
                return

    def comments(self, key: str, *, page_size: int = 100) -> list[Any]:
        found: list[Any] = []
        while True:
            params = {"startAt": len(found), "maxResults": page_size, "orderBy": "created"}
            body = self._rest.get_json(f"{API}/issue/{key}/comment", params)
            page = body.get("comments") or []
            found.extend(page)
            if not page or len(found) >= int(body.get("total", 0)):
                return found

    def remote_links(self, key: str) -> list[Any]:
        body = self._rest.get_json(f"{API}/issue/{key}/remotelink")
        return body if isinstance(body, list) else []

    def project(self, key: str) -> Any:
        return self._rest.get_json(f"{API}/project/{key}")

    def permission_scheme(self, key: str) -> Any:
        return self._rest.get_json(
            f"{API}/project/{key}/permissionscheme", {"expand": "permissions,user,group"}
        )

    def role(self, key: str, role_id: str) -> Any:
        return self._rest.get_json(f"{API}/project/{key}/role/{role_id}")

    def security_scheme(self, key: str) -> Any | None:
        """The project's issue security scheme, or None when the project has none."""
        try:
            return self._rest.get_json(f"{API}/project/{key}/issuesecuritylevelscheme")
        except RequestRejected as exc:
            if exc.status == 404:
                return None
            raise

    def security_level_members(self, scheme_id: str, level_id: str) -> list[Any]:
        found: list[Any] = []
        while True:
            params = {"issueSecurityLevelId": level_id, "startAt": len(found), "maxResults": 50}
            body = self._rest.get_json(f"{API}/issuesecurityschemes/{scheme_id}/members", params)
            page = body.get("values") or []
            found.extend(page)
            if not page or body.get("isLast", True):
                return found

    def group_members(self, name: str) -> list[Any]:
        """Every member of a group (`GET /group/member`, followed to its last page)."""
        found: list[Any] = []
        while True:
            params = {"groupname": name, "startAt": len(found), "maxResults": 50}
            body = self._rest.get_json(f"{API}/group/member", params)
            page = body.get("values") or [] if isinstance(body, dict) else []
            found.extend(page)
            if not page or body.get("isLast", True):
                return found

    def issue_opens_as(self, access_token: str, key: str, *, timeout_s: float) -> bool:
        """Whether the token's user may browse the issue now (Jira answers 404 when they may not)."""
        return self.opens_as(access_token, f"{API}/issue/{key}?fields=summary", timeout_s=timeout_s)

    def myself_as(self, access_token: str) -> Any:
        """Who a linked user is, with their groups, asked with the user's own token."""
        rest = self._as_user(access_token)
        try:
            return rest.get_json(f"{API}/myself", {"expand": "groups,applicationRoles"})
        finally:
            rest.close()
