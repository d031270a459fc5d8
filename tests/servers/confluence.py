"""A local Confluence Cloud emulator: REST v2 pages/spaces (cursor paging via `_links.next` and `Link`),
the v1 endpoints v2 lacks (read restrictions, group by id, current user and groups), faults and a request log.

`FakeConfluence` holds the data; `serve_confluence(fake)` runs it on 127.0.0.1 and yields the site URL.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from tests.servers.http import Reply, json_handler, serve_http

EMAIL, TOKEN = "bot@acme.io", "wiki-token"
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
Answer = tuple[int, Any, dict[str, str]]


@dataclass
class Fault:
    status: int
    retry_after: str | None
    path: str | None


@dataclass
class FakeConfluence:
    max_page: int = 25
    spaces: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> SpaceBulk
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> PageBulk (with body.storage)
    labels: dict[str, list[str]] = field(default_factory=dict)
    space_permissions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    restrictions: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)  # id -> user/group
    groups: dict[str, str] = field(default_factory=dict)  # group id -> name
    group_members: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # group id -> users
    list_page: int = 2  # restrictions and group members answer this many per page, whatever `limit` asks
    users: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = field(
        default_factory=dict
    )  # token -> user
    requests: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    clock: datetime = START
    lock: threading.Lock = field(default_factory=threading.Lock)
    site: str = ""

    def _window(self, query: dict[str, list[str]]) -> tuple[int, int]:
        start = int(query.get("start", ["0"])[0])
        return start, min(int(query.get("limit", ["200"])[0]), self.list_page)

    @staticmethod
    def _page(items: list[dict[str, Any]], start: int, limit: int) -> dict[str, Any]:
        page = items[start : start + limit]
        links = {"next": f"?start={start + limit}&limit={limit}"} if start + limit < len(items) else {}
        return {"results": page, "start": start, "limit": limit, "size": len(page), "_links": links}

    def tick(self) -> str:
        self.clock += timedelta(minutes=3, seconds=7)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def add_space(self, space_id: str, key: str) -> None:
        self.spaces[space_id] = {"id": space_id, "key": key, "name": f"{key} space", "type": "global",
                                 "status": "current", "_links": {"webui": f"/spaces/{key}"}}  # fmt: skip

    def add_page(self, page_id: str, space_id: str, title: str, body: str, parent: str | None = None) -> None:
        key = self.spaces[space_id]["key"]
        self.pages[page_id] = {
            "id": page_id,
            "status": "current",
            "title": title,
            "spaceId": space_id,
            "parentId": parent,
            "parentType": "page" if parent else None,
            "authorId": "acc-author",
            "createdAt": self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "version": {"number": 1, "createdAt": self.tick(), "authorId": "acc-author", "minorEdit": False},
            "body": {"storage": {"representation": "storage", "value": body}},
            "_links": {"webui": f"/spaces/{key}/pages/{page_id}/{title.replace(' ', '+')}"},
        }

    def edit(self, page_id: str, body: str) -> None:
        page = self.pages[page_id]
        page["body"]["storage"]["value"] = body
        page["version"] = {
            **page["version"],
            "number": page["version"]["number"] + 1,
            "createdAt": self.tick(),
        }

    def fail_next(
        self, n: int, status: int = 429, retry_after: str | None = "0", path: str | None = None
    ) -> None:
        self.faults.extend(Fault(status, retry_after, path) for _ in range(n))

    def paths(self, prefix: str = "") -> list[str]:
        return [p for _, p, _ in self.requests if p.startswith(prefix)]

    def route(self, path: str, query: dict[str, list[str]], auth: str) -> Answer:
        user = self._auth(auth)
        if user is None:
            return 401, {"message": "Unauthorized"}, {}
        if path == "/wiki/api/v2/pages":
            return self._pages(query)
        if path == "/wiki/api/v2/spaces":
            keys = set(query.get("keys", [""])[0].split(","))
            return 200, {"results": [s for s in self.spaces.values() if s["key"] in keys], "_links": {}}, {}
        m = re.fullmatch(r"/wiki/api/v2/pages/(\d+)", path)
        if m:
            if m.group(1) not in self.pages or not self.may_view(user, m.group(1)):
                return 404, {"message": "Page not found"}, {}
            return 200, {k: v for k, v in self.pages[m.group(1)].items() if k != "body"}, {}
        m = re.fullmatch(r"/wiki/api/v2/(pages|spaces)/(\d+)/(labels|ancestors|permissions)", path)
        if m:
            return self._sub(m.group(2), m.group(3))
        m = re.fullmatch(r"/wiki/rest/api/content/(\d+)/restriction/byOperation/read", path)
        if m:
            found = self.restrictions.get(m.group(1), {})
            start, limit = self._window(query)
            body = {
                "operation": "read",
                "restrictions": {k: self._page(found.get(k, []), start, limit) for k in ("user", "group")},
            }
            return 200, body, {}
        m = re.fullmatch(r"/wiki/rest/api/group/([^/]+)/membersByGroupId", path)
        if m:
            if m.group(1) not in self.group_members:
                return 404, {"message": "group not found"}, {}
            start, limit = self._window(query)
            return 200, self._page(self.group_members[m.group(1)], start, limit), {}
        if path == "/wiki/rest/api/group/by-id":
            group_id = query.get("id", [""])[0]
            if group_id not in self.groups:
                return 404, {"message": "group not found"}, {}
            return 200, {"type": "group", "name": self.groups[group_id], "id": group_id}, {}
        if path == "/wiki/rest/api/user/current":
            return 200, user[0], {}
        if path == "/wiki/rest/api/user/memberof":
            return 200, {"results": user[1], "start": 0, "limit": 200, "size": len(user[1])}, {}
        return 404, {"message": "Not found"}, {}

    def may_view(self, user: tuple[dict[str, Any], list[dict[str, Any]]], page_id: str) -> bool:
        """Confluence's view rule for a user: read permission on the space, and a place on every read
        restriction of the page and its ancestors (by account, or a group by id or name). The bot reads all."""
        me, groups = user
        account = me.get("accountId")
        if account == "bot":
            return True
        group_ids = {g.get("id") for g in groups} | {g.get("name") for g in groups}
        page = self.pages[page_id]
        space = [
            a["principal"]
            for a in self.space_permissions.get(page["spaceId"], [])
            if a["operation"] == {"key": "read", "targetType": "space"}
        ]
        if not any(p.get("id") in ({account} if p.get("type") == "user" else group_ids) for p in space):
            return False
        chain, parent = [page_id], page.get("parentId")
        while parent:
            chain.append(parent)
            parent = self.pages[parent].get("parentId") if parent in self.pages else None
        for ident in chain:
            found = self.restrictions.get(ident) or {}
            if not (found.get("user") or found.get("group")):
                continue
            users = {u.get("accountId") for u in found.get("user", [])}
            named = {g.get("id") for g in found.get("group", [])} | {
                g.get("name") for g in found.get("group", [])
            }
            if account not in users and not (named - {None}) & group_ids:
                return False
        return True

    def _auth(self, header: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        if header == "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode():
            return {"accountId": "bot", "email": EMAIL}, []
        if header.startswith("Bearer "):
            return self.users.get(header[7:])
        return None

    def _pages(self, query: dict[str, list[str]]) -> Answer:
        space_ids = set(query.get("space-id", [""])[0].split(","))
        pages = [p for p in self.pages.values() if p["spaceId"] in space_ids and p["status"] == "current"]
        if query.get("sort", [""])[0] == "-modified-date":
            pages.sort(key=lambda p: (p["version"]["createdAt"], int(p["id"])), reverse=True)
        start = int(base64.b64decode(query["cursor"][0])) if "cursor" in query else 0
        size = min(int(query.get("limit", ["25"])[0]), self.max_page)
        results = pages[start : start + size]
        if query.get("body-format", [""])[0] != "storage":
            results = [{k: v for k, v in p.items() if k != "body"} for p in results]
        links: dict[str, str] = {"base": f"{self.site}/wiki"}
        headers: dict[str, str] = {}
        if start + size < len(pages):
            params = {k: v[0] for k, v in query.items() if k != "cursor"}
            params["cursor"] = base64.b64encode(str(start + size).encode()).decode()
            links["next"] = "/wiki/api/v2/pages?" + urlencode(params)
            headers["Link"] = f'<{links["next"]}>; rel="next"'
        return 200, {"results": results, "_links": links}, headers

    def _sub(self, ident: str, what: str) -> Answer:
        if what == "permissions":
            return 200, {"results": self.space_permissions.get(ident, []), "_links": {}}, {}
        if ident not in self.pages:
            return 404, {"message": "Page not found"}, {}
        if what == "labels":
            labels = [
                {"id": str(i), "name": n, "prefix": "global"}
                for i, n in enumerate(self.labels.get(ident, []))
            ]
            return 200, {"results": labels, "_links": {}}, {}
        chain: list[dict[str, str]] = []
        parent = self.pages[ident].get("parentId")
        while parent:
            chain.insert(0, {"id": parent, "type": "page"})
            parent = self.pages[parent].get("parentId") if parent in self.pages else None
        return 200, {"results": chain, "_links": {}}, {}


def _fault(fault: Fault) -> Reply:
    headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
    return fault.status, {"message": "injected fault"}, headers


@contextmanager
def serve_confluence(fake: FakeConfluence) -> Iterator[str]:
    with serve_http(json_handler(fake, _fault)) as url:
        fake.site = url
        yield url
