"""BM25 over the chunks in PostgreSQL full-text search: the FTS5 index's twin for a PostgreSQL database.

Same interface as `connectors.knowledge.lexical` (`create`, `insert`, `delete`, `row_terms`, `row_groups`,
`visible_stats`, `search`, `count_visible`, `document_frequency`), chosen by `store.lexical_index`; the ranking
is that module's `rank`, reading its postings from here. Rows live in `chunks_tsv` (a `tsvector` per chunk
under a GIN index). Words are folded and Porter-stemmed here, as FTS5's `porter unicode61 remove_diacritics 2`
tokenizer does, and stored through the `simple` configuration, so a stem means the same on both databases and
`document_frequency` answers for the reasoner's stems. Title words carry weight A (counted `TITLE_WEIGHT`
times, FTS5's column weight).

Ranking is FTS5's BM25 (k1 1.2, b 0.75, the same IDF floor) with statistics over the chunks the asker may see
alone, summed from per-ACL-group aggregates (`lexical_groups` and the write-time `term_counts`, as on SQLite)
so that no question scans the corpus: the rarest terms choose at most `lexical.CANDIDATE_BUDGET` candidates,
commoner ones are read only for those (the GIN index and the primary key together). Counting every match of a common term in SQL per
question made a question at 100k chunks take seconds. A phrase (a ticket key, "eng 142") must match as a
phrase; its term frequency is that of its rarest word in the chunk.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np
from nltk.stem.porter import PorterStemmer
from sqlalchemy import Connection, text

from connectors.knowledge import lexical
from connectors.knowledge.lexical import TITLE_WEIGHT, LexicalHit, Postings, VisibleStats
from connectors.knowledge.lexical_groups import RowGroups, build_row_groups
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


def _occurrences(stem: str, column: str = "x.tsv") -> str:
    """SQL for a stem's positions in a tsvector: every position of the stem re-weighted B and the rest
    filtered out, printed ('stem':3B,17B), its commas counted. Only C functions: unnesting the tsvector cost
    seven times more, and a common term's candidates number thousands."""
    only = f"ts_filter(setweight({column}, 'B', ARRAY[{stem}]), '{{b}}')::text"
    return f"coalesce(array_length(string_to_array({only}, ','), 1), 0)"


def _frequency(stem: str) -> str:
    """Column-weighted occurrences of a stem in a row: title positions (weight A) count TITLE_WEIGHT."""
    title = _occurrences(stem, "ts_filter(x.tsv, '{a}')")
    return f"({_occurrences(stem)} + {TITLE_WEIGHT - 1.0} * {title})"


def _postings(conn: Connection, phrase: tuple[str, ...], among: np.ndarray | None = None) -> Postings:
    """Rows holding the phrase (a term: one stem) with its count in each: that of its rarest stem."""
    params: dict[str, Any] = {f"s{n}": stem for n, stem in enumerate(phrase)}
    counts = [_frequency(f"CAST(:s{n} AS text)") for n in range(len(phrase))]
    sql = f"SELECT x.rowid_fts, least({', '.join(counts)}) FROM {TABLE} x WHERE x.tsv @@ to_tsquery('simple', :q)"
    params["q"] = _tsquery(phrase)
    if among is not None:
        sql += " AND x.rowid_fts = ANY(CAST(:among AS bigint[]))"
        params["among"] = among.tolist()
    got = conn.execute(text(sql + " ORDER BY x.rowid_fts"), params).all()
    rows = np.fromiter((r for r, _ in got), dtype=np.int64, count=len(got))
    freq = np.fromiter((f for _, f in got), dtype=np.float64, count=len(got))
    return rows, freq


def row_groups(conn: Connection) -> RowGroups:
    """Every chunk's ACL group and length (the store keeps one per generation, shared by every asker)."""
    return build_row_groups(
        conn.execute(text("SELECT doc_id, principal FROM doc_acl")).tuples(),
        conn.execute(text("SELECT rowid_fts, doc_id FROM chunks")).tuples().all(),
        conn.execute(text(f"SELECT rowid_fts, length FROM {TABLE}")).tuples().all(),
    )


def row_terms(conn: Connection, rowids: Sequence[int]) -> list[tuple[int, str]]:
    """(row id, stored stem) once per stem each of these rows holds, read from their tsvectors (the write-time
    counts of `term_counts` are made of these)."""
    sql = text(f"SELECT rowid_fts, unnest(tsvector_to_array(tsv)) FROM {TABLE} WHERE rowid_fts = ANY(:rows)")
    found: list[tuple[int, str]] = []
    for start in range(0, len(rowids), 1000):
        part = [int(r) for r in rowids[start : start + 1000]]
        found += [(int(r), str(t)) for r, t in conn.execute(sql, {"rows": part})]
    return found


def term_postings(conn: Connection, term: str, among: np.ndarray | None = None) -> Postings:
    """Rows holding a stored term (only rows `among`, when given), with its column-weighted count."""
    return _postings(conn, (term,), among)


def postings_among(conn: Connection, stem: str, token: str, among: np.ndarray) -> Postings:
    """The same as `term_postings` among the candidates: the primary key finds them, whatever the term."""
    return _postings(conn, (stem,), among)


def phrase_postings(
    conn: Connection,
    phrase: tuple[str, ...],
    groups: RowGroups,
    mask: np.ndarray,
    frequency: Mapping[str, int],
) -> Postings:
    """Visible rows holding the phrase (its stems at consecutive positions), with its count in each (one
    GIN query for all its stems: `frequency` orders nothing here)."""
    rows, freq = _postings(conn, phrase)
    keep = groups.visible(rows, mask)
    return rows[keep], freq[keep]


def chunk_ids(conn: Connection, rows: list[int]) -> dict[int, tuple[str, str]]:
    if not rows:
        return {}
    sql = text("SELECT rowid_fts, id, doc_id FROM chunks WHERE rowid_fts = ANY(CAST(:rows AS bigint[]))")
    return {int(r[0]): (r[1], r[2]) for r in conn.execute(sql, {"rows": rows})}


def _index() -> ModuleType:
    return sys.modules[__name__]


def visible_stats(
    conn: Connection, principals: frozenset[str], groups: RowGroups | None = None
) -> VisibleStats:
    """Row count and total length of the visible chunks: sums over the groups these principals may see."""
    return lexical._visible_stats(_index(), conn, principals, groups)


def search(
    conn: Connection, query: str, principals: frozenset[str], k: int, stats: VisibleStats | None = None
) -> list[LexicalHit]:
    return lexical.rank(_index(), conn, query, principals, k, stats)


def count_visible(conn: Connection, principals: frozenset[str], groups: RowGroups | None = None) -> int:
    return visible_stats(conn, principals, groups).rows


def document_frequency(
    conn: Connection, stem: str, principals: frozenset[str], groups: RowGroups | None = None
) -> int:
    """Visible chunks whose title or body holds a (Porter-stemmed) term, exactly as the index stored it."""
    return lexical._document_frequency(_index(), conn, stem, principals, groups)
