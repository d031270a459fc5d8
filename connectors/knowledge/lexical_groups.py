"""BM25's corpus statistics over what one asker may see, without scanning the corpus per question.

Chunks fall into a few ACL groups (every distinct ACL of their documents). Per store generation this reads, once,
each FTS row's group and length, and the row count and total length per group. What a principal set may see is
then a mask over groups, and its statistics (rows, average length, a term's document frequency) are sums over
the visible groups: the same numbers as counting the visible rows, computed from aggregates shared by every
asker. A term's per-group counts are kept at write time (`term_counts`) and read only for the visible groups,
so neither a number nor the time it takes to read depends on what hidden rows hold.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection

from connectors.knowledge.term_counts import acl_key

TERM_CACHE = 200_000  # (term, visible groups) document frequencies kept per generation
MASK_CACHE = 256  # principal sets whose visible-group masks are kept
NO_GROUP = -1  # rows of a document nobody may open, and row ids no chunk has


def raw_rows(conn: Connection, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """Rows of a statement read straight from the sqlite3 cursor: SQLAlchemy's per-row objects cost more than
    the query when a term's postings run to tens of thousands of rows."""
    cursor = conn.connection.cursor()
    try:
        cursor.execute(sql, params or {})
        return cursor.fetchall()
    finally:
        cursor.close()


# (terms, the ACL keys of the visible groups) -> rows holding each term there: `term_counts.visible_rows`
CountRows = Callable[[Sequence[str], Sequence[str]], dict[str, int]]


class RowGroups:
    """Each FTS row's ACL group and length, per-group totals, and the document frequencies askers looked up.
    Built from the tables of one store generation; read by any number of askers and threads."""

    def __init__(self, acls: list[frozenset[str]], group_of_row: np.ndarray, length: np.ndarray) -> None:
        self.acls = acls
        self.keys = [acl_key(acl) or "" for acl in acls]  # `term_counts` keys (an empty ACL has no group)
        self.group_of_row = group_of_row  # int32 by rowid, NO_GROUP where none
        self.length = length  # int32 by rowid: title and body tokens
        counted = group_of_row >= 0
        self.rows = np.bincount(group_of_row[counted], minlength=len(acls))
        self.tokens = np.bincount(group_of_row[counted], weights=length[counted], minlength=len(acls))
        self._df: dict[tuple[str, int], int] = {}  # (term, visible-groups id) -> rows
        self._masks: dict[frozenset[str], np.ndarray] = {}
        # a mask -> (its id, its visible groups' keys); ids are never given twice, so no cached count of one
        # set of groups is ever read for another
        self._visible_keys: dict[bytes, tuple[int, tuple[str, ...]]] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def mask(self, principals: frozenset[str]) -> np.ndarray:
        """Visible groups as booleans, one more (False) at the end that NO_GROUP indexes."""
        found = self._masks.get(principals)
        if found is None:
            found = np.array([not principals.isdisjoint(acl) for acl in self.acls] + [False], dtype=bool)
            with self._lock:
                if len(self._masks) >= MASK_CACHE:
                    self._masks.clear()
                self._masks[principals] = found
        return found

    def groups(self, rowids: np.ndarray) -> np.ndarray:
        """The group of each row id (NO_GROUP for ids past the table: rows written after it was read)."""
        inside = rowids < len(self.group_of_row)
        return np.where(inside, self.group_of_row[np.where(inside, rowids, 0)], NO_GROUP)

    def visible(self, rowids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return mask[self.groups(rowids)]

    def lengths(self, rowids: np.ndarray) -> np.ndarray:
        inside = rowids < len(self.length)
        return np.where(inside, self.length[np.where(inside, rowids, 0)], 0)

    def totals(self, mask: np.ndarray) -> tuple[int, int]:
        """(visible rows, their tokens)."""
        visible = mask[:-1]
        return int(self.rows[visible].sum()), int(self.tokens[visible].sum())

    def document_frequency(self, term: str, mask: np.ndarray, count_rows: CountRows) -> int:
        return self.document_frequencies([term], mask, count_rows)[term]

    def document_frequencies(
        self, terms: Sequence[str], mask: np.ndarray, count_rows: CountRows
    ) -> dict[str, int]:
        """Visible rows holding each stored term: the write-time counts of the visible groups alone, looked
        up once per term and visible-group set (never a posting read, never a hidden group's count)."""
        seen, keys = self._keys_of(mask)
        with self._lock:
            found = {t: self._df[(t, seen)] for t in terms if (t, seen) in self._df}
        missing = [t for t in dict.fromkeys(terms) if t not in found]
        if missing:
            got = count_rows(missing, keys)
            with self._lock:
                if len(self._df) + len(got) > TERM_CACHE:
                    self._df.clear()
                self._df.update({(t, seen): n for t, n in got.items()})
            found.update(got)
        return found

    def _keys_of(self, mask: np.ndarray) -> tuple[int, tuple[str, ...]]:
        """An id for the set of visible groups, and their keys."""
        raw = mask.tobytes()
        with self._lock:
            known = self._visible_keys.get(raw)
            if known is None:
                if len(self._visible_keys) >= MASK_CACHE:
                    self._visible_keys.clear()
                    self._df.clear()  # counts under ids nobody will ask for again
                keys = tuple(k for k, shown in zip(self.keys, mask[:-1], strict=True) if shown and k)
                known = self._visible_keys[raw] = (next(self._ids), keys)
        return known


def load_row_groups(conn: Connection, fts_table: str) -> RowGroups:
    """Reads every chunk's ACL group and length (FTS5's `docsize`: one varint token count per column)."""
    sizes = raw_rows(conn, f"SELECT id, sz FROM {fts_table}_docsize")
    return build_row_groups(
        raw_rows(conn, "SELECT doc_id, principal FROM doc_acl"),
        raw_rows(conn, "SELECT rowid_fts, doc_id FROM chunks"),
        [(rowid, row_length(bytes(blob or b""))) for rowid, blob in sizes],
    )


def build_row_groups(
    acl_rows: Iterable[tuple[str, str]],
    chunk_rows: Sequence[tuple[int, str]],
    lengths: Sequence[tuple[int, int]],
) -> RowGroups:
    """From (doc id, principal), (row id, doc id) and (row id, tokens) rows, as either database lists them."""
    acl_of: dict[str, set[str]] = {}
    for doc_id, principal in acl_rows:
        acl_of.setdefault(doc_id, set()).add(principal)
    index: dict[frozenset[str], int] = {}
    group_of_doc = {doc: index.setdefault(frozenset(acl), len(index)) for doc, acl in acl_of.items()}
    top = max([r for r, _ in chunk_rows] + [r for r, _ in lengths] + [0]) + 1
    group_of_row = np.full(top, NO_GROUP, dtype=np.int32)
    for rowid, doc_id in chunk_rows:
        group_of_row[rowid] = group_of_doc.get(doc_id, NO_GROUP)
    length = np.zeros(top, dtype=np.int32)
    for rowid, tokens in lengths:
        length[rowid] = tokens
    return RowGroups(list(index), group_of_row, length)


def row_length(blob: bytes) -> int:
    """Tokens of a row over all columns, from FTS5's docsize record (SQLite varints)."""
    if not blob or max(blob) < 0x80:  # every count under 128: one byte each
        return sum(blob)
    total = value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            total += value
            value = 0
    return total
