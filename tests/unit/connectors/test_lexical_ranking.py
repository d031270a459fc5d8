"""Lexical ranking sees only what the asker may see: documents hidden from them change neither the order nor
the scores of what they get (BM25's document frequencies and lengths are a side channel otherwise)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from connectors.base import PUBLIC, SourceDoc
from connectors.database import make_engine
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from connectors.knowledge.store import KnowledgeStore

WHEN = datetime(2026, 1, 5, tzinfo=UTC)
QUERY = "kestrel motor warranty"


def _doc(native: str, title: str, text: str, acl: set[str]) -> SourceDoc:
    return SourceDoc(
        id=f"t:{native}", source="t", kind="page", title=title, text=text, updated_at=WHEN, acl=frozenset(acl)
    )


PUBLIC_DOCS = [
    _doc("a", "Notes", "Kestrel kestrel kestrel motor.", {PUBLIC}),
    _doc(
        "b", "Terms", "Warranty warranty warranty motor, with a long tail of other words after it.", {PUBLIC}
    ),
    _doc("c", "Shipping", "Boxes leave the dock on Fridays.", {PUBLIC}),
    _doc("d", "Holidays", "The office closes in August.", {PUBLIC}),
]
HIDDEN_DOCS = [
    _doc(
        f"h{n}",
        f"Kestrel deal {n}",
        "Kestrel kestrel kestrel pricing and the kestrel rebate.",
        {"group:t:fin"},
    )
    for n in range(15)
]


def _store(root: Path, docs: list[SourceDoc]) -> KnowledgeStore:
    store = KnowledgeStore(
        make_engine(f"sqlite:///{root / 'db.sqlite'}"), ChunkVectors(HashEmbedder(), path=root / "chroma")
    )
    store.upsert(docs)
    return store


def _ranking(store: KnowledgeStore, principals: frozenset[str]) -> list[tuple[str, float]]:
    hits = store.search_text(QUERY, principals, 10, mode="bm25")
    return [(h.doc_id, round(h.score, 9)) for h in hits]


def test_hidden_documents_do_not_change_the_visible_ranking(tmp_path: Path) -> None:
    alone = _store(tmp_path / "alone", PUBLIC_DOCS)
    crowded = _store(tmp_path / "crowded", PUBLIC_DOCS + HIDDEN_DOCS)
    outsider = frozenset({PUBLIC})

    assert _ranking(crowded, outsider) == _ranking(alone, outsider)
    assert [d for d, _ in _ranking(alone, outsider)][:2] == ["t:a", "t:b"]


def test_an_insider_ranks_with_the_hidden_documents_counted(tmp_path: Path) -> None:
    crowded = _store(tmp_path / "crowded", PUBLIC_DOCS + HIDDEN_DOCS)
    insider = frozenset({PUBLIC, "group:t:fin"})
    ranked = [d for d, _ in _ranking(crowded, insider)]
    assert set(ranked) >= {"t:a", "t:b", "t:h0"} and len(ranked) == 10


def test_seeing_everything_ranks_as_fts5_bm25_does(tmp_path: Path) -> None:
    from sqlalchemy import text

    from connectors.knowledge import lexical

    crowded = _store(tmp_path / "crowded", PUBLIC_DOCS + HIDDEN_DOCS)
    everyone = frozenset({PUBLIC, "group:t:fin"})
    with crowded.engine.connect() as conn:
        ours = lexical.search(conn, QUERY, everyone, 50)
        theirs = conn.execute(
            text(
                "SELECT c.id, -bm25(chunks_fts, 1.5, 1.0) FROM chunks_fts JOIN chunks c ON c.rowid_fts = "
                "chunks_fts.rowid WHERE chunks_fts MATCH :e ORDER BY bm25(chunks_fts, 1.5, 1.0), c.id"
            ),
            {"e": lexical.match_expression(QUERY)},
        ).all()

    def ordered(pairs: list[tuple[str, float]]) -> list[tuple[str, float]]:
        return sorted(((c, round(s, 6)) for c, s in pairs), key=lambda p: (-p[1], p[0]))  # ties: any order

    assert ordered([(h.chunk_id, h.score) for h in ours]) == ordered([(c, s) for c, s in theirs])
    assert [h.chunk_id for h in ours[:2]] == [c for c, _ in theirs[:2]]


COMMON_DOCS = [
    _doc(f"c{n}", f"Motor log {n}", f"The motor ran {'warm ' * (n % 4)}on shift {n}.", {PUBLIC})
    for n in range(30)
]


@pytest.mark.parametrize("marking_cost", [1, 1000], ids=["rows-read", "postings-filtered"])
def test_past_the_candidate_budget_the_rare_terms_choose_and_the_scores_stay_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marking_cost: int
) -> None:
    """With more matching rows than the budget, rows holding only the common term ("motor", in 32 chunks) are
    left out, and the chunks the rare terms brought in keep exactly the scores a full evaluation gives them,
    whether the common term is counted in the candidates' text or in its postings."""
    from connectors.knowledge import lexical

    store = _store(tmp_path, PUBLIC_DOCS + COMMON_DOCS + HIDDEN_DOCS)
    outsider = frozenset({PUBLIC})

    def bm25() -> list[tuple[str, float]]:
        with store.engine.connect() as conn:
            return [(h.doc_id, h.score) for h in lexical.search(conn, QUERY, outsider, 10)]

    full = dict(bm25())
    monkeypatch.setattr(lexical, "CANDIDATE_BUDGET", 5)
    monkeypatch.setattr(lexical, "MARKING_COST", marking_cost)
    budgeted = bm25()

    assert [d for d, _ in budgeted] == ["t:a", "t:b"]  # the only visible chunks with "kestrel" or "warranty"
    assert all(math.isclose(full[d], score, rel_tol=1e-12) for d, score in budgeted)
    assert len(full) == 10  # unbudgeted, "motor" alone fills the rest


def test_the_budget_counts_only_visible_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fifteen hidden chunks say "kestrel": for an outsider the term is still rare (one visible chunk), so it
    picks the candidates exactly as in a store without the hidden chunks."""
    from connectors.knowledge import lexical

    monkeypatch.setattr(lexical, "CANDIDATE_BUDGET", 5)
    alone = _store(tmp_path / "alone", PUBLIC_DOCS + COMMON_DOCS)
    crowded = _store(tmp_path / "crowded", PUBLIC_DOCS + COMMON_DOCS + HIDDEN_DOCS)
    outsider = frozenset({PUBLIC})
    assert _ranking(crowded, outsider) == _ranking(alone, outsider)


def test_a_release_number_is_searched_as_the_phrase_of_its_parts(tmp_path: Path) -> None:
    docs = [
        _doc("r", "Release Studio 4.3", "Tracking ticket for the studio release, target June.", {PUBLIC}),
        # "4" and "3" apart, more often: no release 4.3
        _doc(
            "n",
            "Kiln counts",
            "Kiln 4 fires 3 times a day; kiln 3 fires 4 times; kiln 4 rests 3 days.",
            {PUBLIC},
        ),
    ]
    store = _store(tmp_path, docs)
    hits = store.search_text("when does 4.3 ship", frozenset({PUBLIC}), 5, mode="bm25")
    assert hits[0].doc_id == "t:r"
