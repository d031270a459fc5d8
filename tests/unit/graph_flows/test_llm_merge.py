"""The second reader's merge rules: the offline frame under the model's plan, aspects only the offline reading
establishes, sentences only the offline composition states; the model's own claims are never removed."""

from __future__ import annotations

from graph_flows.reasoners.base import (
    ComposedSentence,
    Composition,
    EntityCandidate,
    PlanProposal,
    ReflectionProposal,
)
from graph_flows.reasoners.llm_merge import merge_composition, merge_plan, merge_reflection, stated
from graph_flows.state import Aspect


def _aspect(i: int, text: str, terms: list[str], entities: list[str] | None = None) -> Aspect:
    return {"id": f"a{i}", "text": text, "terms": terms, "entities": entities or []}


def _plan(aspects: list[Aspect], **kw: object) -> PlanProposal:
    return PlanProposal(aspects=aspects, entities=kw.pop("entities", []), answer_type="thing", **kw)  # type: ignore[arg-type]


FRAME = _plan(
    [_aspect(1, "Starter rate limit", ["starter", "rate"], ["Starter"]), _aspect(2, "Pro rate limit", ["pro", "rate"], ["Pro"])],
    entities=["Starter", "Pro"], comparison=True, queries=["starter pro rate limits"],
    effective_question="how do Starter and Pro differ in rate limits?",
)  # fmt: skip


def test_the_frame_is_the_skeleton_and_the_model_adds_its_queries_first() -> None:
    model = _plan([_aspect(1, "rate limits of the plans", ["rate", "plan"])], queries=["plan API limits"])
    merged, notes = merge_plan(model, FRAME)
    assert [a["text"] for a in merged.aspects] == [
        "Starter rate limit",
        "Pro rate limit",
    ] and merged.comparison
    assert merged.queries == ["plan API limits", "starter pro rate limits"]
    assert notes == ["second reader: plan on the offline frame"]


def test_a_finer_split_or_a_typed_answer_from_the_model_wins() -> None:
    three = [_aspect(i, f"part {i}", [f"p{i}"]) for i in (1, 2, 3)]
    model = PlanProposal(aspects=three, entities=["Enterprise"], answer_type="list")
    merged, notes = merge_plan(model, FRAME)
    assert [a["text"] for a in merged.aspects] == ["part 1", "part 2", "part 3"]
    assert merged.answer_type == "list" and merged.entities == ["Starter", "Pro", "Enterprise"]
    assert "the model's 3 aspects" in notes[0] and "answer type list" in notes[0]


def test_the_same_split_keeps_the_models_wording_with_the_frames_terms_and_names() -> None:
    frame = _plan([_aspect(1, "Why was Atlas delayed?", ["atlas", "delay"], ["Atlas"])])
    model = _plan([_aspect(1, "why the Atlas launch slipped", ["atlas", "launch", "slip"], ["Atlas launch"])])
    [aspect] = merge_plan(model, frame)[0].aspects
    assert aspect == {
        "id": "a1", "text": "why the Atlas launch slipped", "terms": ["atlas", "delay"],
        "entities": ["Atlas", "Atlas launch"],
    }  # fmt: skip


def test_a_follow_up_is_made_whole_by_whichever_reader_saw_it() -> None:
    frame = _plan([_aspect(1, "Android release checklist", ["android"])], followup_of=1,
                  effective_question="what's on the Android release checklist?")  # fmt: skip
    model = _plan([_aspect(1, "and for the Android app?", ["android", "app"])])
    merged, _ = merge_plan(model, frame)
    assert merged.followup_of == 1 and merged.aspects[0]["text"] == "Android release checklist"
    model = _plan([_aspect(1, "the P3's motor maker", ["motor"])], followup_of=2, effective_question="whole")
    merged, notes = merge_plan(model, _plan([_aspect(1, "and where?", ["where"])]))
    assert merged.followup_of == 2 and merged.effective_question == "whole" and "follow-up" in notes[0]
    assert merged.aspects == model.aspects  # the bare follow-up's terms would read nothing


def _reflection(established: dict[str, list[str]], **kw: object) -> ReflectionProposal:
    base: dict[str, object] = {"relevance": {}, "missing": [], "entities": [], "direction": "text"}
    return ReflectionProposal(established=established, **{**base, **kw})  # type: ignore[arg-type]


PLAN = {"aspects": [{"id": "a1", "text": "first"}, {"id": "a2", "text": "second"}]}


def test_an_aspect_only_the_offline_reading_establishes_is_taken_and_no_longer_missing() -> None:
    gap = {"kind": "missing_source", "what": "second", "clues": []}
    model = _reflection({"a1": ["E1"]}, relevance={"E1": 0.9, "E2": 0.1}, missing=[gap],
                        entities=[EntityCandidate("ENG-1", "E1")], queries=["q model"])  # fmt: skip
    offline = _reflection({"a1": ["E5"], "a2": ["E2", "E3"]}, relevance={"E1": 0.2, "E2": 0.7},
                          entities=[EntityCandidate("eng-1", "E2"), EntityCandidate("Kestrel", "E2")],
                          queries=["q offline"])  # fmt: skip
    merged, notes = merge_reflection(model, offline, PLAN)
    assert merged.established == {"a1": ["E1"], "a2": ["E2", "E3"]}  # the model's own chain stays
    assert merged.missing == [] and merged.relevance == {"E1": 0.9, "E2": 0.7}  # every aspect established
    assert [c.name for c in merged.entities] == ["ENG-1", "Kestrel"] and merged.queries == [
        "q model",
        "q offline",
    ]
    assert notes == [
        "second reader: a2 established by the offline reading on E2, E3 (the model left it missing)"
    ]


def test_the_models_own_establishment_on_a_relevant_passage_stays_and_its_other_gaps_stay() -> None:
    gap = {"kind": "missing_source", "what": "second", "clues": []}
    model = _reflection({"a1": ["E1"]}, missing=[gap])
    merged, notes = merge_reflection(model, _reflection({}, relevance={"E1": 0.3}), PLAN)
    assert merged.established == {"a1": ["E1"]} and merged.missing == [gap] and notes == []


def test_an_aspect_the_model_establishes_on_passages_the_program_finds_irrelevant_is_dropped() -> None:
    """An over-claiming model: a1 on two passages the offline reading scores below the relevance that counts,
    a2 on one it finds relevant; a1 is no longer established, so nothing is composed on it."""
    model = _reflection({"a1": ["E1", "E2"], "a2": ["E3"]}, relevance={"E1": 0.9, "E2": 0.9, "E3": 0.9})
    offline = _reflection({}, relevance={"E1": 0.1, "E2": 0.29, "E3": 0.6})
    merged, notes = merge_reflection(model, offline, PLAN)
    assert merged.established == {"a2": ["E3"]}
    assert notes == ["relevance: a1 not established: the offline reading finds none of E1, E2 relevant to it"]


def _said(text: str, eid: str = "E1") -> ComposedSentence:
    return ComposedSentence(text=text, cites=[eid], aspect="a1")


def test_the_offline_answer_stands_where_the_model_answers_nothing() -> None:
    model = Composition(sentences=[], answered=False, related=[_said("Close but not it.")])
    offline = Composition(sentences=[_said("Handoff is Mondays at 10:00 PT.")], answered=True)
    merged, notes, added = merge_composition(model, offline)
    assert merged.sentences == offline.sentences and merged.answered and added == 1
    assert notes[0].startswith("second reader: the model's answer answers nothing here")


def test_only_sentences_the_model_does_not_state_are_added_after_its_own() -> None:
    model = Composition(sentences=[_said("According to Pricing, the Starter plan costs $49 per robot a month.")],
                        answered=True)  # fmt: skip
    same = _said("The Starter plan costs $49 per robot per month.")
    other_value = _said("The Pro plan costs $79 per robot per month.")
    merged, notes, added = merge_composition(model, Composition(sentences=[same, other_value], answered=True))
    assert [s.text for s in merged.sentences] == [model.sentences[0].text, other_value.text] and added == 1
    assert notes == ["second reader: 1 offline sentence(s) state what the model's answer does not; added"]


def test_nothing_changes_when_the_offline_composition_answers_nothing() -> None:
    model = Composition(sentences=[_said("A claim.")], answered=True)
    assert merge_composition(model, Composition(sentences=[], answered=False)) == (model, [], 0)


def test_a_sentence_counts_as_stated_only_from_a_model_sentence_citing_the_same_passage() -> None:
    offline = _said("The Starter plan costs $49 per robot per month.", "E2")
    assert not stated(offline, [_said("The Starter plan costs $49 per robot per month.", "E1")])
    assert stated(offline, [_said("Per robot per month, the Starter plan costs $49.", "E2")])
    assert not stated(offline, [_said("The Starter plan costs money per robot per month.", "E2")])
