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


def test_a_page_naming_the_page_it_replaces_is_a_side_not_a_link() -> None:
    """Naming the page it supersedes is no hop to another fact: the new page restates the old one's."""
    replacing = {**NEW, "text": NEW["text"] + " This policy supersedes the Travel Rules."}
    [conflict] = find_conflicts(
        _said(replacing, OLD), [replacing, OLD], asked=ASKED, chains=[["E1", "E2"]]
    )  # fmt: skip
    assert [s["evidence_id"] for s in conflict["sides"]] == ["E1", "E2"]
    assert conflict["sides"][1].get("outdated") is True


def test_an_older_statement_is_shown_against_the_newer_one_the_answer_cites() -> None:
    """Two newer pages give the one new value: the old statement is shown against the one the answer cites,
    not against a newer passage it never cites; a newer *value* still wins."""
    newer = _evidence(
        "E3", "d:newer", "Travel Notes", "Meal per diem: $75 per day for each full travel day.", "2026-03-01"
    )
    pool = [newer, NEW, OLD]
    [conflict] = find_conflicts(_said(OLD, NEW), pool, asked=ASKED)
    assert [s["evidence_id"] for s in conflict["sides"]] == ["E1", "E2"]
    [conflict] = find_conflicts(_said(OLD), pool, asked=ASKED)  # neither newer page cited: the newest
    assert [s["evidence_id"] for s in conflict["sides"]] == ["E3", "E2"]
    changed = {**newer, "text": "Meal per diem: $80 per day for each full travel day."}
    shown = find_conflicts(_said(OLD, NEW), [changed, NEW, OLD], asked=ASKED)
    [against_old] = [c for c in shown if c["sides"][-1]["evidence_id"] == "E2"]
    assert [s["evidence_id"] for s in against_old["sides"]] == ["E3", "E2"]
