"""The source scope of a turn: which documents an entry names, and that the scoped reader only ever drops
records (never adds one the asker's principals did not return)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

from connectors.knowledge.graph import Neighbor, VisibleGraph
from connectors.knowledge.results import DocumentInfo, Hit
from graph_flows.scope import Scope, ScopedKnowledge, source_scope


@pytest.mark.parametrize(
    ("entries", "doc_id", "space", "allowed"),
    [
        (["acme"], "acme:wiki/hr/pto-policy", None, True),
        (["acme"], "other:wiki/hr/pto-policy", None, False),
        (["acme/wiki/hr"], "acme:wiki/hr/pto-policy", None, True),
        (["acme/wiki/hr"], "acme:wiki/hrx/pto-policy", None, False),  # a prefix of a name is not a folder
        (["acme/wiki/hr"], "acme:wiki/finance/q3-budget", None, False),
        (["jira/ENG"], "jira:ENG-142", None, True),
        (["jira/ENG"], "jira:FIN-7", None, False),
        (["wiki/OPS"], "wiki:123456", "OPS", True),  # a Confluence page: its space is in its metadata
        (["wiki/OPS"], "wiki:123456", "ENG", False),
        (["acme/wiki/hr", "acme"], "acme:FIN-7", None, True),  # the whole source wins over a part of it
        (["acme/wiki/hr"], "entity:kestrel", None, True),  # entities only join documents, checked themselves
    ],
    ids=[
        "source",
        "other-source",
        "folder",
        "folder-prefix",
        "other-folder",
        "project",
        "other-project",
        "space",
        "other-space",
        "whole-wins",
        "entity",
    ],
)
def test_an_entry_names_its_documents(
    entries: list[str], doc_id: str, space: str | None, allowed: bool
) -> None:
    assert Scope.parse(entries).allows(doc_id, lambda: {"space": space} if space else {}) is allowed


def _hit(doc_id: str, n: int = 0) -> Hit:
    return Hit(title=doc_id, url="", source=doc_id.split(":")[0], kind="page", updated_at="", version="",
               chunk_id=f"{doc_id}#{n}", doc_id=doc_id, text="")  # fmt: skip


class _Store:
    """What the asker's principals return; records how many hits each search asked for."""

    def __init__(self, docs: list[str]) -> None:
        self.docs, self.asked = docs, []

    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[Hit]:
        self.asked.append(k)
        return [_hit(d) for d in self.docs[:k]]

    def similarity(
        self, query: str, chunk_ids: Sequence[str], principals: frozenset[str]
    ) -> dict[str, float]:
        return {}

    def text_similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        return []

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[Hit]:
        return [_hit(doc_id)] if doc_id in self.docs else []

    def read(self, chunk_id: str, principals: frozenset[str]) -> Hit | None:
        doc = chunk_id.rsplit("#", 1)[0]
        return _hit(doc) if doc in self.docs else None

    def neighbors(
        self, seeds: Iterable[str], principals: frozenset[str], types: set[str] | None = None
    ) -> list[Neighbor]:
        return [Neighbor(doc_id=d, via="links_to", seed="x", outgoing=True) for d in self.docs]

    def expand(
        self, seeds: Iterable[str], principals: frozenset[str], k: int = 10
    ) -> list[tuple[str, float]]:
        return [(d, 1.0) for d in self.docs]

    def resolve(self, names: Iterable[str], principals: frozenset[str]) -> dict[str, list[str]]:
        return {name: list(self.docs) for name in names}

    def graph(self, principals: frozenset[str]) -> VisibleGraph:
        return VisibleGraph(docs=set(self.docs), titles={d: d for d in self.docs},
                            names={"kestrel": set(self.docs)},
                            adjacency={d: [(o, "links_to", True) for o in self.docs if o != d] for d in self.docs})  # fmt: skip

    def term_frequencies(
        self, stems: Iterable[str], principals: frozenset[str]
    ) -> tuple[int, dict[str, int]]:
        return 0, {}

    def document(self, doc_id: str, principals: frozenset[str]) -> DocumentInfo | None:
        return None


FINANCE = [f"acme:wiki/finance/doc{i}" for i in range(30)]
DOCS = [*FINANCE, "acme:wiki/hr/pto-policy", "acme:wiki/hr/leave"]
ANN = frozenset({"user:ann@acme.io"})


def test_a_scoped_search_asks_for_more_until_it_finds_k_in_scope() -> None:
    store = _Store(DOCS)
    with source_scope(["acme/wiki/hr"]):
        hits = ScopedKnowledge(store).search_text("leave", ANN, 2)
    assert [h.doc_id for h in hits] == ["acme:wiki/hr/pto-policy", "acme:wiki/hr/leave"]
    assert store.asked == [8, 32]  # k x 4 found none in scope; k x 16 found both


def test_every_read_drops_what_is_outside_the_scope_and_adds_nothing() -> None:
    store, hidden = _Store(DOCS), "acme:wiki/hr/leave"
    knowledge = ScopedKnowledge(store)
    with source_scope(["acme/wiki/finance"]):
        assert knowledge.chunks_of(hidden, ANN) == [] and knowledge.read(f"{hidden}#0", ANN) is None
        assert {n.doc_id for n in knowledge.neighbors(["x"], ANN)} == set(FINANCE)
        assert {d for d, _ in knowledge.expand(["x"], ANN)} == set(FINANCE)
        assert set(knowledge.resolve(["kestrel"], ANN)["kestrel"]) == set(FINANCE)
        graph = knowledge.graph(ANN)
        assert graph.docs == set(FINANCE) and graph.names["kestrel"] == set(FINANCE)
        assert all(o in FINANCE for edges in graph.adjacency.values() for o, _, _ in edges)
    assert knowledge.read(f"{hidden}#0", ANN) is not None  # outside the turn: no scope


def test_a_scope_never_returns_what_the_principals_did_not() -> None:
    store = _Store(FINANCE[:3])  # the asker's principals return only these
    with source_scope(["acme"]):
        found = ScopedKnowledge(store).search_text("anything", ANN, 10)
    assert {h.doc_id for h in found} == set(FINANCE[:3])
