"""How many chunks of each ACL group hold each term, kept at write time: an asker's document frequencies are
sums over the groups they may see, and looking one up never reads a posting.

Counting a term's postings on its first use read every row holding it, hidden rows included, so the time the
first question with a word took said whether hidden chunks held it. Here every write adjusts the counts of the
rows it touches (indexed, deleted, moved to another ACL by a permission sync), and a lookup seeks one primary
key per group the asker may see: the same work whether hidden chunks hold the term or nobody does.

A group is keyed by a digest of its sorted principals (`acl_key`), so the counts need no group table and every
process derives the same keys. A document nobody may open (an empty ACL) counts nowhere. The terms of a row
are those the lexical index stored for it (`row_terms` of `lexical` or `lexical_pg`), never a re-tokenising
here that could disagree with it.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType

from sqlalchemy import Connection, bindparam, delete, insert, select, text
from sqlalchemy.dialects import postgresql, sqlite

from connectors.knowledge.tables import chunks, doc_acl, store_meta, term_groups

log = logging.getLogger(__name__)

ACL_KEY_CHARS = 16  # hex digits of the digest: 64 bits, no collision among any store's few thousand ACLs
BUILT_KEY = "term_counts"  # store_meta: present once the table counts every row (migration 0007 clears it)
ROWS_PER_READ = 2000  # rows whose terms are read at once while counting a whole index
KEYS_PER_LOOKUP = 5000  # visible groups per statement (SQLite allows 32766 parameters)

Move = tuple[str | None, str | None]  # a row's ACL key before and after a write (None: counted nowhere)

_LOOKUP = text(
    f"SELECT term, sum(rows) FROM {term_groups.name} WHERE term IN :terms AND acl_key IN :keys GROUP BY term"
).bindparams(bindparam("terms", expanding=True), bindparam("keys", expanding=True))


def acl_key(acl: Iterable[str]) -> str | None:
    """The key of the group of documents with this ACL; None for an empty one (nobody)."""
    held = sorted(set(acl))
    if not held:
        return None
    return hashlib.sha256("\n".join(held).encode()).hexdigest()[:ACL_KEY_CHARS]


def visible_rows(conn: Connection, terms: Sequence[str], keys: Sequence[str]) -> dict[str, int]:
    """Rows holding each term among the groups `keys` (those an asker may see), by primary-key seeks only."""
    found = dict.fromkeys(terms, 0)
    if not terms or not keys:
        return found
    for start in range(0, len(keys), KEYS_PER_LOOKUP):
        part = list(keys[start : start + KEYS_PER_LOOKUP])
        for term, rows in conn.execute(_LOOKUP, {"terms": list(terms), "keys": part}):
            found[term] += int(rows or 0)
    return found


def adjust(conn: Connection, index: ModuleType, moves: Mapping[int, Move]) -> None:
    """Moves each row's terms from its old group's counts to its new one's (a new row has no old group, a
    deleted one no new). Call it while the rows are in the lexical index: their terms are read from it."""
    moving = {rowid: move for rowid, move in moves.items() if move[0] != move[1]}
    if not moving:
        return
    delta: Counter[tuple[str, str]] = Counter()
    for rowid, term in index.row_terms(conn, sorted(moving)):
        before, after = moving[rowid]
        if before is not None:
            delta[(term, before)] -= 1
        if after is not None:
            delta[(term, after)] += 1
    _apply(conn, delta)


def _apply(conn: Connection, delta: Counter[tuple[str, str]]) -> None:
    changes = [{"term": t, "acl_key": k, "rows": n} for (t, k), n in delta.items() if n]
    if not changes:
        return
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    add = dialect.insert(term_groups)
    conn.execute(
        add.on_conflict_do_update(
            index_elements=[term_groups.c.term, term_groups.c.acl_key],
            set_={"rows": term_groups.c.rows + add.excluded.rows},
        ),
        changes,
    )
    emptied = [{"t": c["term"], "k": c["acl_key"]} for c in changes if c["rows"] < 0]
    if emptied:  # a term no row of a group holds any more leaves no row behind
        conn.execute(
            delete(term_groups).where(
                term_groups.c.term == bindparam("t"),
                term_groups.c.acl_key == bindparam("k"),
                term_groups.c.rows <= 0,
            ),
            emptied,
        )


def row_keys(conn: Connection, doc_ids: Sequence[str]) -> dict[int, tuple[str, str | None]]:
    """Each lexical row of these documents: (its document, the ACL key of that document as stored now)."""
    acl: dict[str, set[str]] = {doc_id: set() for doc_id in doc_ids}
    if not acl:
        return {}
    for doc_id, principal in conn.execute(
        select(doc_acl.c.doc_id, doc_acl.c.principal).where(doc_acl.c.doc_id.in_(list(acl)))
    ):
        acl[doc_id].add(principal)
    keys = {doc_id: acl_key(held) for doc_id, held in acl.items()}
    rows = conn.execute(select(chunks.c.rowid_fts, chunks.c.doc_id).where(chunks.c.doc_id.in_(list(acl))))
    return {int(rowid): (doc_id, keys[doc_id]) for rowid, doc_id in rows}


def is_built(conn: Connection) -> bool:
    return conn.execute(select(store_meta.c.value).where(store_meta.c.key == BUILT_KEY)).scalar() is not None


def build(conn: Connection, index: ModuleType) -> None:
    """Counts every row of the index afresh: once, for a store written before the counts were kept (or after
    migration 0007 recreated the table). The caller holds the store's write lock."""
    if is_built(conn):
        return
    conn.execute(delete(term_groups))
    acl: dict[str, set[str]] = {}
    for doc_id, principal in conn.execute(select(doc_acl.c.doc_id, doc_acl.c.principal)):
        acl.setdefault(doc_id, set()).add(principal)
    keys = {doc_id: acl_key(held) for doc_id, held in acl.items()}
    rows = [(int(r), d) for r, d in conn.execute(select(chunks.c.rowid_fts, chunks.c.doc_id))]
    for start in range(0, len(rows), ROWS_PER_READ):
        part = rows[start : start + ROWS_PER_READ]
        adjust(conn, index, {rowid: (None, keys.get(doc_id)) for rowid, doc_id in part})
    conn.execute(insert(store_meta).values(key=BUILT_KEY, value="1"))
    if rows:
        log.info("term counts built", extra={"rows": len(rows)})
