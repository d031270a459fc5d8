"""BM25 over the same chunks, in SQLite FTS5. Exact ticket keys and names matter in this domain, and dense
retrieval alone misses them.

FTS5's own `bm25()` takes its statistics (row count, document frequencies, average length) from the whole
table, so chunks an asker may not open would still move the order of those they may: a side channel. Ranking
here therefore reads the index (`fts5vocab` instances: which rows hold each term, where) only for visible rows
and computes FTS5's BM25 formula with statistics over the visible chunks alone (`VisibleStats`).
"""

from __future__ import annotations

import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

from nltk.stem.porter import PorterStemmer
from sqlalchemy import Connection, text

from connectors.text import TICKET_KEY, content_terms, fold, tokens

FTS_TABLE = "chunks_fts"
TITLE_WEIGHT = 1.5  # a term in the title says more than the same term in the body
COLUMN_WEIGHTS = (TITLE_WEIGHT, 1.0)  # title, body: as the columns are declared
MAX_QUERY_TERMS = 32
BM25_K1, BM25_B = 1.2, 0.75  # FTS5's constants
_FTS_TOKEN = re.compile(r"[^\W_]+")  # unicode61: runs of letters and digits
_STEMMER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)

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


@dataclass(frozen=True)
class VisibleStats:
    """What BM25 needs of the corpus, counted over the chunks one principal set may see."""

    rows: int
    tokens: int  # title and body tokens of those rows together

    @property
    def average_length(self) -> float:
        return self.tokens / self.rows if self.rows else 0.0


def visible_stats(conn: Connection, principals: frozenset[str]) -> VisibleStats:
    """Row count and total length of the visible chunks (lengths from FTS5's own `docsize` table)."""
    clause, params = _acl_clause(principals)
    sql = text(
        f"SELECT d.sz AS sz FROM {FTS_TABLE}_docsize d JOIN chunks c ON c.rowid_fts = d.id WHERE {clause}"
    )
    rows = total = 0
    for (blob,) in conn.execute(sql, params):
        rows += 1
        total += sum(_varints(bytes(blob or b"")))
    return VisibleStats(rows, total)


def query_phrases(query: str) -> list[tuple[str, ...]]:
    """The query as FTS5 phrases of stored (folded, porter-stemmed) tokens: ticket keys whole, then each
    content term; the same terms `match_expression` builds."""
    phrases: list[tuple[str, ...]] = []
    for key in TICKET_KEY.findall(query):
        phrases.append(tuple(_stem(t) for t in _FTS_TOKEN.findall(fold(key))))
    for term in content_terms(query):
        phrase = tuple(_stem(t) for t in _FTS_TOKEN.findall(fold(term)))
        if phrase and phrase not in phrases:
            phrases.append(phrase)
    return [p for p in phrases if p][:MAX_QUERY_TERMS]


def search(
    conn: Connection, query: str, principals: frozenset[str], k: int, stats: VisibleStats | None = None
) -> list[LexicalHit]:
    """The `k` best visible chunks for the query by BM25 over visible chunks only (FTS5's formula: per
    phrase idf x saturated, column-weighted frequency, normalised by row length)."""
    phrases = query_phrases(query)
    if not phrases:
        return []
    stats = stats or visible_stats(conn, principals)
    if not stats.rows:
        return []
    weighted = [_phrase_frequencies(conn, phrase, principals) for phrase in phrases]
    candidates = set().union(*(found.keys() for found in weighted))
    if not candidates:
        return []
    lengths = _row_lengths(conn, candidates)
    scores: dict[int, float] = defaultdict(float)
    for found in weighted:
        idf = math.log((stats.rows - len(found) + 0.5) / (len(found) + 0.5))
        idf = idf if idf > 0 else 1e-6  # as FTS5 does for terms in more than half the rows
        for row, freq in found.items():
            norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths.get(row, 0) / (stats.average_length or 1.0))
            scores[row] += idf * freq * (BM25_K1 + 1) / (freq + norm)
    ranked = sorted(scores, key=lambda row: (-scores[row], row))[:k]
    ids = _chunk_ids(conn, ranked)
    return [LexicalHit(chunk_id=ids[r][0], doc_id=ids[r][1], score=scores[r]) for r in ranked if r in ids]


def _phrase_frequencies(
    conn: Connection, phrase: tuple[str, ...], principals: frozenset[str]
) -> dict[int, float]:
    """Visible row -> column-weighted occurrences of the phrase (its tokens at consecutive offsets)."""
    clause, params = _acl_clause(principals)
    sql = text(
        f"SELECT v.doc AS row, v.col AS col, v.offset AS pos FROM {FTS_TABLE}_terms v "
        f"JOIN chunks c ON c.rowid_fts = v.doc WHERE v.term = :term AND {clause}"
    )
    columns = {"title": 0, "body": 1}
    positions: list[set[tuple[int, int, int]]] = []
    for token in dict.fromkeys(phrase):
        found = {
            (int(r.row), columns.get(str(r.col), 1), int(r.pos))
            for r in conn.execute(sql, {"term": token, **params})
        }
        positions.append(found)
    by_token = dict(zip(dict.fromkeys(phrase), positions, strict=True))
    counts: dict[int, float] = defaultdict(float)
    for row, col, pos in by_token[phrase[0]]:
        if all((row, col, pos + i) in by_token[token] for i, token in enumerate(phrase[1:], start=1)):
            counts[row] += COLUMN_WEIGHTS[col]
    return dict(counts)


def _row_lengths(conn: Connection, rows: set[int]) -> dict[int, int]:
    found: dict[int, int] = {}
    ordered = sorted(rows)
    for start in range(0, len(ordered), 500):
        batch = ordered[start : start + 500]
        marks = ", ".join(f":r{i}" for i in range(len(batch)))
        sql = text(f"SELECT id, sz FROM {FTS_TABLE}_docsize WHERE id IN ({marks})")
        for row_id, blob in conn.execute(sql, {f"r{i}": r for i, r in enumerate(batch)}):
            found[int(row_id)] = sum(_varints(bytes(blob or b"")))
    return found


def _chunk_ids(conn: Connection, rows: list[int]) -> dict[int, tuple[str, str]]:
    if not rows:
        return {}
    marks = ", ".join(f":r{i}" for i in range(len(rows)))
    sql = text(f"SELECT rowid_fts, id, doc_id FROM chunks WHERE rowid_fts IN ({marks})")
    return {int(r[0]): (r[1], r[2]) for r in conn.execute(sql, {f"r{i}": r for i, r in enumerate(rows)})}


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    """FTS5's porter tokenizer leaves tokens shorter than three characters as they are."""
    return _STEMMER.stem(token) if len(token) >= 3 else token


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (FTS5's docsize record: one token count per column)."""
    values, value, i = [], 0, 0
    while i < len(blob):
        byte = blob[i]
        value = (value << 7) | (byte & 0x7F)
        i += 1
        if not byte & 0x80:
            values.append(value)
            value = 0
    return values


def _acl_clause(principals: frozenset[str]) -> tuple[str, dict[str, object]]:
    held = sorted(principals)
    marks = ", ".join(f":p{i}" for i in range(len(held)))
    # EXISTS probes the ACL's primary key per matching chunk; `IN (SELECT ...)` would first list every
    # visible document, a cost that grows with the corpus (see acl.visible).
    clause = f"EXISTS (SELECT 1 FROM doc_acl a WHERE a.doc_id = c.doc_id AND a.principal IN ({marks}))"
    return clause, {f"p{i}": p for i, p in enumerate(held)}


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


def backend(dialect: str) -> ModuleType:
    """The lexical index for a database dialect: this FTS5 module on SQLite, full-text search on PostgreSQL."""
    if dialect == "postgresql":
        from connectors.knowledge import lexical_pg

        return lexical_pg
    return sys.modules[__name__]
