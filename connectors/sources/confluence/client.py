"""The only code that speaks HTTP to Confluence Cloud: REST v2 for pages and spaces, v1 where v2 has no
equivalent (page restrictions, group names, the current user's groups)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from connectors.sources.rest import (
    Params,
    SourceClient,
)

V2 = "/wiki/api/v2"
V1 = "/wiki/rest/api"
HEADERS = {"Accept": "application/json"}


@dataclass(frozen=True)
class PageBatch:
    pages: list[Any]  # raw PageBulk items; mapping validates each one
    next_url: str | None  # relative URL of the next batch (`_links.next`)


def _next(body: Any) -> str | None:
    links = body.get("_links") if isinstance(body, dict) else None
    found = links.get("next") if isinstance(links, dict) else None
    return found if isinstance(found, str) and found else None


LIST_LIMIT = 200  # users/groups per page of a restriction or a group's members (Confluence caps it lower)


class ConfluenceClient(SourceClient):
    label = "Confluence"

    def _all(self, url: str, params: Params | None = None) -> list[Any]:
        """Every `results` item of a v2 listing, following `_links.next`."""
        found: list[Any] = []
        next_url: str | None = url
        while next_url:
            body = self._rest.get_json(next_url, params)
            found.extend(body.get("results") or [])
            next_url, params = _next(body), None
        return found

    def spaces(self, keys: list[str]) -> list[Any]:
        return self._all(f"{V2}/spaces", {"keys": ",".join(keys), "limit": 250})

    def pages(
        self, space_ids: list[str], *, limit: int, start: str | None = None, body: bool = True
    ) -> Iterator[PageBatch]:
        """Current pages of the spaces, most recently modified first, one batch per request (`body=False`:
        without their storage bodies, for listings)."""
        url: str | None = start or f"{V2}/pages"
        params: Params | None = None
        if start is None:
            params = {
                "space-id": ",".join(space_ids),
                "sort": "-modified-date",
                "status": "current",
                "limit": limit,
            } | ({"body-format": "storage"} if body else {})
        while url:
            body = self._rest.get_json(url, params)
            results = body.get("results") if isinstance(body, dict) else None
            url, params = _next(body), None
            yield PageBatch(results if isinstance(results, list) else [], url)

    def page_ids(self, space_ids: list[str], *, limit: int) -> Iterator[str]:
        for batch in self.pages(space_ids, limit=limit, body=False):
            for page in batch.pages:
                if isinstance(page, dict) and page.get("id") is not None:
                    yield str(page["id"])

    def labels(self, page_id: str) -> list[Any]:
        return self._all(f"{V2}/pages/{page_id}/labels", {"limit": 250})

    def ancestors(self, page_id: str) -> list[Any]:
        return self._all(f"{V2}/pages/{page_id}/ancestors", {"limit": 250})

    def space_permissions(self, space_id: str) -> list[Any]:
        return self._all(f"{V2}/spaces/{space_id}/permissions", {"limit": 250})

    def read_restrictions(self, content_id: str) -> Any:
        """The read restriction's users and groups, every page of both lists merged into one answer."""
        users: list[Any] = []
        groups: list[Any] = []
        start = 0
        while True:
            params = {"start": start, "limit": LIST_LIMIT}
            body = self._rest.get_json(f"{V1}/content/{content_id}/restriction/byOperation/read", params)
            found = (body.get("restrictions") or {}) if isinstance(body, dict) else {}
            more = False
            for name, into in (("user", users), ("group", groups)):
                listed = found.get(name) or {}
                page = listed.get("results") or []
                into.extend(page)
                more |= bool(page) and (
                    bool((listed.get("_links") or {}).get("next"))
                    or len(page) >= int(listed.get("limit") or LIST_LIMIT)
                )
                start_step = int(listed.get("limit") or LIST_LIMIT)
            if not more:
                return {"restrictions": {"user": {"results": users}, "group": {"results": groups}}}
            start += start_step

    def group_members(self, group_id: str) -> list[Any]:
        """Every member of a group, by the group's id (`membersByGroupId`, followed page by page)."""
        found: list[Any] = []
        while True:
            params = {"start": len(found), "limit": LIST_LIMIT}
            body = self._rest.get_json(f"{V1}/group/{group_id}/membersByGroupId", params)
            page = (body.get("results") or []) if isinstance(body, dict) else []
            found.extend(page)
            if not page or not (body.get("_links") or {}).get("next"):
                return found

    def group(self, group_id: str) -> Any:
        return self._rest.get_json(f"{V1}/group/by-id", {"id": group_id})

    def page_opens_as(self, access_token: str, page_id: str, *, timeout_s: float) -> bool:
        """Whether the token's user may view the page now (Confluence answers 404 when they may not)."""
        return self.opens_as(access_token, f"{V2}/pages/{page_id}", timeout_s=timeout_s)

    def user_as(self, access_token: str) -> tuple[Any, list[Any]]:
        """The linked user (`/user/current`) and their groups (`/user/memberof`), asked with their token."""
        rest = self._as_user(access_token)
        try:
            me = rest.get_json(f"{V1}/user/current")
            groups: list[Any] = []
            while True:
                params = {"accountId": str(me.get("accountId", "")), "start": len(groups), "limit": 200}
                body = rest.get_json(f"{V1}/user/memberof", params)
                page = body.get("results") or []
                groups.extend(page)
                if not page or len(page) < int(body.get("limit", 200)):
                    return me, groups
        finally:
            rest.close()
