"""Confluence Cloud connector: pages newest-first down to the last run's mark, pruning by listing, principals.

Cursor: `{"since": <Watermark>}` between runs; mid-run checkpoints add `top` (the newest page seen in this
run) and `next` (the listing URL to resume from), so a resumed run neither repeats nor skips a batch.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from connectors.base import Checkpoint, CurrentAcl, Cursor, Failure, Pulled, SourceDoc
from connectors.sources.confluence.client import ConfluenceClient
from connectors.sources.confluence.config import ConfluenceConfig
from connectors.sources.confluence.mapping import Label, Page, Space, doc_id, identity_principals, page_to_doc
from connectors.sources.confluence.permissions import ConfluencePermissions
from connectors.sources.rest import OwnsClient, RequestRejected, Watermark, bad_fields

log = logging.getLogger(__name__)


class ConfluenceConnector(OwnsClient):
    kind = "confluence"
    config_model = ConfluenceConfig
    client_class = ConfluenceClient

    def __init__(self, config: ConfluenceConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._spaces: dict[str, Space] | None = None

    def pull(self, cursor: Cursor | None) -> Pulled:
        state = cursor or {}
        since = Watermark.load(state.get("since"))
        top = Watermark.load(state.get("top"))
        permissions = ConfluencePermissions(self._client, self.name)
        counts: Counter[str] = Counter()
        spaces = self._space_map()
        batches = self._client.pages(list(spaces), limit=self._config.page_size, start=state.get("next"))
        for batch in batches:
            reached_mark = False
            for raw in batch.pages:
                page = self._validate(raw)
                if isinstance(page, Failure):
                    counts["Failure"] += 1
                    yield page
                    continue
                if since.at is not None and page.version.createdAt < since.at:
                    reached_mark = True  # newest first: everything after this is older still
                    break
                if since.seen(page.version.createdAt, page.id):
                    continue
                item = self._item(page, spaces, permissions)
                top.advance(page.version.createdAt, page.id)
                counts[type(item).__name__] += 1
                yield item
                if isinstance(item, SourceDoc):
                    yield from permissions.failures(page.spaceId, page.id)
            if reached_mark or batch.next_url is None:
                break
            yield Checkpoint(cursor={"since": since.dump(), "top": top.dump(), "next": batch.next_url})
        log.info("confluence pull finished", extra={"connector": self.name, **counts})
        return {"since": _newer(since, top).dump()}

    def list_ids(self) -> Iterator[str]:
        for page_id in self._client.page_ids(list(self._space_map()), limit=self._config.page_size):
            yield doc_id(self.name, page_id)

    def acls(self) -> Iterator[CurrentAcl | Failure]:
        """Every current page's ACL (space grants, its own and its ancestors' restrictions), bodies unread."""
        permissions = ConfluencePermissions(self._client, self.name)
        for batch in self._client.pages(list(self._space_map()), limit=self._config.page_size, body=False):
            for raw in batch.pages:
                if not isinstance(raw, dict) or raw.get("id") is None or raw.get("spaceId") is None:
                    continue
                page_id = str(raw["id"])
                try:
                    ancestors = [
                        str(a["id"])
                        for a in self._client.ancestors(page_id)
                        if isinstance(a, dict) and a.get("id")
                    ]
                    acl = permissions.acl(str(raw["spaceId"]), page_id, ancestors)
                except RequestRejected as exc:
                    yield Failure(id=doc_id(self.name, page_id), reason=str(exc))
                    continue
                yield CurrentAcl(id=doc_id(self.name, page_id), acl=acl)
                yield from permissions.failures(str(raw["spaceId"]), page_id)

    def _token_principals(self, access_token: str) -> set[str]:
        return identity_principals(*self._client.user_as(access_token), self.name)

    def can_open(self, doc_id: str, access_token: str, *, timeout_s: float) -> bool:
        """The live check (`connectors.base.LiveAccess`): the page asked for with the user's own token."""
        page = doc_id.removeprefix(f"{self.name}:page-")
        if not page.isdigit():
            raise ValueError("not a page of this source")
        return bool(self._client.page_opens_as(access_token, page, timeout_s=timeout_s))

    def _space_map(self) -> dict[str, Space]:
        if self._spaces is None:
            spaces = [Space.model_validate(s) for s in self._client.spaces(self._config.spaces)]
            self._spaces = {space.id: space for space in spaces}
        return self._spaces

    def _validate(self, raw: Any) -> Page | Failure:
        try:
            return Page.model_validate(raw)
        except ValidationError as exc:
            ident = raw.get("id") if isinstance(raw, dict) else None
            log.warning("confluence page malformed", extra={"connector": self.name, "page": ident})
            return Failure(
                id=doc_id(self.name, str(ident or "unknown")), reason=f"malformed page: {bad_fields(exc)}"
            )

    def _item(
        self, page: Page, spaces: dict[str, Space], permissions: ConfluencePermissions
    ) -> SourceDoc | Failure:
        try:
            labels = [Label.model_validate(label) for label in self._client.labels(page.id)]
            ancestors = [
                str(a["id"]) for a in self._client.ancestors(page.id) if isinstance(a, dict) and a.get("id")
            ]
            acl = permissions.acl(page.spaceId, page.id, ancestors)
        except RequestRejected as exc:  # e.g. deleted between the listing and the follow-up calls
            log.warning("confluence page unreadable", extra={"connector": self.name, "page": page.id})
            return Failure(id=doc_id(self.name, page.id), reason=str(exc))
        except ValidationError:
            return Failure(id=doc_id(self.name, page.id), reason="malformed labels")
        return page_to_doc(
            page,
            source=self.name,
            site=self._config.base_url,
            space=spaces.get(page.spaceId),
            labels=labels,
            ancestors=ancestors,
            acl=acl,
        )


def _newer(a: Watermark, b: Watermark) -> Watermark:
    if a.at is None or (b.at is not None and b.at > a.at):
        return b
    if b.at == a.at:
        return Watermark(a.at, a.ids | b.ids)
    return a
