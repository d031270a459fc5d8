"""Who may read a Confluence page: the space's read grants, narrowed by view restrictions on the page and its
ancestors. One instance per run; space grants, group names and restrictions are fetched once and cached."""

from __future__ import annotations

from connectors.sources.confluence.client import ConfluenceClient
from connectors.sources.confluence.mapping import effective_acl, restriction_principals, space_read_principals


class ConfluencePermissions:
    def __init__(self, client: ConfluenceClient, source: str) -> None:
        self._client, self._source = client, source
        self._spaces: dict[str, set[str]] = {}
        self._restrictions: dict[str, set[str]] = {}
        self._groups: dict[str, str] = {}

    def acl(self, space_id: str, page_id: str, ancestors: list[str]) -> frozenset[str]:
        levels = [self._restricted(content_id) for content_id in [page_id, *ancestors]]
        return effective_acl(self._space(space_id), levels)

    def _space(self, space_id: str) -> set[str]:
        if space_id not in self._spaces:
            assignments = self._client.space_permissions(space_id)
            for item in assignments:
                principal = item.get("principal") or {}
                if str(principal.get("type", "")).lower() == "group" and principal.get("id"):
                    self._group_name(str(principal["id"]))
            self._spaces[space_id] = space_read_principals(assignments, self._groups, self._source)
        return self._spaces[space_id]

    def _group_name(self, group_id: str) -> None:
        if group_id not in self._groups:
            name = self._client.group(group_id).get("name")
            if name:
                self._groups[group_id] = str(name)

    def _restricted(self, content_id: str) -> set[str]:
        if content_id not in self._restrictions:
            self._restrictions[content_id] = restriction_principals(
                self._client.read_restrictions(content_id), self._source
            )
        return self._restrictions[content_id]
