"""What the learned scorer decides in the answer today: the closest passages a decline shows, likeliest first.

The scorer's calibrated probability is recorded in the composition's notes for every answer. It is not yet
the gate that states or declines: calibrated on public data (docs/reader.md), its probabilities do not carry
over to the company sets (answers right 95% of the time at a probability under 0.1), so a threshold taken
from validation would decline nearly everything. The gate waits for a calibration on public data read
through this product's own flow (docs/reader.md, "Limits").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from graph_flows.reader.features import Weights
from graph_flows.reader.judge import JudgedUnit, judge_units
from graph_flows.reasoners.base import ComposedSentence, Composition
from graph_flows.state import Evidence, Plan

CLOSEST = 3  # units offered, likeliest first, when nothing can be stated


def closest(judged: Sequence[JudgedUnit]) -> list[ComposedSentence]:
    """The likeliest units of distinct passages, best first: what a decline shows."""
    out: list[ComposedSentence] = []
    seen: set[str] = set()
    for j in judged:
        if j.evidence_id not in seen:
            seen.add(j.evidence_id)
            out.append(ComposedSentence(text=j.candidate.text, cites=[j.evidence_id]))
        if len(out) == CLOSEST:
            break
    return out


def decide(plan: Plan, evidence: Sequence[Evidence], proposal: Composition, weights: Weights) -> Composition:
    """A decline's closest passages chosen by the scorer; an answer kept as proposed."""
    if proposal.answered or not evidence:
        return proposal
    question = plan.get("effective_question") or " ".join(a["text"] for a in plan["aspects"])
    judged = judge_units(question, evidence, weights)
    if not judged:
        return proposal
    note = f"reader: closest units by the learned scorer (best p={judged[0].probability:.2f})"
    return replace(proposal, related=closest(judged), notes=[*proposal.notes, note])
