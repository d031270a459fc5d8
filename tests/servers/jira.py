"""A local Jira Cloud REST v3 emulator: documented response shapes, in-memory data, faults and a request log.

`FakeJira` holds the data; `serve_jira(fake)` runs it on 127.0.0.1 (context manager, yields the base URL).
Search supports `project in (...)`, `updated >= "yyyy-MM-dd HH:mm"` (in the service account's time zone) and
`ORDER BY updated ASC, key ASC` / `ORDER BY key ASC`, paged with an opaque `nextPageToken`.
"""

from __future__ import annotations

import base64
import copy
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tests.servers.http import Reply, json_handler, serve_http

EMAIL, TOKEN = "bot@acme.io", "jira-token"
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def jira_time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000+0000")


def adf(text: str) -> dict[str, Any]:
    return {
        "type": "doc",
        "version": 1,
        "content": [{"type": "paragraph", "content": [{"type": "text", "text": text}]}],
    }


@dataclass
class Fault:
    status: int
    retry_after: str | None
    path: str | None


@dataclass
class FakeJira:
    time_zone: str = "Europe/Berlin"
    max_page: int = 50
    issues: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> raw IssueBean
    comments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    remote_links: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    schemes: dict[str, dict[str, Any]] = field(default_factory=dict)  # project -> PermissionScheme
    roles: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    security: dict[str, dict[str, Any]] = field(default_factory=dict)  # project -> SecurityScheme
    level_members: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # scheme id -> members
    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # bearer token -> User (with groups)
    group_members: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # group name -> users
    browsers: dict[str, set[str]] = field(default_factory=dict)  # key -> who may browse it (unset: anyone)
    members_page: int = 2  # GET /group/member answers this many per page (the client must follow isLast)
    inline_comments: int = 2  # comments embedded in search results before the client must page
    requests: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    clock: datetime = START
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tick(self) -> datetime:
        self.clock += timedelta(minutes=7, seconds=13)
        return self.clock

    def add_issue(self, key: str, summary: str, *, description: str = "", **fields: Any) -> dict[str, Any]:
        project = key.split("-")[0]
        raw = {
            "id": str(10000 + len(self.issues)),
            "key": key,
            "self": f"https://acme.example.test/rest/api/3/issue/{key}",
            "fields": {
                "summary": summary,
                "description": adf(description) if description else None,
                "status": {"name": "To Do", "id": "1"},
                "issuetype": {"name": "Task", "id": "3"},
                "project": {"key": project, "name": project, "id": "100"},
                "created": jira_time(self.clock),
                "updated": jira_time(self.tick()),
                "components": [],
                "labels": [],
                "fixVersions": [],
                "issuelinks": [],
                "security": None,
                **fields,
            },
        }
        self.issues[key] = raw
        return raw

    def touch(self, key: str, **fields: Any) -> None:
        self.issues[key]["fields"].update(fields)
        self.issues[key]["fields"]["updated"] = jira_time(self.tick())

    def add_comment(self, key: str, author: str, text: str, **extra: Any) -> None:
        """`extra`: e.g. `visibility={"type": "group", "value": "admins"}` or `jsdPublic=False` (an internal
        service-desk comment)."""
        found = self.comments.setdefault(key, [])
        found.append(
            {
                "id": str(500 + len(found)),
                "author": {"accountId": f"acc-{author}", "displayName": author},
                "body": adf(text),
                "created": jira_time(self.clock),
                "updated": jira_time(self.clock),
                **extra,
            }
        )

    def fail_next(
        self, n: int, status: int = 429, retry_after: str | None = "0", path: str | None = None
    ) -> None:
        self.faults.extend(Fault(status, retry_after, path) for _ in range(n))

    def paths(self, prefix: str = "") -> list[str]:
        return [p for _, p, _ in self.requests if p.startswith(prefix)]

    # --- handlers: (path, query) -> (status, body) ---

    def route(self, path: str, query: dict[str, list[str]], auth: str) -> tuple[int, Any, dict[str, str]]:
        user = self._auth(auth)
        if user is None:
            return 401, {"errorMessages": ["Client must be authenticated"]}, {}
        if path.endswith("/myself"):
            return 200, user, {}
        if path == "/rest/api/3/search/jql":
            return 200, self._search(query), {}
        if path == "/rest/api/3/group/member":
            return self._group_members(query)
        m = re.fullmatch(r"/rest/api/3/issue/([^/]+)", path)
        if m:
            key = m.group(1)
            allowed = self.browsers.get(key)
            if key not in self.issues or (allowed is not None and user.get("accountId") not in allowed):
                return (
                    404,
                    {"errorMessages": ["Issue does not exist or you do not have permission to see it."]},
                    {},
                )
            return 200, {"key": key, "fields": {"summary": self.issues[key]["fields"]["summary"]}}, {}
        m = re.fullmatch(r"/rest/api/3/issue/([^/]+)/(comment|remotelink)", path)
        if m:
            if m.group(1) not in self.issues:
                return (
                    404,
                    {"errorMessages": ["Issue does not exist or you do not have permission to see it."]},
                    {},
                )
            if m.group(2) == "remotelink":
                return 200, self.remote_links.get(m.group(1), []), {}
            return 200, self._comment_page(m.group(1), query), {}
        return self._project_route(path, query)

    def _project_route(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]]:
        m = re.fullmatch(
            r"/rest/api/3/project/([^/]+)(/permissionscheme|/issuesecuritylevelscheme|/role/\d+)?", path
        )
        if m and m.group(2) == "/permissionscheme":
            return 200, self.schemes[m.group(1)], {}
        if m and m.group(2) == "/issuesecuritylevelscheme":
            found = self.security.get(m.group(1))
            return (200, found, {}) if found else (404, {"errorMessages": ["No issue security scheme."]}, {})
        if m and m.group(2):
            return 200, self.roles[(m.group(1), m.group(2).rsplit("/", 1)[1])], {}
        if m:
            return 200, {"key": m.group(1), "lead": {"accountId": f"lead-{m.group(1).lower()}"}}, {}
        m = re.fullmatch(r"/rest/api/3/issuesecurityschemes/(\d+)/members", path)
        if m:
            levels = set(query.get("issueSecurityLevelId", []))
            values = [
                v for v in self.level_members.get(m.group(1), []) if str(v["issueSecurityLevelId"]) in levels
            ]
            return (
                200,
                {"startAt": 0, "maxResults": 50, "total": len(values), "isLast": True, "values": values},
                {},
            )
        return 404, {"errorMessages": ["Not found"]}, {}

    def _auth(self, header: str) -> dict[str, Any] | None:
        if header == "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode():
            return {"accountId": "bot", "emailAddress": EMAIL, "timeZone": self.time_zone}
        if header.startswith("Bearer ") and header[7:] in self.users:
            return self.users[header[7:]]
        return None

    def _search(self, query: dict[str, list[str]]) -> dict[str, Any]:
        jql = query.get("jql", [""])[0]
        projects = re.findall(r'"([A-Z]+)"', jql.split(")")[0])
        issues = [i for i in self.issues.values() if i["key"].split("-")[0] in projects]
        since = re.search(r'updated >= "([^"]+)"', jql)
        if since:
            local = datetime.strptime(since.group(1), "%Y-%m-%d %H:%M").replace(
                tzinfo=ZoneInfo(self.time_zone)
            )
            issues = [i for i in issues if _updated(i) >= local]
        number = lambda i: (i["key"].split("-")[0], int(i["key"].split("-")[1]))  # noqa: E731
        if "ORDER BY updated" in jql:
            issues.sort(key=lambda i: (_updated(i), number(i)))
        else:
            issues.sort(key=number)
        start = int(base64.b64decode(query["nextPageToken"][0])) if "nextPageToken" in query else 0
        size = min(int(query.get("maxResults", ["50"])[0]), self.max_page)
        page = [self._with_fields(i, query) for i in issues[start : start + size]]
        body: dict[str, Any] = {"issues": page, "isLast": start + size >= len(issues)}
        if not body["isLast"]:
            body["nextPageToken"] = base64.b64encode(str(start + size).encode()).decode()
        return body

    def _with_fields(self, issue: dict[str, Any], query: dict[str, list[str]]) -> dict[str, Any]:
        raw = copy.deepcopy(issue)
        wanted = set(query.get("fields", [""])[0].split(","))
        fields = raw.get("fields")
        if isinstance(fields, dict):
            comments = self.comments.get(issue["key"], [])
            fields["comment"] = {
                "comments": comments[: self.inline_comments],
                "total": len(comments),
                "startAt": 0,
            }
            raw["fields"] = {k: v for k, v in fields.items() if k in wanted}
        return raw

    def _group_members(self, query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]]:
        name = query.get("groupname", [""])[0].lower()
        groups = {k.lower(): v for k, v in self.group_members.items()}
        if name not in groups:
            return 404, {"errorMessages": [f"Group '{name}' does not exist."]}, {}
        members = groups[name]
        start = int(query.get("startAt", ["0"])[0])
        size = min(int(query.get("maxResults", ["50"])[0]), self.members_page)
        page = members[start : start + size]
        last = start + size >= len(members)
        body = {"startAt": start, "maxResults": size, "total": len(members), "isLast": last, "values": page}
        return 200, body, {}

    def _comment_page(self, key: str, query: dict[str, list[str]]) -> dict[str, Any]:
        comments = self.comments.get(key, [])
        start = int(query.get("startAt", ["0"])[0])
        size = min(int(query.get("maxResults", ["50"])[0]), 2)
        return {
            "startAt": start,
            "maxResults": size,
            "total": len(comments),
            "comments": comments[start : start + size],
        }


def _updated(issue: dict[str, Any]) -> datetime:
    return datetime.strptime(issue["fields"]["updated"], "%Y-%m-%dT%H:%M:%S.%f%z")


def _fault(fault: Fault) -> Reply:
    headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
    return fault.status, {"errorMessages": ["injected fault"]}, headers


@contextmanager
def serve_jira(fake: FakeJira) -> Iterator[str]:
    with serve_http(json_handler(fake, _fault)) as url:
        yield url
