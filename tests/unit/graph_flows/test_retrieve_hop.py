"""A graph hop reads the named document for what the passage naming it leaves unsaid."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph_flows.config import FlowConfig
from graph_flows.nodes.retrieve import evidence_from_hit, retrieve
from tests.unit.graph_flows.test_stop_rules import FakeKnowledge, _Hit

SONG = _Hit("t:song#0", "t:song", "Blue Harbour", "Blue Harbour is a song performed by Nina Vale.")
VALE = [
    _Hit(
        "t:vale#0",
        "t:vale",
        "Nina Vale",
        "Nina Vale performed the song Blue Harbour and many a song after it.",
    ),
    _Hit("t:vale#1", "t:vale", "Nina Vale", "Her later albums sold well in Europe."),
    _Hit("t:vale#2", "t:vale", "Nina Vale", "Vale died in Tromsø in 2011, aged 70."),
]


class _People(FakeKnowledge):
    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[_Hit]:
        return VALE if doc_id == "t:vale" else [SONG]

    def resolve(self, names: Any, principals: frozenset[str]) -> dict[str, list[str]]:
        return {n: ["t:vale"] for n in names if n == "Nina Vale"}


def _state(question: str, *, entities: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    """A flow state about to retrieve: the fields a test sets over a first turn's graph round."""
    return {
        "principals": ["public"],
        "round": 1,
        "turn": 1,
        "evidence": [],
        "plan": {"effective_question": question, "entities": entities or []},
        "question": question,
        "tried_queries": [],
        "direction": "graph",
        "next_queries": [],
        "modes": ["text", "graph"],
        "seeds": [],
        "seed_origins": {},
        "read_docs": [],
        "trace": [],
        **fields,
    }


def test_a_hop_reads_the_chunk_with_what_the_bridge_leaves_unsaid() -> None:
    question = "where did the performer of the song Blue Harbour die?"
    state = _state(
        question,
        evidence=[evidence_from_hit("E1", SONG, 1, 1, "text", None, 1.0)],
        entities=["Blue Harbour"],
        seeds=["Nina Vale"],
        seed_origins={"Nina Vale": "E1"},
        read_docs=["t:song"],
    )
    out = retrieve(state, knowledge=_People(), flow_settings=FlowConfig())  # type: ignore[arg-type]
    read = [e["chunk_id"] for e in out["evidence"] if e["doc_id"] == "t:vale"]
    # the chunk that repeats the song's words is not what the hop is for: where she died is
    assert "t:vale#2" in read
    assert all(e["parent"] == "E1" for e in out["evidence"] if e["doc_id"] == "t:vale")


TRIAL = _Hit(
    "t:kb4#0", "t:kb4", "KB-4: Kiln trial", "Kiln trial of glaze 3 runs at the Leeds bakery of Crumb and Co."
)
CRUMB = [
    _Hit("t:crumb#0", "t:crumb", "Crumb and Co", "The Leeds bakery also hosts our kiln trial of glaze 3."),
    _Hit("t:crumb#1", "t:crumb", "Crumb and Co", "Founded in 1950 as a family bakery."),
    _Hit("t:crumb#2", "t:crumb", "Crumb and Co", "Terms: a discount of 12% on glaze orders."),
]


@dataclass
class _Neighbours(FakeKnowledge):
    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[_Hit]:
        return CRUMB if doc_id == "t:crumb" else [TRIAL]

    def expand(self, seeds: Any, principals: frozenset[str], k: int = 10) -> list[tuple[str, float]]:
        return [("t:crumb", 0.9)]

    def neighbors(self, seeds: Any, principals: frozenset[str], types: Any = None) -> list[Any]:
        return [TRIAL]  # the bakery's page and the ticket are linked


def test_an_expanded_neighbour_is_read_for_what_the_passage_before_it_leaves_unsaid() -> None:
    question = "what discount do we give the bakery that hosts our kiln trial?"
    trial = {**evidence_from_hit("E1", TRIAL, 1, 1, "text", None, 1.0), "relevance": 0.9}
    state = _state(question, evidence=[trial], read_docs=["t:kb4"])
    out = retrieve(state, knowledge=_Neighbours(), flow_settings=FlowConfig())  # type: ignore[arg-type]
    read = {e["chunk_id"] for e in out["evidence"] if e["doc_id"] == "t:crumb"}
    # the discount (what the ticket leaves unsaid), and the section saying this is the bakery that hosts it
    assert read == {"t:crumb#2", "t:crumb#0"}
    assert all(e["parent"] == "E1" for e in out["evidence"] if e["doc_id"] == "t:crumb")


@dataclass
class _Shelf(FakeKnowledge):
    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[_Hit]:
        return [CRUMB[2]]

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[_Hit]:
        return CRUMB


def test_a_follow_up_reads_afresh_what_an_earlier_turn_read() -> None:
    question = "and the discount on glaze?"
    earlier = evidence_from_hit("E1", CRUMB[2], 1, 1, "text", None, 1.0)
    state = _state(
        question,
        round=0,
        turn=2,
        evidence=[earlier],
        direction="text",
        next_queries=[question],
        read_docs=["t:crumb"],
    )
    out = retrieve(state, knowledge=_Shelf(), flow_settings=FlowConfig())  # type: ignore[arg-type]
    again = [e for e in out["evidence"] if e["chunk_id"] == "t:crumb#2" and e["turn"] == 2]
    assert len(again) == 1 and again[0]["id"] != "E1"


LEAVE = _Hit("t:leave#0", "t:leave", "Unpaid Leave of Absence", "Staff may take up to three months unpaid.")
SHARED = [_Hit(f"t:p{n}#0", f"t:p{n}", f"Policy {n}", "A job policy with pay rules.") for n in range(8)]


@dataclass
class _Meaning(FakeKnowledge):
    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[_Hit]:
        return [LEAVE][:k] if mode == "dense" else SHARED[:k]

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[_Hit]:
        return [h for h in [LEAVE, *SHARED] if h.doc_id == doc_id]

    def term_frequencies(self, stems: Any, principals: frozenset[str]) -> tuple[int, dict[str, int]]:
        return 100, {s: 0 if s == "paycheck" else 3 for s in stems}  # no page says "paycheck"


def test_the_first_round_reads_the_passage_closest_in_meaning_alone() -> None:
    question = "could I step away from my job for a while with no paycheck?"
    state = _state(question, round=0, direction="text", next_queries=[question])
    out = retrieve(state, knowledge=_Meaning(), flow_settings=FlowConfig())  # type: ignore[arg-type]
    assert "t:leave" in [e["doc_id"] for e in out["evidence"]]
    worded = _state("could I step away from my job for a while with no pay?", round=0, direction="text")
    worded["next_queries"] = [worded["question"]]  # every word on some page: text search reads it as asked
    out = retrieve(worded, knowledge=_Meaning(), flow_settings=FlowConfig())  # type: ignore[arg-type]
    assert "t:leave" not in [e["doc_id"] for e in out["evidence"]]
    lexical_only = {**state, "modes": ["graph"]}  # without text search: no dense reading either
    out = retrieve(lexical_only, knowledge=_Meaning(), flow_settings=FlowConfig())  # type: ignore[arg-type]
    assert "t:leave" not in [e["doc_id"] for e in out["evidence"]]
