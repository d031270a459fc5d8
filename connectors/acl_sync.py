"""Permission sync: the current ACL of every indexed document, straight from the source, without its content.

Content sync re-reads only what changed, and at most sources a permission change (a repository made private, a
restriction added to a page, a user removed from a project role) changes no document, so the index would keep
the old, wider ACL until the text changes. `sync_permissions` asks a connector that can (`PermissionLister`)
for every document's current ACL and rewrites the ones that differ, in SQL (lexical index, reads, graph) and in
Chroma's chunk metadata, without re-embedding. It runs on a shorter interval than content sync
(`SLEUTH_PERMISSION_SYNC_INTERVAL_S`) and from `sleuth sync --permissions`.

A connector whose documents take their container's ACL (`IndexedPermissionLister`: a Slack channel's threads)
is handed the ids indexed from it instead of listing its own.

A document the listing does not mention keeps its ACL (content sync prunes deleted ones); a listing that stops
with a `ConnectorError` still applies what it read before (each ACL it read is current), and says so.

The failures a listing yields (an ACL entry Sleuth cannot map, whose document is then visible to no one) are
kept in the ledger beside the content sync's (`SyncLedger.replace_failures`, under `permissions:<source>`),
so `sleuth sources failures` shows them until a later permission sync no longer finds them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from connectors.base import ConnectorError, CurrentAcl, Failure, IndexedPermissionLister, PermissionLister
from connectors.knowledge.store import KnowledgeStore
from connectors.sync import RunSummary

log = logging.getLogger(__name__)

BATCH = 200  # ACLs written together


@dataclass
class PermissionSummary(RunSummary):
    """Permission sync: `partial` on failures or a listing stopped midway, `unsupported` (still ok) for a
    connector that cannot list ACLs."""

    checked: int = 0  # documents whose current ACL was read
    changed: int = 0  # of those, indexed with another ACL and rewritten

    @property
    def ok(self) -> bool:
        return self.status in {"ok", "unsupported"}


def sync_permissions(store: KnowledgeStore, connector: object) -> PermissionSummary:
    name = str(getattr(connector, "name", "?"))
    summary = PermissionSummary(source=name)
    if not isinstance(connector, PermissionLister | IndexedPermissionLister):
        summary.status = "unsupported"  # e.g. a folder: its content sync re-reads every file's ACL anyway
        return summary
    started = time.perf_counter()
    stored = store.acls(name)
    listed = (
        connector.acls() if isinstance(connector, PermissionLister) else connector.acls_of(sorted(stored))
    )
    pending: dict[str, frozenset[str]] = {}

    def flush() -> None:
        if pending:
            summary.changed += store.set_acls(dict(pending))
            pending.clear()

    try:
        for item in listed:
            if isinstance(item, Failure):
                summary.failed += 1
                summary.failures.append({"id": item.id, "reason": item.reason, "detail": item.detail})
                continue
            if not isinstance(item, CurrentAcl):
                continue
            summary.checked += 1
            if item.id in stored and stored[item.id] != item.acl:
                pending[item.id] = item.acl
                if len(pending) >= BATCH:
                    flush()
        flush()
        if summary.failed:
            summary.status = "partial"
    except ConnectorError as exc:
        flush()
        summary.status = "partial" if summary.checked else "error"
        summary.error = str(exc)
        log.warning("permission sync stopped", extra={"source": name, "error": type(exc).__name__})
    summary.seconds = round(time.perf_counter() - started, 3)
    store.ledger.replace_failures(f"permissions:{name}", summary.failures, keep=summary.error is not None)
    store.ledger.record_permissions(name, summary.status, summary.as_dict())
    log.info(
        "permission sync finished",
        extra={
            "source": name,
            "checked": summary.checked,
            "changed": summary.changed,
            "status": summary.status,
        },
    )
    return summary
