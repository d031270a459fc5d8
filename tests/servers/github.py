"""A local GitHub REST emulator: repositories, issues and pull requests (page/per_page with `Link` headers,
`since` filtering, updated-ascending order), comments, PR commits, collaborators, teams, the current user;
faults, a request log and Bearer auth.

`FakeGitHub` holds the data; `serve_github(fake)` runs it on 127.0.0.1 and yields the API root URL.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from tests.servers.http import Reply, json_handler, serve_http

TOKEN = "gh-token"
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
Answer = tuple[int, Any, dict[str, str]]


def gh_time(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Fault:
    status: int
    headers: dict[str, str]
    path: str | None
    message: str = "injected fault"  # GitHub words a secondary rate limit only here


@dataclass
class Repo:
    meta: dict[str, Any]
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    commits: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    collaborators: list[dict[str, Any]] = field(default_factory=list)
    teams: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class FakeGitHub:
    max_page: int = 100
    repos: dict[str, Repo] = field(default_factory=dict)
    users: dict[str, tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]] = field(
        default_factory=dict
    )
    requests: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    clock: datetime = START
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def tick(self) -> str:
        self.clock += timedelta(minutes=5, seconds=11)
        return gh_time(self.clock)

    def add_repo(self, full: str, *, private: bool = False, visibility: str | None = None) -> Repo:
        owner, name = full.split("/")
        meta = {"id": len(self.repos) + 1, "name": name, "full_name": full, "owner": {"login": owner}}
        meta |= {"private": private, "visibility": visibility or ("private" if private else "public")}
        self.repos[full] = Repo(meta)
        return self.repos[full]

    def add_issue(
        self, full: str, number: int, title: str, body: str = "", *, pull: bool = False, **extra: Any
    ) -> None:
        owner_repo = self.repos[full]
        raw: dict[str, Any] = {
            "id": 1000 + number, "number": number, "title": title, "body": body, "state": "open",
            "html_url": f"https://github.com/{full}/{'pull' if pull else 'issues'}/{number}",
            "user": {"login": "octo", "id": 1}, "labels": [], "comments": 0,
            "created_at": gh_time(self.clock), "updated_at": self.tick(), "closed_at": None, **extra,
        }  # fmt: skip
        if pull:
            raw["pull_request"] = {"url": f"{self.url}/repos/{full}/pulls/{number}", "merged_at": None}
        owner_repo.issues[number] = raw

    def add_comment(self, full: str, number: int, login: str, body: str) -> None:
        found = self.repos[full].comments.setdefault(number, [])
        found.append(
            {
                "id": 900 + len(found),
                "body": body,
                "user": {"login": login},
                "created_at": gh_time(self.clock),
            }
        )
        self.repos[full].issues[number]["comments"] = len(found)

    def touch(self, full: str, number: int, **fields: Any) -> None:
        self.repos[full].issues[number].update(fields, updated_at=self.tick())

    def fail_next(
        self, n: int, status: int = 429, retry_after: str | None = "0", path: str | None = None
    ) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self.faults.extend(Fault(status, headers, path) for _ in range(n))

    def paths(self, prefix: str = "") -> list[str]:
        return [p for _, p, _ in self.requests if p.startswith(prefix)]

    def route(self, path: str, query: dict[str, list[str]], auth: str) -> Answer:
        if not auth.startswith("Bearer ") or (auth[7:] != TOKEN and auth[7:] not in self.users):
            return 401, {"message": "Bad credentials"}, {}
        user = self.users.get(auth[7:])
        if path.startswith("/user"):
            if user is None:
                return 200, {"login": "sleuth-bot"}, {}
            return self._list(
                path, query, {"/user": None, "/user/teams": user[1], "/user/orgs": user[2]}[path], user[0]
            )
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if not m or m.group(1) not in self.repos:
            return 404, {"message": "Not Found"}, {}
        repo, rest = self.repos[m.group(1)], m.group(2) or ""
        if rest == "":
            return 200, repo.meta, {}
        if rest in ("/collaborators", "/teams"):
            return self._list(path, query, repo.collaborators if rest == "/collaborators" else repo.teams)
        if rest == "/issues":
            return self._list(path, query, self._issues(repo, query))
        one = re.fullmatch(r"/issues/(\d+)", rest)
        if one:
            readers = {c.get("login") for c in repo.collaborators}
            hidden = repo.meta.get("private") and user is not None and user[0].get("login") not in readers
            if int(one.group(1)) not in repo.issues or hidden:
                return 404, {"message": "Not Found"}, {}
            return 200, repo.issues[int(one.group(1))], {}
        n = re.fullmatch(r"/(issues|pulls)/(\d+)/(comments|commits)", rest)
        if n and int(n.group(2)) in repo.issues:
            source = repo.comments if n.group(3) == "comments" else repo.commits
            return self._list(path, query, source.get(int(n.group(2)), []))
        return 404, {"message": "Not Found"}, {}

    def _issues(self, repo: Repo, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        issues = list(repo.issues.values())
        if "since" in query:
            issues = [i for i in issues if i.get("updated_at", "") >= query["since"][0]]
        issues.sort(key=lambda i: (str(i.get("updated_at")), str(i.get("number"))))
        return issues

    def _list(
        self, path: str, query: dict[str, list[str]], items: list[Any] | None, single: Any = None
    ) -> Answer:
        if items is None:
            return 200, single, {}
        page = int(query.get("page", ["1"])[0])
        size = min(int(query.get("per_page", ["30"])[0]), self.max_page)
        headers: dict[str, str] = {}
        if page * size < len(items):
            params = {k: v[0] for k, v in query.items()} | {"page": str(page + 1)}
            headers["Link"] = f'<{self.url}{path}?{urlencode(params)}>; rel="next"'
        return 200, items[(page - 1) * size : page * size], headers


def _fault(fault: Fault) -> Reply:
    return fault.status, {"message": fault.message}, fault.headers


@contextmanager
def serve_github(fake: FakeGitHub) -> Iterator[str]:
    with serve_http(json_handler(fake, _fault, content_type="application/json; charset=utf-8")) as url:
        fake.url = url
        yield url
