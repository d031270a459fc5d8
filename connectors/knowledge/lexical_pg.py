"""BM25 over the chunks in PostgreSQL full-text search: the FTS5 index's twin for a PostgreSQL database.

Same interface as `connectors.knowledge.lexical` (`create`, `insert`, `delete`, `visible_stats`, `search`,
`count_visible`, `document_frequency`), chosen by `lexical.backend`; queries are the FTS5 side's
`query_phrases`. Rows live in `chunks_tsv` (a `tsvector` per chunk under a
GIN index). Words are folded and Porter-stemmed here, as FTS5's `porter unicode61 remove_diacritics 2`
tokenizer does, and stored through the `simple` configuration, so a stem means the same on both databases and
`document_frequency` answers for the reasoner's stems. Title words carry weight A (counted `TITLE_WEIGHT`
times, FTS5's column weight).

Ranking is FTS5's BM25 (k1 1.2, b 0.75, the same IDF floor), computed in one statement whose statistics (chunk
count and mean length from `visible_stats`, document frequencies in the statement) cover only the chunks the
asker may see: the ACL is inside the SQL,
so nothing hidden shapes a score. A phrase (a ticket key, "eng 142") must match as a phrase; its term frequency
is that of its rarest word in the chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from nltk.stem.porter import PorterStemmer
from sqlalchemy import Connection, text

from connectors.knowledge.lexical import BM25_B as B
from connectors.knowledge.lexical import BM25_K1 as K1
from connectors.knowledge.lexical import TITLE_WEIGHT, LexicalHit, VisibleStats, query_phrases
from connectors.text import fold

TABLE = "chunks_tsv"

_WORD = re.compile(r"[^\W_]+")  # unicode61: letters and digits, everything else separates
_STEMMER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)

CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (rowid_fts BIGINT PRIMARY KEY, tsv TSVECTOR NOT NULL, "
    "length INTEGER NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS ix_{TABLE}_tsv ON {TABLE} USING GIN (tsv)",
)


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _STEMMER.stem(word)


def stems(value: str) -> list[str]:
    """The index's terms of a text, in order: folded, split as unicode61 splits, Porter-stemmed."""
    return [_stem(w) for w in _WORD.findall(fold(value))]


def create(conn: Connection) -> None:
    for statement in CREATE:
        conn.execute(text(statement))


def insert(conn: Connection, rows: Iterable[tuple[int, str, str]]) -> None:
    """Rows are (fts rowid, title, body), as for the FTS5 index."""
    batch = []
    for rowid, title, body in rows:
        head, tail = stems(title), stems(body)
        batch.append(
            {"rowid": rowid, "title": " ".join(head), "body": " ".join(tail), "n": len(head) + len(tail)}
        )
    if batch:
        conn.execute(
            text(
                f"INSERT INTO {TABLE} (rowid_fts, tsv, length) VALUES (:rowid, "
                "setweight(to_tsvector('simple', :title), 'A') || to_tsvector('simple', :body), :n)"
            ),
            batch,
        )


def delete(conn: Connection, rowids: Iterable[int]) -> None:
    wanted = list(rowids)
    if wanted:
        conn.execute(text(f"DELETE FROM {TABLE} WHERE rowid_fts = ANY(:rowids)"), {"rowids": wanted})


def _tsquery(term: tuple[str, ...]) -> str:
    return " <-> ".join(f"'{s}'" for s in term)


_VISIBLE = "c.doc_id IN (SELECT doc_id FROM doc_acl WHERE principal = ANY(:principals))"

_SEARCH = f"""
WITH terms AS (
    SELECT t.i, to_tsquery('simple', t.q) AS q FROM unnest(CAST(:term_ids AS int[]), CAST(:term_qs AS text[])) AS t(i, q)
),
parts AS (
    SELECT p.i, p.stem FROM unnest(CAST(:part_ids AS int[]), CAST(:part_stems AS text[])) AS p(i, stem)
),
matched AS (
    SELECT c.id, c.doc_id, x.tsv, x.length, terms.i
    FROM chunks c JOIN {TABLE} x ON x.rowid_fts = c.rowid_fts JOIN terms ON x.tsv @@ terms.q
    WHERE {_VISIBLE}
),
df AS (SELECT i, count(*) AS n FROM matched GROUP BY i),
tf AS (
    SELECT m.id, m.i, min(w.tf) AS tf
    FROM matched m JOIN parts p ON p.i = m.i
    CROSS JOIN LATERAL (
        SELECT coalesce(sum(CASE WHEN wt = 'A' THEN :title_weight ELSE 1.0 END), 0) AS tf
        FROM unnest(m.tsv) AS u, unnest(u.weights) AS wt WHERE u.lexeme = p.stem
    ) w
    GROUP BY m.id, m.i
),
scored AS (
    SELECT m.id, m.doc_id, sum(
        greatest(ln((CAST(:n AS float) - df.n + 0.5) / (df.n + 0.5)), 1e-6)
        * tf.tf * ({K1} + 1) / (tf.tf + {K1} * (1 - {B} + {B} * m.length / CAST(:avgdl AS float)))
    ) AS score
    FROM matched m JOIN df ON df.i = m.i JOIN tf ON tf.id = m.id AND tf.i = m.i
    GROUP BY m.id, m.doc_id
)
SELECT id AS chunk_id, doc_id, score FROM scored ORDER BY score DESC, id LIMIT :k
"""


def row_groups(conn: Connection) -> None:
    """No aggregates to keep: PostgreSQL computes the statistics inside its statements (the FTS5 side's
    `row_groups` is the same hook)."""
    return None


def visible_stats(conn: Connection, principals: frozenset[str], groups: None = None) -> VisibleStats:
    """Row count and total length of the visible chunks (the store caches it per generation and principals)."""
    sql = text(
        f"SELECT count(*), coalesce(sum(x.length), 0) FROM chunks c JOIN {TABLE} x ON x.rowid_fts = c.rowid_fts "
        f"WHERE {_VISIBLE}"
    )
    rows, tokens = conn.execute(sql, {"principals": sorted(principals)}).one()
    return VisibleStats(int(rows), int(tokens))


def search(
    conn: Connection, query: str, principals: frozenset[str], k: int, stats: VisibleStats | None = None
) -> list[LexicalHit]:
    terms = query_phrases(query)
    if not terms or not principals:
        return []
    stats = stats or visible_stats(conn, principals)
    if not stats.rows:
        return []
    params = {
        "term_ids": list(range(len(terms))),
        "term_qs": [_tsquery(t) for t in terms],
        "part_ids": [i for i, t in enumerate(terms) for _ in t],
        "part_stems": [s for t in terms for s in t],
        "principals": sorted(principals),
        "title_weight": TITLE_WEIGHT,
        "n": stats.rows,
        "avgdl": stats.average_length or 1.0,
        "k": k,
    }
    rows = conn.execute(text(_SEARCH), params).all()
    return [LexicalHit(chunk_id=r.chunk_id, doc_id=r.doc_id, score=float(r.score)) for r in rows]


def count_visible(conn: Connection, principals: frozenset[str], groups: None = None) -> int:
    sql = text(f"SELECT count(*) FROM chunks c WHERE {_VISIBLE}")
    return int(conn.execute(sql, {"principals": sorted(principals)}).scalar() or 0)


def document_frequency(conn: Connection, stem: str, principals: frozenset[str], groups: None = None) -> int:
    """Visible chunks whose title or body holds a (Porter-stemmed) term, exactly as the index stored it."""
    if not stem.isalnum():
        return 0
    sql = text(
        f"SELECT count(*) FROM chunks c JOIN {TABLE} x ON x.rowid_fts = c.rowid_fts "
        f"WHERE x.tsv @@ to_tsquery('simple', :q) AND {_VISIBLE}"
    )
    return int(conn.execute(sql, {"q": f"'{stem}'", "principals": sorted(principals)}).scalar() or 0)
