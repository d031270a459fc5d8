"""The second reader: what the offline reader finds in the same passages, merged into the model's steps. Pure.

A model reads well but unevenly: it may call an aspect missing that a passage plainly answers (a paraphrase it
did not connect, a table row it skipped), or compose from a sentence next to the answer. The offline reader
costs no call and no token, so the LLM reasoner runs it on the same plan and passages and keeps the union,
never less than either:

- plan: the program's frame of the question (the offline plan: its aspects with their entities and terms,
  comparison sides, answer type, a follow-up made whole) is the skeleton, so both readers judge the same
  aspects; the model's plan wins where it reads more: a finer split into aspects (its aspects), the same split
  (its wording of each aspect, read with the frame's terms), a typed answer where the frame says "thing", a
  follow-up the frame missed; its search queries come first, the frame's follow.
- reflect: an aspect the model establishes stands when the offline reading establishes it too or finds at
  least one passage of its chain relevant (`THRESHOLDS.relevant`); a chain of passages the program's own
  reading finds irrelevant is an over-claim and is dropped (a "relevance:" note), so nothing is composed on it.
  An aspect the model leaves unestablished but the offline reading establishes takes the offline
  chain (and is no longer reported missing); a passage's relevance is the higher of the two; where to look
  next is the model's names and queries, then the offline reading's (the node checks each name in its
  passage), so a model that sees no next step does not end a search the offline loop would go on with.
- compose: the offline composer writes from the offline reading's *own* chains of the last round (not from
  the model's, which it would read less carefully than its own); when the model's grounded answer answers
  nothing and that composition answers, it is the answer; when both answer, its sentences that state
  something the model's do not (a value, or nearly all the words of one model sentence citing the same
  passage) follow the model's sentences. Where only the model establishes an aspect, its answer stands alone.

The model's own claims are never removed here: they passed grounding; whether they answer the question is
`llm_relevance`'s to judge, after the merge. Every addition is a trace note
("second reader: ...") and counted in the question's usage (`offline_added`); a step the model failed is a
fallback, not a merge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from connectors.text import dedupe, normalise
from graph_flows.config import THRESHOLDS
from graph_flows.reading import term_set, values
from graph_flows.reasoners.base import ComposedSentence, Composition, PlanProposal, ReflectionProposal

SAME_UNIT_SHARE = (
    0.8  # share of an offline sentence's terms one model sentence (same passage) holds to state it
)


def merge_plan(model: PlanProposal, frame: PlanProposal) -> tuple[PlanProposal, list[str]]:
    """The offline frame with what the model's plan reads more finely."""
    finer = len(model.aspects) > len(frame.aspects)
    whole = model.followup_of is not None and frame.followup_of is None
    kind = model.answer_type if frame.answer_type == "thing" else frame.answer_type
    aspects = frame.aspects
    if finer or whole:  # a follow-up only the model made whole: the frame's terms are of the bare follow-up
        aspects = model.aspects
    elif len(model.aspects) == len(frame.aspects) and frame.followup_of is None:
        # the model's wording of each aspect, read with the frame's terms and names (and the model's names)
        aspects = [
            {**f, "text": m["text"], "entities": dedupe([*f["entities"], *m["entities"]])}
            for m, f in zip(model.aspects, frame.aspects, strict=True)
        ]
    merged = replace(
        frame,
        aspects=aspects,
        comparison=model.comparison if finer or whole else frame.comparison,
        entities=dedupe([*frame.entities, *model.entities]),
        answer_type=kind,
        direction=model.direction,
        queries=dedupe([*model.queries, *frame.queries]),
        followup_of=model.followup_of if whole else frame.followup_of,
        effective_question=model.effective_question if whole else frame.effective_question,
        scope=model.scope or frame.scope,
        notes=[*model.notes, *frame.notes],
    )
    taken = [
        what
        for what, used in (
            (f"the model's {len(model.aspects)} aspects", finer and not whole),
            ("the model's follow-up reading", whole),
            (f"the model's answer type {kind}", kind != frame.answer_type),
        )
        if used
    ]
    note = "second reader: plan on the offline frame" + (f", with {', '.join(taken)}" if taken else "")
    return merged, [note]


def merge_reflection(
    model: ReflectionProposal, offline: ReflectionProposal, plan: dict[str, Any]
) -> tuple[ReflectionProposal, list[str]]:
    """The model's reflection, plus each aspect only the offline reading establishes."""
    texts = {a["id"]: a["text"] for a in plan["aspects"]}
    notes: list[str] = []
    established: dict[str, list[str]] = {}
    for aspect, chain in model.established.items():  # the program's reading must find the chain relevant
        if (
            chain
            and not offline.established.get(aspect)
            and all(offline.relevance.get(eid, 0.0) < THRESHOLDS.relevant for eid in chain)
        ):
            notes.append(
                f"relevance: {aspect} not established: the offline reading finds none of {', '.join(chain)} "
                "relevant to it"
            )
            continue
        established[aspect] = list(chain)
    for aspect, chain in offline.established.items():
        if aspect in texts and chain and not established.get(aspect):
            established[aspect] = list(chain)
            notes.append(
                f"second reader: {aspect} established by the offline reading on {', '.join(chain)} "
                "(the model left it missing)"
            )
    settled = {normalise(texts[a]) for a in established if a in texts}
    missing = [
        g for g in model.missing if not (g["kind"] == "missing_source" and normalise(g["what"]) in settled)
    ]
    if all(established.get(a) for a in texts):
        missing = []  # every aspect established: nothing is missing (as the offline reading reports it)
    relevance = dict(model.relevance)
    for eid, score in offline.relevance.items():
        relevance[eid] = max(score, relevance.get(eid, 0.0))
    named = {normalise(c.name) for c in model.entities}
    entities = [*model.entities, *(c for c in offline.entities if normalise(c.name) not in named)]
    queries = dedupe([*model.queries, *offline.queries])
    merged = replace(
        model,
        relevance=relevance,
        established=established,
        missing=missing,
        entities=entities,
        queries=queries,
    )
    return merged, notes


def merge_composition(model: Composition, offline: Composition) -> tuple[Composition, list[str], int]:
    """The model's composition with what only the offline one states; returns it, notes and sentences added."""
    if not offline.answered or not offline.sentences:
        return model, [], 0
    if not model.answered or not model.sentences:
        note = (
            f"second reader: the model's answer answers nothing here; the offline composition's "
            f"{len(offline.sentences)} sentence(s) are the answer"
        )
        return replace(offline, notes=[*model.notes, *offline.notes]), [note], len(offline.sentences)
    added = [s for s in offline.sentences if not stated(s, model.sentences)]
    if not added:
        return model, [], 0
    note = f"second reader: {len(added)} offline sentence(s) state what the model's answer does not; added"
    return replace(model, sentences=[*model.sentences, *added]), [note], len(added)


def stated(sentence: ComposedSentence, by: Sequence[ComposedSentence]) -> bool:
    """Whether the model's sentences already state `sentence`: every value it gives, and nearly all its words
    in one model sentence citing the same passage (paraphrase and posted figures both count)."""
    said = " ".join(s.text for s in by)
    if not values(sentence.text) <= values(said):
        return False
    wanted = term_set(sentence.text)
    if not wanted:
        return True
    for s in by:
        if set(s.cites) & set(sentence.cites) or not sentence.cites:
            held = wanted & term_set(s.text)
            if len(held) >= SAME_UNIT_SHARE * len(wanted):
                return True
    return False
