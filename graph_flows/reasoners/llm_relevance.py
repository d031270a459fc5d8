"""Relevance, not only fidelity: the model's composed answer is kept only where the learned reader supports it.

Grounding (`grounding`, `llm_mapping`) checks that a model's quote is faithful to its passage, not that it
answers the question: a model that establishes every aspect on whatever it is shown writes faithful sentences
about the wrong thing. The offline reader composes from the same passages beside it (`llm_merge`), and the
learned unit scorer (`reader.judge`) rates every unit read. The rule:

- where the offline composition on the offline reading's own chains answers, the model's answer stands (the
  merge of `llm_merge` follows), whatever that composition's calibrated probability;
- where it declines, the model's answer stands only when the scorer's mean calibrated probability that the
  units its sentences repeat answer the question (`reader.decide.stated_probability`) reaches the scorer's
  own stating threshold (`answer_scorer.json`, chosen on validation for the promised precision); below it the
  answer is withheld and the reply declines as the offline reader does, offering the closest units
  (`reader.decide.closest`), with a "relevance:" note giving both numbers.

"The model's answer" is whatever was composed on chains the model established: its own composition, or, where
the compose step fell back to the offline composer (no grounded sentence, a bad reply), the offline
composition written on the model's chains (`LLMReasoner._on_model_chains`); both are judged the same way.

The offline verdict is read as a boolean, not through its calibrated probability: on a company's pages the
calibrator's probabilities of right offline answers and of off-question ones overlap (the calibration is fitted
on encyclopaedia questions, docs/reader.md), so a probability floor withholds right answers with the wrong.

Whatever the verdict, a sentence that repeats a page's text written to an assistant (`reader.instructions`:
the line and its paragraph's payload) is never posted, nor offered as a closest passage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from graph_flows.reader import model as unit_scorer
from graph_flows.reader.decide import closest, stated_probability
from graph_flows.reader.features import Weights
from graph_flows.reader.instructions import addresses_assistant, tainted_lines
from graph_flows.reader.judge import judge
from graph_flows.reading import term_set
from graph_flows.reasoners.base import ComposedSentence, Composition, ReflectionProposal
from graph_flows.reasoners.llm_merge import SAME_UNIT_SHARE
from graph_flows.state import Evidence, Gap, Plan


def question_of(plan: Plan) -> str:
    """The question as the reader judges it (as `reader.decide` reads it)."""
    return plan.get("effective_question") or " ".join(a["text"] for a in plan["aspects"])


def supported(
    plan: Plan,
    evidence: Sequence[Evidence],
    composed: Composition,
    offline: Composition,
    weights: Weights,
) -> tuple[Composition, list[str]]:
    """`composed` (the answer written on the model's chains, merged) where the reader supports it, else
    `offline`'s decline, and notes. `offline` is the offline composition on the offline reading's own chains:
    its verdict on the evidence."""
    if offline.answered and offline.sentences:
        return composed, []
    if not composed.answered or not composed.sentences:
        return composed, []
    question = question_of(plan)
    p = stated_probability(question, evidence, composed.sentences, weights)
    threshold = unit_scorer.load().threshold
    if p >= threshold:
        note = (
            f"relevance: the answer stands where the offline reader declines on its own reading "
            f"(scorer p={p:.2f} >= {threshold:.2f})"
        )
        return composed, [note]
    related = offline.related or closest(judge(question, evidence, weights).units)
    note = (
        f"relevance: answer withheld: the offline reader declines on its own reading and the scorer gives "
        f"the units its {len(composed.sentences)} sentence(s) state p={p:.2f} < {threshold:.2f}; "
        "closest units offered"
    )
    withheld = replace(
        offline,
        sentences=[],
        answered=False,
        related=related,
        notes=[*composed.notes, *offline.notes],
        verdict={
            **(offline.verdict or {}),
            "stated_p": round(p, 4),
            "threshold": threshold,
            "withheld": True,
        },
    )
    return withheld, [note]


def held_open(
    merged: ReflectionProposal, offline: ReflectionProposal, plan: Plan, held: set[str]
) -> tuple[ReflectionProposal, list[str]]:
    """The merged reflection with each aspect only the model establishes held open one round, where the
    offline reading would search further (it names next queries or entities): the loop searches on, so the
    offline reader's verdict at compose time is the one it reaches after its own search, not half-way.
    `held` (the question's ledger) makes it once per aspect: the next round the model's chain stands. That
    round searches as the offline reading would (its direction, its names and queries first): its verdict is
    then on the passages its own search finds, as the offline loop's is, not on where the model looks."""
    texts = {a["id"]: a["text"] for a in plan["aspects"]}
    further = bool(offline.queries or offline.entities)
    opened = [
        a
        for a, chain in merged.established.items()
        if chain and a in texts and a not in held and not offline.established.get(a) and further
    ]
    if not opened:
        return merged, []
    held.update(opened)
    established = {a: c for a, c in merged.established.items() if a not in opened}
    gaps: list[Gap] = [{"kind": "missing_source", "what": texts[a], "clues": []} for a in opened]
    note = (
        f"relevance: {', '.join(opened)} held open a round: only the model establishes it and the offline "
        "reading searches further"
    )
    # the round searches as the offline reading would: its direction, its next names and queries first
    named = {c.name for c in offline.entities}
    entities = [*offline.entities, *(c for c in merged.entities if c.name not in named)]
    return replace(
        merged,
        established=established,
        missing=[*merged.missing, *gaps],
        direction=offline.direction,
        entities=entities,
        queries=list(dict.fromkeys([*offline.queries, *merged.queries])),
    ), [note]


def repeats_instruction(sentence: ComposedSentence, evidence: dict[str, Evidence]) -> bool:
    """Whether the sentence states text written to an assistant, or nearly all the words of a line of such
    text (or of its paragraph's payload) in a passage it cites."""
    if addresses_assistant(sentence.text):
        return True
    said = term_set(sentence.text)
    if not said:
        return False
    for eid in sentence.cites:
        passage = evidence.get(eid)
        for line in tainted_lines(passage["text"]) if passage else []:
            if len(said & term_set(line)) >= SAME_UNIT_SHARE * len(said):
                return True
    return False


def without_instructions(
    composition: Composition, evidence: Sequence[Evidence]
) -> tuple[Composition, list[str]]:
    """The composition less every sentence and closest passage that repeats a page's instruction."""
    by_id = {e["id"]: e for e in evidence}
    sentences = [s for s in composition.sentences if not repeats_instruction(s, by_id)]
    related = [s for s in composition.related if not repeats_instruction(s, by_id)]
    dropped = len(composition.sentences) - len(sentences) + len(composition.related) - len(related)
    if not dropped:
        return composition, []
    note = f"instructions: {dropped} sentence(s) repeating a page's text written to an assistant not posted"
    answered = composition.answered and bool(sentences)
    return replace(composition, sentences=sentences, related=related, answered=answered), [note]
