"""The plan node hands the reasoner the thread's earlier turns as *this* asker may see them: a name an earlier
answer stated ("it" in a follow-up may mean it) travels only with the passage that stated it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from graph_flows.config import FlowConfig
from graph_flows.nodes.plan import plan
from graph_flows.reasoners.base import PlanProposal


class Knowledge:
    """Chunk "c1" is public, "c2" is readable by finance only."""

    def read(self, chunk_id: str, principals: frozenset[str]) -> Any | None:
        if chunk_id == "c2" and "group:finance" not in principals:
            return None
        return SimpleNamespace(chunk_id=chunk_id)

    def graph(self, principals: frozenset[str]) -> Any:
        return SimpleNamespace(names={})


class Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.history: list[Any] = []

    def plan(self, question: str, *, history: Any, lexicon: Any) -> PlanProposal:
        self.history = list(history)
        aspects = [{"id": "a1", "text": question, "terms": [], "entities": []}]
        return PlanProposal(
            aspects=aspects, entities=[], answer_type="thing", comparison=False, direction="text"
        )


def _state(principals: list[str]) -> dict[str, Any]:
    evidence = [
        {"id": "E1", "chunk_id": "c1", "doc_id": "d1", "turn": 1},
        {"id": "E2", "chunk_id": "c2", "doc_id": "d2", "turn": 1},
    ]
    turn = {
        "turn": 1,
        "question": "which vendor makes our saddles?",
        "asker": "fin@x.io",
        "evidence_ids": ["E1", "E2"],
        "gaps": [],
        "answered": True,
        "effective_question": "which vendor does Corvo Leather use for saddles?",
        "subjects": [
            {"name": "Corvo Leather", "evidence_id": "E2"},
            {"name": "Saddle Guide", "evidence_id": "E1"},
        ],
    }
    return {
        "question": "where are they based?",
        "principals": principals,
        "evidence": evidence,
        "turns": [turn],
    }


def test_names_from_passages_the_asker_cannot_open_do_not_reach_the_plan() -> None:
    reasoner = Recorder()
    plan(_state(["user:public@x.io"]), knowledge=Knowledge(), reasoner=reasoner, flow_settings=FlowConfig())
    (previous,) = reasoner.history
    assert [s["name"] for s in previous["subjects"]] == ["Saddle Guide"]
    assert previous["evidence_ids"] == ["E1"]


def test_the_asker_who_may_open_them_keeps_them() -> None:
    reasoner = Recorder()
    state = _state(["user:fin@x.io", "group:finance"])
    plan(state, knowledge=Knowledge(), reasoner=reasoner, flow_settings=FlowConfig())
    assert [s["name"] for s in reasoner.history[0]["subjects"]] == ["Corvo Leather", "Saddle Guide"]


def test_a_question_made_whole_from_a_hidden_passage_reaches_others_as_typed() -> None:
    public = Recorder()
    plan(_state(["user:public@x.io"]), knowledge=Knowledge(), reasoner=public, flow_settings=FlowConfig())
    assert public.history[0]["effective_question"] == "which vendor makes our saddles?"
    finance = Recorder()
    state = _state(["user:fin@x.io", "group:finance"])
    plan(state, knowledge=Knowledge(), reasoner=finance, flow_settings=FlowConfig())
    assert finance.history[0]["effective_question"] == "which vendor does Corvo Leather use for saddles?"


class Rewriter(Recorder):
    """Makes "where are they based?" whole with the first name the previous answer stated, as the offline
    reasoner's follow-up rewrite does."""

    def plan(self, question: str, *, history: Any, lexicon: Any) -> PlanProposal:
        self.history = list(history)
        previous = self.history[-1]
        name = previous["subjects"][0]["name"] if previous["subjects"] else "the vendor"
        whole = f"where is {name} based"
        aspects = [{"id": "a1", "text": whole, "terms": [], "entities": []}]
        return PlanProposal(aspects=aspects, entities=[], answer_type="place", comparison=False,
                            direction="text", followup_of=previous["turn"], effective_question=whole)  # fmt: skip


def test_a_follow_up_made_whole_with_a_stated_name_carries_that_passages_document() -> None:
    state = _state(["user:fin@x.io", "group:finance"])
    out = plan(state, knowledge=Knowledge(), reasoner=Rewriter(), flow_settings=FlowConfig())
    assert out["plan"]["aspects"][0]["text"] == "where is Corvo Leather based"
    assert (out["plan"]["derived_from"], out["plan"]["derived_askers"]) == (["d2"], ["fin@x.io"])
    [step] = out["trace"]
    assert step["derived_from"] == ["d2"]  # the trace's aspects carry it too (the admin "Show trace" modal)
