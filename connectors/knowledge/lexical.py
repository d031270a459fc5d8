"""BM25 over the same chunks, in SQLite FTS5. Exact ticket keys and names matter in this domain, and dense
retrieval alone misses them.

FTS5's own `bm25()` takes its statistics (row count, document frequencies, average length) from the whole
table, so chunks an asker may not open would still move the order of those they may: a side channel. Ranking
here therefore reads the index (`fts5vocab` instances: which rows hold each term, where) only for visible rows
and computes FTS5's BM25 formula with statistics over the visible chunks alone (`VisibleStats`), summed from
per-ACL-group aggregates (`lexical_groups`, `term_counts`) so that no question scans the corpus, and a term
hidden chunks alone hold costs a question no more than a term nobody holds.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np
from nltk.stem.porter import PorterStemmer
from sqlalchemy import Connection, text

from connectors.knowledge import term_counts
from connectors.knowledge.lexical_groups import RowGroups, load_row_groups, raw_rows
from connectors.text import TICKET_KEY, content_terms, fold, tokens

FTS_TABLE = "chunks_fts"
TITLE_WEIGHT = 1.5  # a term in the title says more than the same term in the body
COLUMN_WEIGHTS = (TITLE_WEIGHT, 1.0)  # title, body: as the columns are declared
MAX_QUERY_TERMS = 32
CANDIDATE_BUDGET = 5000  # visible rows the rarest phrases may bring in; commoner ones only score those
MARKING_COST = 50  # reading one candidate row's text costs about as much as this many postings of a term
BM25_K1, BM25_B = 1.2, 0.75  # FTS5's constants
_FTS_TOKEN = re.compile(r"[^\W_]+")  # unicode61: runs of letters and digits
# a release number ("4.3", "5.4.1") is searched as the phrase of its parts: "4" and "3" alone are everywhere
_RELEASE_NUMBER = re.compile(r"(?<![\d.])\d+\.\d+(?:\.\d+)?(?![\d.]*\d)")
_STEMMER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)

TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"
CREATE_FTS = f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5(title, body, {TOKENIZE})"
# Rows tokenised again, one connection's scratch: FTS5 lists a row's terms only by scanning its whole index.
# Contentless with detail=none, its vocabulary has one entry per (term, row), which is all `row_terms` needs.
_SCRATCH = f"{FTS_TABLE}_scratch"
CREATE_SCRATCH = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_SCRATCH} USING fts5(title, body, content='', detail='none', "
    f"{TOKENIZE})",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_SCRATCH}_terms USING fts5vocab(temp, {_SCRATCH}, 'instance')",
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


def row_terms(conn: Connection, rowids: Sequence[int]) -> list[tuple[int, str]]:
    """(row id, stored term) once per term each of these rows holds: their own text tokenised again, exactly
    as the index tokenised it (the write-time counts of `term_counts` are made of these)."""
    cursor = conn.connection.cursor()
    found: list[tuple[int, str]] = []
    try:
        for statement in CREATE_SCRATCH:
            cursor.execute(statement)
        for start in range(0, len(rowids), 1000):
            part = json.dumps([int(r) for r in rowids[start : start + 1000]])
            cursor.execute(
                f"INSERT INTO temp.{_SCRATCH}(rowid, title, body) SELECT rowid, title, body FROM {FTS_TABLE} "
                "WHERE rowid IN (SELECT value FROM json_each(:rows))",
                {"rows": part},
            )
            found += cursor.execute(f"SELECT doc, term FROM temp.{_SCRATCH}_terms").fetchall()
            cursor.execute(f"INSERT INTO temp.{_SCRATCH}({_SCRATCH}) VALUES ('delete-all')")
    finally:
        cursor.close()
    return found


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
    groups: RowGroups | None = None  # the aggregates these were summed from (SQLite), reused by `search`

    @property
    def average_length(self) -> float:
        return self.tokens / self.rows if self.rows else 0.0


def row_groups(conn: Connection) -> RowGroups:
    """The per-ACL-group aggregates of the index as it stands (the store keeps one per generation)."""
    return load_row_groups(conn, FTS_TABLE)


def visible_stats(
    conn: Connection, principals: frozenset[str], groups: RowGroups | None = None
) -> VisibleStats:
    """Row count and total length of the visible chunks: sums over the groups these principals may see."""
    return _visible_stats(sys.modules[__name__], conn, principals, groups)


def _visible_stats(
    index: ModuleType, conn: Connection, principals: frozenset[str], groups: RowGroups | None
) -> VisibleStats:
    groups = groups or index.row_groups(conn)
    rows, tokens = groups.totals(groups.mask(principals))
    return VisibleStats(rows, tokens, groups)


def query_phrases(query: str) -> list[tuple[str, ...]]:
    """The query as FTS5 phrases of stored (folded, porter-stemmed) tokens: ticket keys whole, then each
    content term; the same terms `match_expression` builds."""
    return list(_query_terms(query))


def _query_terms(query: str) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Stored phrase -> its tokens as written (folded, unstemmed), in query order."""
    found: dict[tuple[str, ...], tuple[str, ...]] = {}
    for text_ in [*TICKET_KEY.findall(query), *_RELEASE_NUMBER.findall(query), *content_terms(query)]:
        written = tuple(_FTS_TOKEN.findall(fold(text_)))
        if written and len(found) < MAX_QUERY_TERMS:
            found.setdefault(tuple(_stem(t) for t in written), written)
    return found


Postings = tuple[np.ndarray, np.ndarray]  # (rowids, column-weighted occurrences), visible rows only


def search(
    conn: Connection, query: str, principals: frozenset[str], k: int, stats: VisibleStats | None = None
) -> list[LexicalHit]:
    """The `k` best visible chunks for the query by BM25 over visible chunks only (see `rank`)."""
    return rank(sys.modules[__name__], conn, query, principals, k, stats)


def rank(
    index: ModuleType,
    conn: Connection,
    query: str,
    principals: frozenset[str],
    k: int,
    stats: VisibleStats | None = None,
) -> list[LexicalHit]:
    """BM25 over visible chunks only (FTS5's formula: per phrase idf x saturated, column-weighted frequency,
    normalised by row length), reading postings from `index`: this module (FTS5) or `lexical_pg`, each with
    `row_groups`, `term_postings`, `phrase_postings`, `postings_among` and `chunk_ids`.

    The rarest phrases, up to CANDIDATE_BUDGET visible rows together, choose the candidates; commoner phrases
    (df summed from the visible groups' write-time counts, never by reading postings) only add to the scores of
    those candidates. A question's cost so follows its rare words, not the size of the corpus, and the
    candidates are ranked exactly as a full evaluation ranks them. Below the budget (every corpus of a few
    thousand chunks) every matching row is a candidate, as FTS5's own OR-query gives. A phrase or term with no
    visible row reads nothing, so what hidden rows hold never shows in the time either.
    """
    written = _query_terms(query)
    phrases = list(written)
    if not phrases or not principals:
        return []
    if stats is None or stats.groups is None:
        stats = _visible_stats(index, conn, principals, None)
    groups = stats.groups
    assert groups is not None
    if not stats.rows:
        return []
    mask = groups.mask(principals)
    terms = groups.document_frequencies(
        sorted({t for phrase in phrases for t in phrase}),
        mask,
        functools.partial(term_counts.visible_rows, conn),
    )
    found: dict[int, Postings] = {}
    df: list[int] = []
    for i, phrase in enumerate(phrases):
        if len(phrase) == 1:
            df.append(terms[phrase[0]])
        elif min(terms[t] for t in phrase):  # a phrase's rows are known only from its positions: read them
            found[i] = index.phrase_postings(conn, phrase, groups, mask, terms)
            df.append(len(found[i][0]))
        else:  # a word of it no visible row holds: no visible row holds the phrase
            df.append(0)
    chosen: list[int] = []
    budget = 0
    for i in sorted(range(len(phrases)), key=lambda n: (df[n], n)):
        if df[i] and (not chosen or budget + df[i] <= CANDIDATE_BUDGET):
            chosen.append(i)
            budget += df[i]
        elif df[i]:
            break
    if not chosen:
        return []
    for i in chosen:
        if i not in found:
            found[i] = _visible(index.term_postings(conn, phrases[i][0]), groups, mask)
    candidates = np.unique(np.concatenate([found[i][0] for i in chosen]))
    for i, phrase in enumerate(phrases):
        if i not in found and df[i]:
            if len(candidates) * MARKING_COST <= df[i]:  # few candidates: read them, not the postings
                found[i] = index.postings_among(conn, phrase[0], written[phrase][0], candidates)
            else:
                found[i] = _visible(index.term_postings(conn, phrase[0], among=candidates), groups, mask)
    average = stats.average_length or 1.0
    scores = np.zeros(len(candidates), dtype=np.float64)
    for i in range(len(phrases)):
        if i not in found:
            continue
        rows, freq = found[i]
        idf = math.log((stats.rows - df[i] + 0.5) / (df[i] + 0.5))
        idf = idf if idf > 0 else 1e-6  # as FTS5 does for terms in more than half the rows
        at = np.searchsorted(candidates, rows)
        keep = (at < len(candidates)) & (candidates[np.minimum(at, len(candidates) - 1)] == rows)
        rows, freq, at = rows[keep], freq[keep], at[keep]
        norm = BM25_K1 * (1 - BM25_B + BM25_B * groups.lengths(rows) / average)
        scores[at] += idf * freq * (BM25_K1 + 1) / (freq + norm)
    order = np.lexsort((candidates, -scores))[:k]
    ranked = [int(candidates[j]) for j in order if scores[j] > 0]
    by_row = dict(zip(candidates.tolist(), scores.tolist(), strict=True))
    ids = index.chunk_ids(conn, ranked)
    return [LexicalHit(chunk_id=ids[r][0], doc_id=ids[r][1], score=by_row[r]) for r in ranked if r in ids]


def _visible(postings: Postings, groups: RowGroups, mask: np.ndarray) -> Postings:
    rows, freq = postings
    keep = groups.visible(rows, mask)
    return rows[keep], freq[keep]


_TERM_FREQUENCIES = (
    f"SELECT doc, sum(CASE WHEN col = 'title' THEN {TITLE_WEIGHT} ELSE 1.0 END) FROM {FTS_TABLE}_terms "
    "WHERE term = :term{among} GROUP BY doc"
)
_AMONG = " AND doc IN (SELECT value FROM json_each(:among))"
_MARK = "\x01"
# FTS5 seeks each candidate in the term's doclist and marks every instance of the term in its text.
_MARKED = (
    f"SELECT title, body, highlight({FTS_TABLE}, 0, char(1), ''), highlight({FTS_TABLE}, 1, char(1), ''), "
    f"rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :phrase AND rowid IN (SELECT value FROM json_each(:among))"
)


def term_postings(conn: Connection, term: str, among: np.ndarray | None = None) -> Postings:
    """Rows holding a stored term, with its column-weighted count, whoever may see them (only rows `among`,
    when given: SQLite filters the postings, Python never sees the rest)."""
    params: dict[str, Any] = {"term": term}
    if among is not None:
        params["among"] = json.dumps(among.tolist())
    got = raw_rows(conn, _TERM_FREQUENCIES.format(among=_AMONG if among is not None else ""), params)
    rows = np.fromiter((r for r, _ in got), dtype=np.int64, count=len(got))
    freq = np.fromiter((f for _, f in got), dtype=np.float64, count=len(got))
    return rows, freq


def postings_among(conn: Connection, stem: str, token: str, among: np.ndarray) -> Postings:
    """The column-weighted count of a (written, unstemmed) token in each of the rows `among` (visible
    already). Read from the rows themselves, not the term's postings: the cost follows the candidates, not
    how common the term is. FTS5 stems the token as it stemmed the rows, so it counts the stored term."""
    phrase = '"' + token.replace('"', '""') + '"'
    got = raw_rows(conn, _MARKED, {"phrase": phrase, "among": json.dumps(among.tolist())})
    counts = {
        int(rowid): ((marked_title or "").count(_MARK) - (title or "").count(_MARK)) * COLUMN_WEIGHTS[0]
        + ((marked_body or "").count(_MARK) - (body or "").count(_MARK)) * COLUMN_WEIGHTS[1]
        for title, body, marked_title, marked_body, rowid in got
    }
    ordered = sorted(r for r, c in counts.items() if c > 0)
    return np.array(ordered, dtype=np.int64), np.array([counts[r] for r in ordered], dtype=np.float64)


def phrase_postings(
    conn: Connection,
    phrase: tuple[str, ...],
    groups: RowGroups,
    mask: np.ndarray,
    frequency: Mapping[str, int],
) -> Postings:
    """Visible rows holding the phrase (its tokens at consecutive offsets in one column), with column-weighted
    counts. The rarest token (by visible `frequency`) is read first; the other tokens only within its rows."""
    tokens = list(dict.fromkeys(phrase))
    vocab = f"{FTS_TABLE}_terms"
    tokens.sort(key=lambda t: frequency[t])
    sql = f"SELECT doc, col = 'title', offset FROM {vocab} WHERE term = :term"
    positions: dict[str, set[tuple[int, int, int]]] = {}
    within: list[int] | None = None
    for token in tokens:
        params: dict[str, Any] = {"term": token}
        if within is not None:
            params["among"] = json.dumps(within)
        got = raw_rows(conn, sql + (_AMONG if within is not None else ""), params)
        rows = np.fromiter((r for r, _, _ in got), dtype=np.int64, count=len(got))
        seen = groups.visible(rows, mask)
        positions[token] = {(int(r), int(c), int(o)) for (r, c, o), ok in zip(got, seen, strict=True) if ok}
        within = sorted({r for r, _, _ in positions[token]})
        if not within:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    counts: dict[int, float] = defaultdict(float)
    for row, title, pos in positions[phrase[0]]:
        if all((row, title, pos + i) in positions[t] for i, t in enumerate(phrase[1:], start=1)):
            counts[row] += COLUMN_WEIGHTS[0] if title else COLUMN_WEIGHTS[1]
    ordered = sorted(counts)
    return np.array(ordered, dtype=np.int64), np.array([counts[r] for r in ordered], dtype=np.float64)


def chunk_ids(conn: Connection, rows: list[int]) -> dict[int, tuple[str, str]]:
    if not rows:
        return {}
    marks = ", ".join(f":r{i}" for i in range(len(rows)))
    sql = text(f"SELECT rowid_fts, id, doc_id FROM chunks WHERE rowid_fts IN ({marks})")
    return {int(r[0]): (r[1], r[2]) for r in conn.execute(sql, {f"r{i}": r for i, r in enumerate(rows)})}


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    """FTS5's porter tokenizer leaves tokens shorter than three characters as they are."""
    return _STEMMER.stem(token) if len(token) >= 3 else token


def count_visible(conn: Connection, principals: frozenset[str], groups: RowGroups | None = None) -> int:
    return visible_stats(conn, principals, groups).rows


def document_frequency(
    conn: Connection, stem: str, principals: frozenset[str], groups: RowGroups | None = None
) -> int:
    """Visible chunks whose title or body holds a (porter-stemmed) term, exactly as the index stored it."""
    return _document_frequency(sys.modules[__name__], conn, stem, principals, groups)


def _document_frequency(
    index: ModuleType, conn: Connection, stem: str, principals: frozenset[str], groups: RowGroups | None
) -> int:
    if not stem.isalnum():
        return 0
    groups = groups or index.row_groups(conn)
    return groups.document_frequency(
        stem, groups.mask(principals), functools.partial(term_counts.visible_rows, conn)
    )
