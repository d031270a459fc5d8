"""Every unit of the turn's most relevant passages scored by the learned scorer, with the calibrated
probability that stating it answers the question, best first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from graph_flows.reader import model
from graph_flows.reader.features import Candidate, Weights, featurise
from graph_flows.reader.units import split_units
from graph_flows.state import Evidence

MAX_PASSAGES = 6  # passages read unit by unit: the most relevant of the turn (training's candidates: 6)


@dataclass(frozen=True)
class JudgedUnit:
    candidate: Candidate
    evidence_id: str
    score: float  # the scorer's unit score
    probability: float  # calibrated: P(stating this unit answers the question right)


def candidate_passages(evidence: Sequence[Evidence], must: Sequence[str] = ()) -> list[Evidence]:
    """The turn's passages the reader compares: the most relevant ones, and those the composer cites."""
    ranked = sorted(evidence, key=lambda e: (-e["relevance"], -e["score"]))
    chosen = ranked[:MAX_PASSAGES]
    ids, cited = {e["id"] for e in chosen}, set(must)
    chosen += [e for e in evidence if e["id"] in cited and e["id"] not in ids]
    return chosen


@dataclass(frozen=True)
class Judgement:
    units: list[JudgedUnit]  # best first
    rows: np.ndarray  # the units' features, in the same order


def judge(
    question: str, evidence: Sequence[Evidence], weights: Weights, *, must: Sequence[str] = ()
) -> Judgement:
    """Every unit of the compared passages with its score and probability, best first, and its features."""
    scorer = model.load()
    passages = candidate_passages(evidence, must)
    candidates: list[Candidate] = []
    owners: list[str] = []
    for e in passages:
        units = split_units(e["text"], title=e["title"], passage=e["id"])
        candidates += units
        owners += [e["id"]] * len(units)
    rows = featurise(question, candidates, weights)
    scores = scorer.scores(rows)
    order = sorted(range(len(candidates)), key=lambda i: -float(scores[i]))
    units = [
        JudgedUnit(candidates[i], owners[i], float(scores[i]), scorer.probability(float(scores[i])))
        for i in order
    ]
    return Judgement(units, rows[order] if order else rows)


def judge_units(
    question: str, evidence: Sequence[Evidence], weights: Weights, *, must: Sequence[str] = ()
) -> list[JudgedUnit]:
    """Every unit of the compared passages with its score and probability, best first."""
    return judge(question, evidence, weights, must=must).units
