"""What the learned reader makes of a proposed answer: its calibrated probability of being right, and, where
the gate is on, whether it is stated.

Every unit read is scored (`judge`), the proposal's features (`proposal`) go through the calibrator, and the
probability becomes the answer's confidence. With the gate on (`SLEUTH_FLOW__READER_GATE`), a proposal below the
threshold is withheld and the answer declines, offering the closest units instead, the likeliest first, one
per passage; a decline's closest units are the scorer's in either case. The gate is off by default: measured
on the blind set it withholds most right answers along with the wrong ones (docs/reader.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from graph_flows.reader import calibrator
from graph_flows.reader.features import Weights
from graph_flows.reader.judge import JudgedUnit, judge
from graph_flows.reader.proposal import PROPOSAL_FEATURES, proposal_features, stated_units
from graph_flows.reasoners.base import ComposedSentence, Composition
from graph_flows.state import Established, Evidence, Plan

CLOSEST = 3  # units offered, likeliest first, when nothing is stated


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


def stated_probability(
    question: str, evidence: Sequence[Evidence], sentences: Sequence[ComposedSentence], weights: Weights
) -> float:
    """The scorer's mean calibrated probability that each stated sentence answers the question: the
    confidence of an answer the answer calibration was not fitted on (the broad path's lines)."""
    cited = list(dict.fromkeys(c for s in sentences for c in s.cites))
    read = [e for e in evidence if e["id"] in set(cited)]
    if not read:
        return 0.0
    units = judge(question, read, weights, must=cited).units
    picked = stated_units(Composition(sentences=list(sentences), answered=True), units)
    return sum(units[i].probability for i in picked) / len(picked) if picked else 0.0


def decide(
    plan: Plan,
    evidence: Sequence[Evidence],
    proposal: Composition,
    established: Established,
    weights: Weights,
    *,
    gate: bool = False,
) -> Composition:
    """The proposal with its calibrated confidence, stated or withheld; a decline with the closest units.
    `gate=False` records the verdict without acting on it (how the calibration's own data is read)."""
    if not evidence:
        return proposal
    question = plan.get("effective_question") or " ".join(a["text"] for a in plan["aspects"])
    cited = [c for s in proposal.sentences for c in s.cites]
    judgement = judge(question, evidence, weights, must=cited)
    if not judgement.units:
        return proposal
    if not proposal.answered:
        note = f"reader: closest units by the learned scorer (best p={judgement.units[0].probability:.2f})"
        return replace(proposal, related=closest(judgement.units), notes=[*proposal.notes, note])
    row = proposal_features(plan, evidence, proposal, established, judgement.units, judgement.rows)
    features = dict(zip(PROPOSAL_FEATURES, (round(float(v), 4) for v in row), strict=True))
    model = calibrator.load()
    if model is None:  # before the first calibration: the features are recorded, the proposal kept
        return replace(proposal, verdict={"features": features})
    p = model.probability(row)
    verdict = {"probability": round(p, 4), "threshold": model.threshold, "features": features}
    if model.states(p) or not gate:
        return replace(proposal, confidence=p, verdict=verdict)
    note = f"reader: withheld (p={p:.2f} < {model.threshold:.2f}); closest units offered"
    return replace(
        proposal,
        sentences=[],
        answered=False,
        related=closest(judgement.units),
        notes=[*proposal.notes, note],
        confidence=p,
        verdict={**verdict, "withheld": True},
    )
