"""The PostgreSQL full-text index against the FTS5 one, on the real servers: the same terms match the same
chunks, a stem counts the same documents, and what an asker cannot see never shapes the asker's scores."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from connectors.base import SourceDoc
from connectors.knowledge import lexical, lexical_pg
from connectors.knowledge.store import KnowledgeStore
from connectors.sync import sync_source
from tests.conftest import EXAMPLES, Stack, folder

PUBLIC = frozenset({"public"})
QUERIES = ["why was ENG-142 reopened", "Kestrel second plant", "travel reimbursement policy", "Q3 budget"]


@pytest.fixture(scope="module")
def both(servers, tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeStore]:  # type: ignore[no-untyped-def]
    built = {}
    for kind in ("embedded", "servers"):
        stack = Stack(kind, tmp_path_factory.mktemp(kind), servers if kind == "servers" else None)
        built[kind] = KnowledgeStore(stack.engine(), stack.vectors())
        sync_source(built[kind], folder(EXAMPLES))
    yield built
    for store in built.values():
        store.engine.dispose()


def test_the_backend_follows_the_database(both: dict[str, KnowledgeStore]) -> None:
    assert both["embedded"].lexical is lexical and both["servers"].lexical is lexical_pg


@pytest.mark.parametrize("query", QUERIES)
def test_the_same_query_matches_the_same_chunks(both: dict[str, KnowledgeStore], query: str) -> None:
    matched = {}
    for kind, store in both.items():
        with store.engine.connect() as conn:
            matched[kind] = {h.chunk_id for h in store.lexical.search(conn, query, PUBLIC, 1000)}
    assert matched["servers"] and matched["servers"] == matched["embedded"]


def test_stems_count_the_same_documents(both: dict[str, KnowledgeStore]) -> None:
    stems = ["kestrel", "budget", "reimburs", "android", "releas", "slip", "nonexistentterm"]
    dana = frozenset({"public", "user:dana@acme.io", "group:acme:ops", "group:acme:leadership"})
    for principals in (PUBLIC, dana):
        counts = [store.term_frequencies(stems, principals) for store in both.values()]
        assert counts[0] == counts[1] and counts[0][1]["kestrel"] > 0


def _doc(n: str, text: str, acl: set[str]) -> SourceDoc:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    return SourceDoc(id=f"t:{n}", source="t", kind="page", title=f"Page {n}", text=text, updated_at=when,
                     acl=frozenset(acl))  # fmt: skip


@pytest.mark.parametrize(
    "stack", ["servers"], indirect=True
)  # the FTS5 side: connectors/knowledge/lexical.py
def test_hidden_chunks_never_shape_the_askers_scores(
    make_store: Callable[..., KnowledgeStore], stack: Stack
) -> None:
    """Same visible corpus, with and without a restricted page full of the query's words: identical scores."""
    visible = [_doc("a", "The gearbox order from Kestrel slipped.", {"public"}),
               _doc("b", "Kestrel ships gearboxes and motors.", {"public"}),
               _doc("c", "Lunch menu for Friday.", {"public"})]  # fmt: skip
    plain, padded = make_store("plain"), make_store("padded")
    plain.upsert(visible)
    padded.upsert([*visible, _doc("h", "Kestrel gearbox " * 40, {"group:acme:leadership"})])
    scores = []
    for store in (plain, padded):
        with store.engine.connect() as conn:
            scores.append(
                [
                    (h.chunk_id, round(h.score, 9))
                    for h in store.lexical.search(conn, "kestrel gearbox", PUBLIC, 10)
                ]
            )
    assert scores[0] == scores[1] and len(scores[0]) == 2
    with padded.engine.connect() as conn:
        assert "t:h#0" in {
            h.chunk_id
            for h in padded.lexical.search(conn, "kestrel gearbox", frozenset({"group:acme:leadership"}), 10)
        }


def test_both_rank_alike_past_the_candidate_budget(
    both: dict[str, KnowledgeStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a budget smaller than the common terms' rows (as at 100k chunks), the rare terms choose the
    candidates on both databases, and both give the same chunks with the same scores."""
    dana = frozenset({"public", "user:dana@acme.io", "group:acme:ops", "group:acme:leadership"})

    def ranked() -> list[list[tuple[str, float]]]:
        found = []
        for principals in (PUBLIC, dana):
            for query in QUERIES:
                for store in both.values():
                    with store.engine.connect() as conn:
                        hits = store.lexical.search(conn, query, principals, 10)
                    found.append([(h.chunk_id, round(h.score, 9)) for h in hits])
        return found

    full = ranked()
    monkeypatch.setattr(lexical, "CANDIDATE_BUDGET", 3)
    budgeted = ranked()
    assert budgeted[0::2] == budgeted[1::2] and all(budgeted)  # embedded, servers: alike
    assert budgeted != full  # the budget did leave rows out
