"""Per-term, per-ACL-group counts kept at write time: a term only hidden chunks hold reads, counts and costs as a
term nobody holds, and the counts follow every write (index, permission sync, deletion) on both databases."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import delete, event, select

from connectors.base import PUBLIC, SourceDoc
from connectors.knowledge import store as store_module
from connectors.knowledge import term_counts
from connectors.knowledge.store import KnowledgeStore
from connectors.knowledge.tables import store_meta, term_groups
from tests.conftest import STACKS, Stack

WHEN = datetime(2026, 1, 5, tzinfo=UTC)
BOARD = "group:t:board"
OUTSIDER = frozenset({PUBLIC})
INSIDER = frozenset({PUBLIC, BOARD})


def _doc(native: str, text: str, acl: set[str], title: str = "") -> SourceDoc:
    return SourceDoc(
        id=f"t:{native}",
        source="t",
        kind="page",
        title=title or f"Page {native}",
        text=text,
        updated_at=WHEN,
        acl=frozenset(acl),
    )


OPEN = [_doc(f"p{n}", f"The Kestrel gearbox order {n} shipped late.", {PUBLIC}) for n in range(8)]
# Only the board may open these: their words and their ticket key appear nowhere else.
HIDDEN = [
    _doc(f"h{n}", "Zebrafinch merger terms, see BRD-77. " * (n + 1), {BOARD}, title="Zebrafinch deal")
    for n in range(12)
]


def _counts(store: KnowledgeStore) -> dict[tuple[str, str], int]:
    with store.engine.connect() as conn:
        return {(t, k): n for t, k, n in conn.execute(select(term_groups))}


def _recounted(store: KnowledgeStore) -> dict[tuple[str, str], int]:
    """The oracle: the same store's counts made afresh from every row, as a store from before them gets."""
    with store.engine.begin() as conn:
        conn.execute(delete(store_meta).where(store_meta.c.key == term_counts.BUILT_KEY))
        term_counts.build(conn, store.lexical)
    return _counts(store)


def test_an_acl_key_names_the_set_of_principals() -> None:
    assert term_counts.acl_key({"b", "a"}) == term_counts.acl_key(["a", "b", "a"])
    assert term_counts.acl_key({"a"}) != term_counts.acl_key({"a", "b"})
    assert term_counts.acl_key(set()) is None  # nobody: counted in no group


@pytest.mark.parametrize("stack", STACKS, indirect=True)
def test_a_term_only_hidden_chunks_hold_reads_as_a_term_nobody_holds(
    make_store: Callable[..., KnowledgeStore], stack: Stack
) -> None:
    store = make_store()
    store.upsert(OPEN + HIDDEN)
    hidden, absent = ["zebrafinch", "merger"], ["quokkamoon", "wombatish"]
    total, seen = store.term_frequencies(hidden + absent, OUTSIDER)
    assert total == len(OPEN) and set(seen.values()) == {0}
    for held, nobody in [("zebrafinch merger", "quokkamoon wombatish"), ("BRD-77", "QQQ-41")]:
        assert store.search_text(held, OUTSIDER, 10, mode="bm25") == []
        assert store.search_text(nobody, OUTSIDER, 10, mode="bm25") == []
    # the same words for the board: the counts are there, they are only not the outsider's
    _, board = store.term_frequencies(hidden, INSIDER)
    assert board == {"zebrafinch": len(HIDDEN), "merger": len(HIDDEN)}
    assert {h.doc_id for h in store.search_text("BRD-77", INSIDER, 20, mode="bm25")} == {d.id for d in HIDDEN}


@pytest.fixture
def sqlite_steps(
    make_store: Callable[..., KnowledgeStore], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[KnowledgeStore, list[int]]]:
    """A store whose SQLite connections count the virtual-machine instructions they run: the work a lookup
    does, measured exactly and the same on every machine (unlike its time)."""
    monkeypatch.setattr(store_module, "GENERATION_TTL_S", 0.0)  # every search reads the generation: alike
    store = make_store()
    store.upsert(OPEN + HIDDEN)
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0  # go on

    @event.listens_for(store.engine, "checkout")
    def _count(dbapi_conn, _record, _proxy) -> None:  # type: ignore[no-untyped-def]
        dbapi_conn.set_progress_handler(tick, 1)

    store.search_text("kestrel", OUTSIDER, 10, mode="bm25")  # this generation's aggregates, read once
    store.term_frequencies([], OUTSIDER)  # and the visible total, counted once
    yield store, steps
    event.remove(store.engine, "checkout", _count)


def test_sqlite_does_the_same_work_for_a_hidden_term_as_for_an_absent_one(
    sqlite_steps: tuple[KnowledgeStore, list[int]],
) -> None:
    """Each term on its first use: reading the postings of a hidden term cost a hundred times an absent one."""
    store, steps = sqlite_steps
    work = {}
    for query in ["zebrafinch", "quokkamoon", "merger", "wombatish", "BRD-77", "QQQ-41"]:
        steps[0] = 0
        assert store.search_text(query, OUTSIDER, 10, mode="bm25") == []
        work[query] = steps[0]
    assert work["zebrafinch"] == work["quokkamoon"] == work["merger"] == work["wombatish"] > 0
    assert work["BRD-77"] == work["QQQ-41"] > 0
    steps[0] = 0
    store.term_frequencies(["zebrafinc"], OUTSIDER)  # a stem the reasoner asks for, hidden or not
    hidden_stem = steps[0]
    steps[0] = 0
    store.term_frequencies(["quokkamo"], OUTSIDER)
    assert hidden_stem == steps[0] > 0


@pytest.mark.parametrize("stack", STACKS, indirect=True)
def test_the_counts_follow_a_permission_sync_and_a_deletion(
    make_store: Callable[..., KnowledgeStore], stack: Stack
) -> None:
    store = make_store()
    store.upsert(OPEN + HIDDEN)
    assert store.term_frequencies(["kestrel"], OUTSIDER)[1] == {"kestrel": 8}
    assert _counts(store) == _recounted(store)

    narrowed = {d.id: frozenset({BOARD}) for d in OPEN[:3]}  # the permission sync: three pages go private
    narrowed[OPEN[3].id] = frozenset()  # and one to nobody
    assert store.set_acls(narrowed) == 4
    assert store.term_frequencies(["kestrel", "gearbox"], OUTSIDER)[1] == {"kestrel": 4, "gearbox": 4}
    assert store.term_frequencies(["kestrel"], INSIDER)[1] == {"kestrel": 7}
    assert len(store.search_text("kestrel", OUTSIDER, 20, mode="bm25")) == 4
    after_sync = _counts(store)
    assert after_sync == _recounted(store)

    store.delete([OPEN[0].id, OPEN[5].id, *(d.id for d in HIDDEN)])
    assert store.term_frequencies(["kestrel"], OUTSIDER)[1] == {"kestrel": 3}
    assert store.term_frequencies(["kestrel", "zebrafinch"], INSIDER)[1] == {"kestrel": 5, "zebrafinch": 0}
    assert not any(term == "zebrafinch" for term, _ in _counts(store))  # nothing left behind
    assert _counts(store) == _recounted(store) != after_sync

    store.upsert([_doc("p1", "Kestrel sold the zebrafinch gearbox.", {PUBLIC})])  # re-indexed, public again
    assert store.term_frequencies(["kestrel", "zebrafinch"], OUTSIDER)[1] == {"kestrel": 4, "zebrafinch": 1}
    assert _counts(store) == _recounted(store)


@pytest.mark.parametrize("stack", STACKS, indirect=True)
def test_a_store_from_before_the_counts_counts_its_rows_when_opened(
    make_store: Callable[..., KnowledgeStore], stack: Stack
) -> None:
    store = make_store()
    store.upsert(OPEN + HIDDEN)
    kept = _counts(store)
    with store.engine.begin() as conn:  # as an older Sleuth, or migration 0007, leaves it
        conn.execute(delete(term_groups))
        conn.execute(delete(store_meta).where(store_meta.c.key == term_counts.BUILT_KEY))
    reopened = make_store()
    assert _counts(reopened) == kept and kept
    assert reopened.term_frequencies(["zebrafinch"], INSIDER)[1] == {"zebrafinch": len(HIDDEN)}
