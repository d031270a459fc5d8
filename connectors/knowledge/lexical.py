"""BM25 over the same chunks, in SQLite FTS5. Exact ticket keys and names matter in this domain, and dense
retrieval alone misses them. The ACL filter is part of the SQL, so ranking only ever sees visible chunks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, text

from connectors.text import TICKET_KEY, content_terms, tokens

FTS_TABLE = "chunks_fts"
TITLE_WEIGHT = 1.5  # a term in the title says more than the same term in the body
MAX_QUERY_TERMS = 32

CREATE_FTS = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} "
    "USING fts5(title, body, tokenize = 'porter unicode61 remove_diacritics 2')"
)


@dataclass(frozen=True)
class LexicalHit:
    chunk_id: str
    doc_id: str
    score: float  # BM25, higher is better


# The index's own terms, per row: document frequencies are counted on the stems FTS stored. Matching a stem
# through MATCH would stem it again ("reimburs" -> "reimbur") and find nothing for some words.
CREATE_VOCAB = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE}_terms USING fts5vocab({FTS_TABLE}, 'instance')"
)


def create(conn: Connection) -> None:
    conn.execute(text(CREATE_FTS))
    conn.execute(text(CREATE_VOCAB))


def insert(conn: Connection, rows: Iterable[tuple[int, str, str]]) -> None:
    """Rows are (fts rowid, title, body)."""
    batch = [{"rowid": r, "title": t, "body": b} for r, t, b in rows]
    if batch:
        conn.execute(
            text(f"INSERT INTO {FTS_TABLE}(rowid, title, body) VALUES (:rowid, :title, :body)"), batch
        )


def delete(conn: Connection, rowids: Iterable[int]) -> None:
    batch = [{"rowid": r} for r in rowids]
    if batch:
        conn.execute(text(f"DELETE FROM {FTS_TABLE} WHERE rowid = :rowid"), batch)


def match_expression(query: str) -> str | None:
    """An FTS5 OR-query of the query's content terms; ticket keys become exact phrases ("eng 142")."""
    parts: list[str] = []
    for key in TICKET_KEY.findall(query):
        phrase = " ".join(tokens(key))
        parts.append(f'"{phrase}"')
    for term in content_terms(query):
        quoted = f'"{term}"'
        if quoted not in parts:
            parts.append(quoted)
    if not parts:
        return None
    return " OR ".join(parts[:MAX_QUERY_TERMS])


def search(conn: Connection, query: str, principals: frozenset[str], k: int) -> list[LexicalHit]:
    expression = match_expression(query)
    if expression is None:
        return []
    clause, acl_params = _acl_clause(principals)
    sql = text(
        f"""
        SELECT c.id AS chunk_id, c.doc_id AS doc_id, -bm25({FTS_TABLE}, {TITLE_WEIGHT}, 1.0) AS score
        FROM {FTS_TABLE}
        JOIN chunks c ON c.rowid_fts = {FTS_TABLE}.rowid
        WHERE {FTS_TABLE} MATCH :expr AND {clause}
        ORDER BY bm25({FTS_TABLE}, {TITLE_WEIGHT}, 1.0)
        LIMIT :k
        """
    )
    params: dict[str, object] = {"expr": expression, "k": k, **acl_params}
    rows = conn.execute(sql, params).all()
    return [LexicalHit(chunk_id=r.chunk_id, doc_id=r.doc_id, score=float(r.score)) for r in rows]


def _acl_clause(principals: frozenset[str]) -> tuple[str, dict[str, object]]:
    held = sorted(principals)
    marks = ", ".join(f":p{i}" for i in range(len(held)))
    return f"c.doc_id IN (SELECT doc_id FROM doc_acl WHERE principal IN ({marks}))", {
        f"p{i}": p for i, p in enumerate(held)
    }


def count_visible(conn: Connection, principals: frozenset[str]) -> int:
    clause, params = _acl_clause(principals)
    return int(conn.execute(text(f"SELECT count(*) FROM chunks c WHERE {clause}"), params).scalar() or 0)


def document_frequency(conn: Connection, stem: str, principals: frozenset[str]) -> int:
    """Visible chunks whose title or body holds a (porter-stemmed) term, exactly as the index stored it."""
    if not stem.isalnum():
        return 0
    clause, params = _acl_clause(principals)
    sql = text(
        f"SELECT count(DISTINCT v.doc) FROM {FTS_TABLE}_terms v JOIN chunks c ON c.rowid_fts = v.doc "
        f"WHERE v.term = :term AND {clause}"
    )
    return int(conn.execute(sql, {"term": stem, **params}).scalar() or 0)
