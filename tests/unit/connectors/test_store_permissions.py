"""A restricted document never reaches a principal set that lacks its ACL, through any retrieval call.

Table-driven over users x calls on the demo corpus, plus alias resolution across names.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.knowledge.store import KnowledgeStore
from connectors.sync import sync_source
from tests.conftest import EXAMPLES, STACKS, Stack, folder

BUDGET = "acme:wiki/finance/q3-budget-2026"  # group:acme:finance
NEGOTIATION = "acme:wiki/ops/kestrel-negotiation-notes"  # user:dana@acme.io
USERS = {
    "carol": frozenset({"public", "user:carol@acme.io"}),
    "bob": frozenset({"public", "user:bob@acme.io", "group:acme:finance"}),
    "dana": frozenset({"public", "user:dana@acme.io", "group:acme:ops", "group:acme:leadership"}),
}
VISIBLE = {("bob", BUDGET), ("dana", NEGOTIATION)}


@pytest.fixture(scope="module", params=STACKS)
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeStore]:
    """The demo corpus on SQLite + embedded Chroma, and on PostgreSQL (its own full-text index) + Chroma server."""
    servers = request.getfixturevalue("servers") if request.param == "servers" else None
    stack = Stack(request.param, tmp_path_factory.mktemp("perm"), servers)
    built = KnowledgeStore(stack.engine(), stack.vectors())
    sync_source(built, folder(EXAMPLES))
    yield built
    built.engine.dispose()


def _docs_via(store: KnowledgeStore, call: str, doc: str, principals: frozenset[str]) -> set[str]:
    title = {BUDGET: "Q3 2026 Budget", NEGOTIATION: "Kestrel negotiation notes"}[doc]
    if call in {"bm25", "dense", "hybrid"}:
        return {
            h.doc_id
            for h in store.search_text(f"{title} budget price negotiation", principals, 50, mode=call)
        }
    if call == "neighbors":
        seeds = [
            "acme:wiki/ops/kestrel-motion-systems",
            "acme:wiki/finance/supplier-contract-terms",
            "acme:FIN-7",
        ]
        return {n.doc_id for n in store.neighbors(seeds, principals)}
    if call == "expand":
        return {
            d
            for d, _ in store.expand(["acme:wiki/ops/kestrel-motion-systems", "acme:FIN-7"], principals, 100)
        }
    if call == "read":
        return {h.doc_id for h in [store.read(f"{doc}#0", principals)] if h is not None}
    if call == "chunks_of":
        return {h.doc_id for h in store.chunks_of(doc, principals)}
    if call == "document":
        return {d.id for d in [store.document(doc, principals)] if d is not None}
    if call == "resolve":
        return {d for ids in store.resolve([title, doc], principals).values() for d in ids}
    raise AssertionError(call)


CALLS = ["bm25", "dense", "hybrid", "neighbors", "expand", "read", "chunks_of", "document", "resolve"]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("user", sorted(USERS))
@pytest.mark.parametrize("doc", [BUDGET, NEGOTIATION])
def test_restricted_documents_only_reach_their_audience(
    store: KnowledgeStore, call: str, user: str, doc: str
) -> None:
    found = _docs_via(store, call, doc, USERS[user])
    if (user, doc) not in VISIBLE:
        assert doc not in found
    elif call in {"read", "chunks_of", "document", "resolve"}:
        assert doc in found  # the direct calls must work for the audience, or the test proves nothing


def test_alias_lookup_finds_the_same_supplier_under_every_name(store: KnowledgeStore) -> None:
    names = ["S-8", "Supplier 8", "supplier-8", "Kestrel Motion Systems"]
    resolved = store.resolve(names, USERS["carol"])
    assert {tuple(v) for v in resolved.values()} == {("acme:wiki/ops/kestrel-motion-systems",)}


def test_graph_edges_from_restricted_pages_do_not_connect_for_outsiders(store: KnowledgeStore) -> None:
    public = store.graph(USERS["carol"])
    finance = store.graph(USERS["bob"])
    assert BUDGET not in public.docs and BUDGET in finance.docs
    assert all(BUDGET not in {n for n, _, _ in links} for links in public.adjacency.values())


def test_dense_search_filters_both_ways_wide_and_narrow_askers(make_store) -> None:  # type: ignore[no-untyped-def]
    """Askers who see most chunks get Chroma's unfiltered nearest chunks, filtered by the store; the others get
    Chroma's ACL filter. Either way only visible chunks come back, and as many as were asked for."""
    from datetime import UTC, datetime

    from connectors.base import SourceDoc

    def doc(n: int, acl: str, text: str) -> SourceDoc:
        return SourceDoc(
            id=f"t:{n}", source="t", kind="page", title=f"Doc {n}", text=text,
            updated_at=datetime(2026, 1, 1, tzinfo=UTC), acl=frozenset({acl}),
        )  # fmt: skip

    store = make_store()
    store.upsert([doc(n, "public", f"harbour crane schedule {n}") for n in range(6)])
    store.upsert([doc(n, "group:t:x", f"secret zebra plan {n}") for n in range(6, 10)])
    wide, narrow = frozenset({"public"}), frozenset({"group:t:x"})
    assert (store._visible_share(wide), store._visible_share(narrow)) == (0.6, 0.4)
    seen_wide = {h.doc_id for h in store.search_text("secret zebra plan", wide, 5, mode="dense")}
    assert len(seen_wide) == 5 and all(int(d.split(":")[1]) < 6 for d in seen_wide)
    seen_narrow = {h.doc_id for h in store.search_text("harbour crane schedule", narrow, 5, mode="dense")}
    assert seen_narrow == {f"t:{n}" for n in range(6, 10)}


def test_hidden_chunks_holding_the_query_change_neither_the_dense_hit_count_nor_the_hits(
    make_store,  # type: ignore[no-untyped-def]
) -> None:
    """A wide asker (most chunks visible: the store filters Chroma's unfiltered nearest chunks) asks about a
    term that 60 hidden chunks hold. Those crowd the nearest chunks; the asker must still get the same hits,
    as many, as on a store whose hidden chunks say something else."""
    from datetime import UTC, datetime

    from connectors.base import SourceDoc

    def doc(n: int, acl: str, text: str) -> SourceDoc:
        return SourceDoc(
            id=f"t:{n}", source="t", kind="page", title=f"Doc {n}", text=text,
            updated_at=datetime(2026, 1, 1, tzinfo=UTC), acl=frozenset({acl}),
        )  # fmt: skip

    public = [doc(n, "public", f"harbour crane schedule {n}" + " zebra" * (n % 2)) for n in range(100)]
    seen: list[list[str]] = []
    for name, hidden_text in (("unrelated", "quarterly ledger audit {n}"), ("holding", "zebra zebra {n}")):
        store = make_store(name)
        store.upsert(public)
        store.upsert([doc(n, "group:t:x", hidden_text.format(n=n)) for n in range(100, 160)])
        assert store._visible_share(frozenset({"public"})) == 100 / 160  # the unfiltered path is taken
        hits = store.search_text("zebra", frozenset({"public"}), 20, mode="dense")
        assert all(int(h.doc_id.split(":")[1]) < 100 for h in hits)
        seen.append([int(h.doc_id.split(":")[1]) for h in hits])
    # as many hits, each a visible chunk that holds the term; which 20 of the 50 near-equal ones an approximate
    # index returns may differ between two indexes
    assert [len(s) for s in seen] == [20, 20] and all(n % 2 == 1 for s in seen for n in s)
