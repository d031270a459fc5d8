"""Who may read a Confluence page: the space's read grants, narrowed by view restrictions on the page and its
ancestors (who passes all of them: `sources.access.intersect`, listing group members where the checks name
different groups). One instance per run; space grants, group names, restrictions and members are cached.

A restriction entry that maps to no principal leaves the page to nobody, a space grant that does is left out;
`failures` names both for the run's report (`sources.access.Mapped`)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from connectors.base import Failure, Forbidden, account_principal, group_principal, user_principal
from connectors.sources.access import UNMAPPED, UNMAPPED_GRANT, Mapped
from connectors.sources.confluence.client import ConfluenceClient
from connectors.sources.confluence.mapping import (
    doc_id,
    effective_acl,
    restriction_principals,
    space_read_principals,
)
from connectors.sources.rest import RequestRejected

log = logging.getLogger(__name__)


class ConfluencePermissions:
    def __init__(self, client: ConfluenceClient, source: str) -> None:
        self._client, self._source = client, source
        self._spaces: dict[str, Mapped] = {}
        self._restrictions: dict[str, Mapped | None] = {}  # None: not restricted
        self._pages: dict[str, Mapped] = {}  # page -> its and its ancestors' restriction entries, from `acl`
        self._told: set[str] = set()  # spaces whose unmapped grants were reported this run
        self._unnamed: set[str] = set()  # group ids whose name could not be read
        self._groups: dict[str, str] = {}  # id -> name
        self._group_ids: dict[str, str] = {}  # group principal -> id
        self._members: dict[str, set[str]] = {}

    def acl(self, space_id: str, page_id: str, ancestors: list[str]) -> frozenset[str]:
        levels = [self._restricted(content_id) for content_id in [page_id, *ancestors]]
        entries = Mapped()
        for level in levels:
            entries |= level or Mapped()
        self._pages[page_id] = entries
        restricted = [level.restricted if level is not None else None for level in levels]
        return effective_acl(self._space(space_id).principals, restricted, self._group_members)

    def failures(self, space_id: str, page_id: str) -> Iterator[Failure]:
        """After `acl`: the unmapped restriction entries of the page and its ancestors (it is visible to no
        one), and once per run its space's unmapped read grants."""
        found = self._pages.get(page_id, Mapped())
        if found.unmapped:
            yield Failure(id=doc_id(self._source, page_id), reason=UNMAPPED, detail=found.detail())
        space = self._spaces.get(space_id)
        if space is not None and space.unmapped and space_id not in self._told:
            self._told.add(space_id)
            yield Failure(id=f"{self._source}:space-{space_id}", reason=UNMAPPED_GRANT, detail=space.detail())

    def _space(self, space_id: str) -> Mapped:
        if space_id not in self._spaces:
            assignments = self._client.space_permissions(space_id)
            for item in assignments:
                principal = item.get("principal") or {}
                if str(principal.get("type", "")).lower() == "group" and principal.get("id"):
                    self._group_name(str(principal["id"]))
            self._spaces[space_id] = space_read_principals(assignments, self._groups, self._source)
        return self._spaces[space_id]

    def _group_name(self, group_id: str) -> None:
        """Learns a group's name from its id; one that cannot be read stays unnamed (so: unmapped)."""
        if group_id not in self._groups and group_id not in self._unnamed:
            try:
                found = self._client.group(group_id)
            except (Forbidden, RequestRejected):
                log.warning("confluence group unreadable", extra={"group_id": group_id})
                self._unnamed.add(group_id)
                return
            name = found.get("name") if isinstance(found, dict) else None
            if name:
                self._groups[group_id] = str(name)
                self._group_ids[group_principal(self._source, str(name))] = group_id

    def _restricted(self, content_id: str) -> Mapped | None:
        if content_id not in self._restrictions:
            body = self._client.read_restrictions(content_id)
            for group in ((body.get("restrictions") or {}).get("group") or {}).get("results") or []:
                if not isinstance(group, dict) or not group.get("id"):
                    continue
                if group.get("name"):
                    self._group_ids[group_principal(self._source, str(group["name"]))] = str(group["id"])
                else:  # given by id only: its name is what the principal is made of
                    self._group_name(str(group["id"]))
            self._restrictions[content_id] = restriction_principals(body, self._source, self._groups)
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
