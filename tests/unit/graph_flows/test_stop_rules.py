"""Stop rules and direction choice as tables, and the loop cap as an exact count of retrieve rounds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from connectors.knowledge.graph import VisibleGraph
from graph_flows.config import FlowConfig
from graph_flows.flow import Investigator, build_flow
from graph_flows.nodes.reflect import choose_direction, stop_reason
from graph_flows.reasoners.base import EntityCandidate, PlanProposal, ReflectionProposal
from graph_flows.reasoners.offline import OfflineReasoner

BASE = dict(
    rounds_done=1,
    max_rounds=3,
    new_evidence=2,
    all_established=False,
    fast_path=False,
    elapsed_s=0.1,
    time_budget_s=20.0,
    next_step_possible=True,
)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({}, None),
        ({"all_established": True}, "sufficient"),
        ({"all_established": True, "fast_path": True}, "fast_path"),
        ({"all_established": True, "fast_path": True, "rounds_done": 2}, "sufficient"),
        ({"rounds_done": 3}, "round_cap"),
        ({"new_evidence": 0}, "no_new_evidence"),
        ({"elapsed_s": 25.0}, "time_budget"),
        ({"next_step_possible": False}, "repeat"),
        ({"rounds_done": 3, "new_evidence": 0}, "round_cap"),
    ],
)
def test_stop_reason(change: dict[str, Any], expected: str | None) -> None:
    assert stop_reason(**{**BASE, **change}) == expected


@pytest.mark.parametrize(
    ("proposed", "seeds", "queries", "stale", "modes", "expected"),
    [
        ("graph", True, True, 0, ["text", "graph"], "graph"),
        ("graph", False, True, 0, ["text", "graph"], "text"),
        ("text", True, False, 0, ["text", "graph"], "graph"),
        ("graph", True, True, 2, ["text", "graph"], "text"),  # two rounds without new entities: switch
        ("text", True, True, 2, ["text", "graph"], "graph"),
        ("graph", True, True, 0, ["text"], "text"),  # loop-text mode never walks the graph
    ],
)
def test_choose_direction(
    proposed: str, seeds: bool, queries: bool, stale: int, modes: list[str], expected: str
) -> None:
    got = choose_direction(proposed, has_seeds=seeds, has_queries=queries, stale_rounds=stale, modes=modes)  # type: ignore[arg-type]
    assert got == expected


@dataclass
class _Hit:
    chunk_id: str
    doc_id: str
    title: str
    text: str
    url: str = ""
    source: str = "t"
    kind: str = "page"
    updated_at: str = "2026-01-01"
    version: str = "1"
    score: float = 0.5


@dataclass
class FakeKnowledge:
    """Every search returns fresh documents unless `same` is set, in which case it returns one forever."""

    same: bool = False
    calls: list[str] = field(default_factory=list)
    counter: int = 0

    def _hit(self) -> _Hit:
        if not self.same:
            self.counter += 1
        n = self.counter
        return _Hit(
            chunk_id=f"t:d{n}#0", doc_id=f"t:d{n}", title=f"Doc {n}", text=f"Doc {n} mentions Thing {n + 1}."
        )

    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[_Hit]:
        self.calls.append(f"search:{query}")
        return [self._hit()]

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[_Hit]:
        self.calls.append(f"chunks:{doc_id}")
        return [self._hit()]

    def read(self, chunk_id: str, principals: frozenset[str]) -> _Hit | None:
        return None

    def neighbors(self, seeds: Any, principals: frozenset[str], types: Any = None) -> list[Any]:
        return []

    def expand(self, seeds: Any, principals: frozenset[str], k: int = 10) -> list[tuple[str, float]]:
        return []

    def resolve(self, names: Any, principals: frozenset[str]) -> dict[str, list[str]]:
        return {n: [f"t:{n}"] for n in names}

    def graph(self, principals: frozenset[str]) -> VisibleGraph:
        return VisibleGraph(docs=set(), titles={}, names={})

    def term_frequencies(self, stems: Any, principals: frozenset[str]) -> tuple[int, dict[str, int]]:
        return 100, {s: 1 for s in stems}

    def similarity(self, query: str, chunk_ids: Any, principals: frozenset[str]) -> dict[str, float]:
        return {}

    def text_similarity(self, query: str, texts: Any) -> list[float]:
        return [0.0 for _ in texts]


class NeverSatisfied(OfflineReasoner):
    """Never establishes anything and always proposes a new entity and a new query: only the cap can stop it."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def plan(self, question: str, **_: Any) -> PlanProposal:
        return PlanProposal(
            aspects=[{"id": "a1", "text": question, "terms": ["x"], "entities": []}],
            entities=[],
            answer_type="thing",
            queries=[question],
            effective_question=question,
        )

    def reflect(self, plan: dict[str, Any], evidence: Any, **_: Any) -> ReflectionProposal:
        self.n += 1
        last = evidence[-1]
        name = f"Thing {int(last['doc_id'].split('d')[-1]) + 1}"
        return ReflectionProposal(
            relevance={e["id"]: 0.5 for e in evidence},
            established={},
            missing=[],
            entities=[EntityCandidate(name=name, evidence_id=last["id"], score=1.0)],
            direction="graph",
            queries=[f"query {'abcdefghij'[self.n % 10] * 3}"],
        )


@pytest.mark.parametrize("cap", [1, 2, 3, 5])
def test_n_configured_rounds_means_exactly_n_retrieve_calls(cap: int) -> None:
    flow = build_flow(FakeKnowledge(), NeverSatisfied(), FlowConfig(max_rounds=cap), checkpointer=None)
    out = Investigator(flow=flow, flow_settings=FlowConfig(max_rounds=cap)).ask(
        "t:c:1", "widgets", asker="a@b.c", principals=frozenset({"public"})
    )
    assert sum(1 for s in out["trace"] if s["node"] == "retrieve") == cap
    assert out["stop_reason"] == "round_cap"


def test_a_loop_that_keeps_returning_the_same_document_stops_before_the_cap() -> None:
    knowledge = FakeKnowledge(same=True)
    flow = build_flow(knowledge, NeverSatisfied(), FlowConfig(max_rounds=5), checkpointer=None)
    out = Investigator(flow=flow, flow_settings=FlowConfig(max_rounds=5)).ask(
        "t:c:2", "widgets", asker="a@b.c", principals=frozenset({"public"})
    )
    rounds = sum(1 for s in out["trace"] if s["node"] == "retrieve")
    assert rounds == 2 and out["stop_reason"] == "no_new_evidence"
