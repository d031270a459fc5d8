"""What the learned reader makes of a proposed answer: its calibrated probability of being right, which of
two proposals is stated, and, where the gate is on, whether anything is.

Every unit read is scored (`judge`); the scorer's best units, and those nearest by dense similarity, are read
again with the question by the cross-encoder (`cross_encoder`). Two proposals are weighed: the composer's, and
the reader's own, the one unit whose mean of the two probabilities is highest. Each proposal's features
(`proposal`) go through the calibrator; the reader's own is stated only above the threshold chosen for 0.9
precision, in place of the composer's only when it is the likelier and the question has one part (one unit
cannot answer two). With the
gate on (`SLEUTH_FLOW__READER_GATE`), a proposal below the threshold is withheld and the answer declines,
offering the closest units instead, the scorer's likeliest first, one per passage. The gate is off by default: measured
on the blind set it withholds most right answers along with the wrong ones (docs/reader.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from graph_flows.reader import calibrator, cross_encoder
from graph_flows.reader.features import FEATURES, Weights
from graph_flows.reader.judge import JudgedUnit, judge
from graph_flows.reader.proposal import PROPOSAL_FEATURES, proposal_features, stated_units
from graph_flows.reasoners.base import ComposedSentence, Composition
from graph_flows.state import Established, Evidence, Plan

CLOSEST = 3  # units offered, likeliest first, when nothing is stated
CROSS_TOP = 12  # the scorer's best units the cross-encoder reads again
CROSS_NEAR = 4  # and the units nearest the question by dense similarity, worded unlike it
_COS = FEATURES.index("cos")


def cross_read(
    question: str, judged: Sequence[JudgedUnit], rows: np.ndarray, stated: Sequence[int]
) -> dict[int, float]:
    """The cross-encoder's probability for the units worth a second reading (by index in `judged`): the
    scorer's best, the densest matches and the stated ones. Empty without a fitted cross-encoder."""
    model = cross_encoder.load()
    if model is None or not judged:
        return {}
    near = sorted(range(len(judged)), key=lambda i: -float(rows[i][_COS]))[:CROSS_NEAR]
    chosen = list(dict.fromkeys([*range(min(CROSS_TOP, len(judged))), *near, *stated]))
    probabilities = model.probabilities(question, [judged[i].candidate.text for i in chosen])
    return {i: float(p) for i, p in zip(chosen, probabilities, strict=True)}


def reranked(judged: Sequence[JudgedUnit], cross: dict[int, float]) -> list[JudgedUnit]:
    """The units by the mean of the scorer's and the cross-encoder's probability (the scorer's alone for a
    unit the cross-encoder did not read), best first."""
    order = sorted(range(len(judged)), key=lambda i: -(judged[i].probability + cross.get(i, 0.0)) / 2)
    return [judged[i] for i in order]


def own_proposal(plan: Plan, judged: Sequence[JudgedUnit], cross: dict[int, float]) -> Composition | None:
    """The reader's own proposal: the unit the two models rate highest, stated alone with its passage, as
    the answer to the question's first part (the only one where it is stated)."""
    if not cross:
        return None
    # a unit that asks is no answer, however like the question it reads (a thread's opening message)
    answers = [j for j in reranked(judged, cross) if not j.candidate.text.rstrip().endswith("?")]
    if not answers:
        return None
    best = answers[0]
    aspect = plan["aspects"][0]["id"] if plan["aspects"] else None
    sentence = ComposedSentence(best.candidate.text, [best.evidence_id], aspect=aspect)
    return Composition(sentences=[sentence], answered=True)


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


def _weighed(
    plan: Plan,
    evidence: Sequence[Evidence],
    proposal: Composition,
    established: Established,
    judged: Sequence[JudgedUnit],
    rows: np.ndarray,
    cross: dict[int, float],
    model: calibrator.AnswerCalibrator | None,
    *,
    alternative: bool = False,
) -> tuple[float | None, dict]:
    """The proposal's calibrated probability (None without a calibrator) and its verdict record."""
    row = proposal_features(
        plan, evidence, proposal, established, judged, rows, cross, alternative=alternative
    )
    features = dict(zip(PROPOSAL_FEATURES, (round(float(v), 4) for v in row), strict=True))
    if model is None:
        return None, {"features": features}
    p = model.probability(row)
    return p, {"probability": round(p, 4), "threshold": model.threshold, "features": features}


def _declined(proposal: Composition, units: list[JudgedUnit], note: str, verdict: dict) -> Composition:
    return replace(
        proposal,
        sentences=[],
        answered=False,
        related=closest(units),
        notes=[*proposal.notes, note],
        verdict=verdict,
    )


def decide(
    plan: Plan,
    evidence: Sequence[Evidence],
    proposal: Composition,
    established: Established,
    weights: Weights,
    *,
    gate: bool = False,
    choose: bool = True,
) -> Composition:
    """The likelier of the composer's and the reader's proposals with its calibrated confidence, stated or
    withheld; a decline with the closest units. `gate=False` states the composer's proposal whatever its
    probability; `choose=False` keeps the composer's proposal as it is and only records both verdicts (how
    the calibration's own data is read)."""
    if not evidence:
        return proposal
    question = plan.get("effective_question") or " ".join(a["text"] for a in plan["aspects"])
    cited = [c for s in proposal.sentences for c in s.cites]
    judgement = judge(question, evidence, weights, must=cited)
    if not judgement.units:
        return proposal
    judged, rows = judgement.units, judgement.rows
    cross = cross_read(question, judged, rows, stated_units(proposal, judged) if proposal.answered else [])
    model = calibrator.load() if choose or gate else None  # reading the calibration's data needs none
    own = own_proposal(plan, judged, cross)
    own_p, own_verdict = (None, {}) if own is None else _weighed(
        plan, evidence, own, established, judged, rows, cross, model, alternative=True
    )  # fmt: skip
    alternative = {**own_verdict, "text": own.sentences[0].text} if own else None
    if not proposal.answered:
        verdict = {"alternative": alternative} if alternative else None
        if choose and own and own_p is not None and model and model.states(own_p):
            note = f"reader: stated its own best unit (p={own_p:.2f}); the composer found nothing"
            return replace(own, notes=[*proposal.notes, note], confidence=own_p, verdict=own_verdict)
        note = f"reader: closest units by the learned reader (best p={judged[0].probability:.2f})"
        return replace(proposal, related=closest(judged), notes=[*proposal.notes, note], verdict=verdict)
    p, verdict = _weighed(plan, evidence, proposal, established, judged, rows, cross, model)
    if alternative:
        verdict["alternative"] = alternative
    if p is None or model is None:  # before the first calibration: the features recorded, the proposal kept
        return replace(proposal, verdict=verdict)
    one_part = len(plan["aspects"]) <= 1 and not plan.get("comparison")
    if choose and own and own_p is not None and one_part and own_p > p and model.states(own_p):
        note = f"reader: stated its own best unit (p={own_p:.2f} > the composer's {p:.2f})"
        proposal, p = replace(own, notes=[*proposal.notes, note]), own_p
        verdict = {**own_verdict, "composer": {"probability": verdict["probability"]}}
    if model.states(p) or not gate:
        return replace(proposal, confidence=p, verdict=verdict)
    note = f"reader: withheld (p={p:.2f} < {model.threshold:.2f}); closest units offered"
    return replace(_declined(proposal, judged, note, {**verdict, "withheld": True}), confidence=p)
