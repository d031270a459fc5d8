"""Which passages of an established "chain" are links (never in conflict with each other) and which are sides: a
model may list every passage stating one fact as the chain it rests on."""

from __future__ import annotations

from typing import Any

from graph_flows.checks import find_conflicts
from graph_flows.reading import question_terms
from graph_flows.reasoners.base import ComposedSentence


def _evidence(eid: str, doc: str, title: str, text: str, updated: str, parent: str | None = None) -> Any:
    return {"id": eid, "doc_id": doc, "title": title, "text": text, "updated_at": updated, "version": "1",
            "parent": parent}  # fmt: skip


NEW = _evidence(
    "E1", "d:new", "Travel Policy", "Meal per diem: $75 per day for each full travel day.", "2026-01-15"
)
OLD = _evidence(
    "E2", "d:old", "Travel Rules", "Meal per diem: $60 per day for each full travel day.", "2024-05-10"
)
ASKED = question_terms("what's the meal per diem?")


def _said(*evidence: Any) -> list[ComposedSentence]:
    return [ComposedSentence(text=e["text"], cites=[e["id"]], aspect="a1") for e in evidence]


def test_two_passages_a_model_lists_together_are_still_two_sides() -> None:
    [conflict] = find_conflicts(_said(NEW, OLD), [NEW, OLD], asked=ASKED, chains=[["E1", "E2"]])
    assert [s["evidence_id"] for s in conflict["sides"]] == ["E1", "E2"]


def test_a_passage_reached_from_the_other_is_a_link_not_a_side() -> None:
    hop = {**OLD, "parent": "E1"}
    assert find_conflicts(_said(NEW, hop), [NEW, hop], asked=ASKED, chains=[["E1", "E2"]]) == []
    named = {**NEW, "text": NEW["text"] + " The old rate is in Travel Rules."}
    assert find_conflicts(_said(named, OLD), [named, OLD], asked=ASKED, chains=[["E1", "E2"]]) == []
