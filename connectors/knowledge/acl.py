"""The one place that decides who may see what. Every read path of the store goes through these.

A document is visible when its ACL shares at least one principal with the caller's set. An empty ACL means
nobody, never everybody. Derived content (an edge, an alias, a cached summary) is visible only when every
document it came from is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement, Select, exists, select

from connectors.knowledge.tables import doc_acl


def can_see(principals: Iterable[str], acl: Iterable[str]) -> bool:
    return not set(principals).isdisjoint(acl)


def can_see_all(principals: Iterable[str], acls: Iterable[Iterable[str]]) -> bool:
    """Derived content: visible only if every one of its sources is."""
    held = set(principals)
    return all(not held.isdisjoint(acl) for acl in acls)


def chroma_where(principals: Iterable[str]) -> dict[str, Any]:
    """Chroma filter on the list-valued `acl` metadata.

    `$contains` is the only operator that matches inside a list field; `$in` or equality on a list silently
    match nothing. One principal needs a bare `$contains` (Chroma rejects a one-item `$or`).
    """
    held = sorted(set(principals))
    if not held:
        raise ValueError("a query needs at least one principal")
    clauses = [{"acl": {"$contains": p}} for p in held]
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def visible_doc_ids(principals: Iterable[str]) -> Select[Any]:
    """A SQL subquery of the document ids the principals may see, for `col.in_(...)` filters over whole
    tables (a graph build). For a handful of rows use `visible`: `IN (subquery)` materialises every visible id
    first, which grows with the corpus."""
    held = sorted(set(principals))
    return select(doc_acl.c.doc_id).where(doc_acl.c.principal.in_(held))


def visible(doc_id: ColumnElement[Any], principals: Iterable[str]) -> ColumnElement[bool]:
    """`doc_id` names a document the principals may see: a correlated EXISTS that probes the ACL's primary key
    per candidate row (0.5 ms for a question's 20 hits at 10k documents, against 10 ms for `IN (subquery)`)."""
    held = sorted(set(principals))
    return exists().where(doc_acl.c.doc_id == doc_id, doc_acl.c.principal.in_(held))
