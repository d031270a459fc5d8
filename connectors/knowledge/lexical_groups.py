"""BM25's corpus statistics over what one asker may see, without scanning the corpus per question.

Chunks fall into a few ACL groups (every distinct ACL of their documents). Per store generation this reads, once,
each FTS row's group and length; the row count and total length per group; and, per term on first use, how many
rows of each group hold it. What a principal set may see is then a mask over groups, and its statistics (rows,
average length, a term's document frequency) are sums over the visible groups: the same numbers as counting the
visible rows, computed from aggregates shared by every asker. Nothing hidden enters a sum.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection

TERM_CACHE_CELLS = (
    4_000_000  # per-group counts kept over all cached terms (int32: 16 MB), however many groups
)
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


class RowGroups:
    """Each FTS row's ACL group and length, per-group totals, and per-term document frequencies per group.
    Built from the tables of one store generation; read by any number of askers and threads."""

    def __init__(self, acls: list[frozenset[str]], group_of_row: np.ndarray, length: np.ndarray) -> None:
        self.acls = acls
        self.group_of_row = group_of_row  # int32 by rowid, NO_GROUP where none
        self.length = length  # int32 by rowid: title and body tokens
        counted = group_of_row >= 0
        self.rows = np.bincount(group_of_row[counted], minlength=len(acls))
        self.tokens = np.bincount(group_of_row[counted], weights=length[counted], minlength=len(acls))
        self._df: dict[str, np.ndarray] = {}
        self._masks: dict[frozenset[str], np.ndarray] = {}
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

    def document_frequency(self, term: str, mask: np.ndarray, rows_of: Callable[[str], np.ndarray]) -> int:
        """Visible rows holding a stored term: its per-group counts are read once (`rows_of` gives every row
        holding it), then summed per asker."""
        with self._lock:
            counts = self._df.get(term)
        if counts is None:
            groups = self.groups(np.unique(rows_of(term)))
            counts = np.bincount(groups[groups >= 0], minlength=len(self.acls)).astype(np.int32)
            with self._lock:
                if (len(self._df) + 1) * max(len(self.acls), 1) > TERM_CACHE_CELLS:
                    self._df.clear()
                self._df[term] = counts
        return int(counts[mask[:-1]].sum())


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
