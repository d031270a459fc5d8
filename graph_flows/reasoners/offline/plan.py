"""plan: the question as a frame. Entities (known names, ticket keys, quoted phrases), the expected answer type,
comparison sides (one aspect per side), and follow-ups read against the thread's previous question (an entity
swap, an attribute swap, or the same question again).
"""

from __future__ import annotations

from collections.abc import Sequence

from connectors.text import TICKET_KEY, dedupe
from graph_flows.reading import answer_type, question_terms, terms
from graph_flows.reasoners.base import Lexicon, PlanProposal
from graph_flows.reasoners.offline.language import (
    COMPARISON,
    QUOTED,
    comparison_sides,
    distributed,
    excluded_names,
    followup_question,
    is_followup,
    pick_words,
    question_parts,
    side_words,
    version_after,
    words_for,
)
from graph_flows.state import Aspect, TurnRecord


def _part_aspect(i: int, part: str, entities: Sequence[str], lexicon: Lexicon) -> Aspect:
    """One question of several: its own terms and type; the names it carries, or (read with the first part
    for its subject) the first part's."""
    asked = part.split(" (", 1)[0]
    keys = TICKET_KEY.findall(part)
    named = dedupe([*keys, *QUOTED.findall(part), *lexicon.names_in(part)])
    return {
        "id": f"a{i + 1}",
        "text": part,
        "terms": dedupe(question_terms(part)),
        "entities": [n for n in entities if n in named] or named,
        "answer_type": answer_type(asked),
        "question": part,
    }


def plan(question: str, history: Sequence[TurnRecord], lexicon: Lexicon) -> PlanProposal:
    q = " ".join(question.split())
    effective, followup_of, edit = q, None, ""
    if history and is_followup(q, lexicon):
        previous = history[-1]
        subjects = [s["name"] for s in previous.get("subjects", [])]
        asked = previous.get("effective_question") or previous["question"]
        effective, edit = followup_question(asked, q, lexicon, answered=subjects)
        followup_of = previous["turn"]
    effective = version_after(effective)  # "the next version after 4.2" is version 4.3
    keys = TICKET_KEY.findall(effective)
    quoted = QUOTED.findall(q)
    names = lexicon.names_in(effective)
    spelled, shared = distributed(effective, names, lexicon)  # "the Android and iOS crash triage"
    entities = dedupe(
        [
            *keys,
            *quoted,
            *shared,
            *names,
        ]
    )
    kind = answer_type(q)
    if followup_of is not None and (kind == "thing" or edit == "entity"):
        kind = answer_type(effective)
    sides = comparison_sides(spelled, entities)  # `effective` is the question itself unless a follow-up
    aspects: list[Aspect]
    if sides:
        side_terms = {t for side in sides for t in terms(side)}
        # "differ", "compare", "later", "first": how the sides are weighed, not what is asked of each
        operators = set(terms(" ".join([*COMPARISON.findall(q), *pick_words(q)])))
        # "the iOS phased release ... compared with the Android staged rollout": each side's own words
        asked_terms = set(question_terms(effective))
        own = {
            side: [t for t in words if t in asked_terms] for side, words in side_words(spelled, sides).items()
        }
        if not all(own.values()):
            own = {}  # one side says nothing of its own: every word is asked of both
        owned = {t for words in own.values() for t in words}
        relation = [
            t
            for t in question_terms(effective)
            if t not in side_terms and t not in operators and t not in owned
        ]
        aspects = [
            {
                "id": f"a{i + 1}",
                "text": f"{side} {' '.join(words_for(effective, [*own.get(side, []), *relation]))}".strip(),
                "terms": dedupe([*terms(side), *own.get(side, []), *relation]),
                "entities": [side],
            }
            for i, side in enumerate(sides)
        ]
    else:
        parts = question_parts(effective)
        aspects = [
            {"id": "a1", "text": effective, "terms": dedupe(question_terms(effective)), "entities": entities}
        ]
        if len(parts) > 1:
            # one message, several questions: each is established (or left open) on its own
            aspects = [_part_aspect(i, part, entities, lexicon) for i, part in enumerate(parts)]
    set_aside = excluded_names(effective, entities)
    if set_aside and not sides:
        # "besides Northwind, has any other customer...": not a name the answer must carry, one it must not
        gone = {t for name in set_aside for t in terms(name)}
        for aspect in aspects:
            aspect["entities"] = [n for n in aspect["entities"] if n not in set_aside]
            aspect["terms"] = [t for t in aspect["terms"] if t not in gone]
            aspect["excluded"] = set_aside
        entities = [n for n in entities if n not in set_aside]
    queries = [effective] + ([a["text"] for a in aspects] if len(aspects) > 1 else [])
    notes = [f"follow-up: {edit} edit"] if edit else []
    return PlanProposal(
        aspects=aspects,
        entities=entities,
        answer_type=kind,
        comparison=bool(sides),
        direction="text",
        queries=queries,
        followup_of=followup_of,
        effective_question=effective,
        notes=notes,
    )
