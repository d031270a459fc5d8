"""Who may read a Confluence page: the space's read grants, narrowed by view restrictions on the page and its
ancestors (who passes all of them: `sources.access.intersect`, listing group members where the checks name
different groups). One instance per run; space grants, group names, restrictions and members are cached."""

from __future__ import annotations

import logging

from connectors.base import Forbidden, account_principal, group_principal, user_principal
from connectors.sources.confluence.client import ConfluenceClient
from connectors.sources.confluence.mapping import effective_acl, restriction_principals, space_read_principals
from connectors.sources.rest import RequestRejected

log = logging.getLogger(__name__)


class ConfluencePermissions:
    def __init__(self, client: ConfluenceClient, source: str) -> None:
        self._client, self._source = client, source
        self._spaces: dict[str, set[str]] = {}
        self._restrictions: dict[str, set[str]] = {}
        self._groups: dict[str, str] = {}  # id -> name
        self._group_ids: dict[str, str] = {}  # group principal -> id
        self._members: dict[str, set[str]] = {}

    def acl(self, space_id: str, page_id: str, ancestors: list[str]) -> frozenset[str]:
        levels = [self._restricted(content_id) for content_id in [page_id, *ancestors]]
        return effective_acl(self._space(space_id), levels, self._group_members)

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
                self._group_ids[group_principal(self._source, str(name))] = group_id

    def _restricted(self, content_id: str) -> set[str]:
        if content_id not in self._restrictions:
            body = self._client.read_restrictions(content_id)
            for group in ((body.get("restrictions") or {}).get("group") or {}).get("results") or []:
                if group.get("name") and group.get("id"):
                    self._group_ids[group_principal(self._source, str(group["name"]))] = str(group["id"])
            self._restrictions[content_id] = restriction_principals(body, self._source)
        return self._restrictions[content_id]

    def _group_members(self, group: str) -> set[str]:
        """A group principal's members as user principals; unknown (empty) when its id or members can't be read."""
        if group not in self._members:
            found: set[str] = set()
            group_id = self._group_ids.get(group)
            try:
                for user in self._client.group_members(group_id) if group_id else []:
                    if isinstance(user, dict) and user.get("accountId"):
                        found.add(account_principal(self._source, str(user["accountId"])))
                        if user.get("email"):
                            found.add(user_principal(str(user["email"])))
            except (Forbidden, RequestRejected):
                log.warning("confluence group members unreadable", extra={"group": group})
            self._members[group] = found
        return self._members[group]
