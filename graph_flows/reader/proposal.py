"""Features of a proposed answer as a whole: what the calibrator turns into P(the stated answer is right).

A proposal is what the composer would state: sentences, each citing passages. Its features say how well the
question was covered (the composer's own coverage and support), how the learned unit scorer rates the units
stated against every other unit read (a stated unit the scorer ranks low, or a better one left unstated, is
the usual way a confident answer is wrong), and whether anything read holds the question's rarest word at
all (an answer about something else). The same function runs at answer time and when the calibration is
fitted on public data read through this flow (`evals.reader_calibration`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from graph_flows.checks import confidence
from graph_flows.reader.features import FEATURES, stems
from graph_flows.reader.judge import JudgedUnit
from graph_flows.reasoners.base import Composition
from graph_flows.state import Established, Evidence, Plan

PROPOSAL_FEATURES = (
    "rule_confidence",
    "coverage",
    "support",
    "stated_p",
    "stated_p_min",
    "stated_rank",
    "best_p",
    "best_gap",
    "stated_lex",
    "stated_miss",
    "miss_all",
    "cover_all",
    "stated_cos",
    "sentences",
    "passages",
    "words",
    "cross_stated",
    "cross_stated_min",
    "cross_best",
    "cross_gap",
    "alternative",
)
_AT = {name: i for i, name in enumerate(FEATURES)}


def _overlap(a: str, b: str) -> float:
    sa, sb = set(stems(a)), set(stems(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def stated_units(proposal: Composition, judged: Sequence[JudgedUnit]) -> list[int]:
    """For each stated sentence, the index (in `judged`, best first) of the unit of its cited passages that
    it repeats most closely: the composer may trim or join units, so the match is by shared stems."""
    out: list[int] = []
    for sentence in proposal.sentences:
        cited = set(sentence.cites)
        pool = [i for i, j in enumerate(judged) if j.evidence_id in cited] or range(len(judged))
        if pool:
            out.append(max(pool, key=lambda i: (_overlap(sentence.text, judged[i].candidate.text), -i)))
    return out


def proposal_features(
    plan: Plan,
    evidence: Sequence[Evidence],
    proposal: Composition,
    established: Established,
    judged: Sequence[JudgedUnit],
    rows: np.ndarray,
    cross: Mapping[int, float],
    *,
    alternative: bool = False,
) -> np.ndarray:
    """One row of PROPOSAL_FEATURES. `judged` is every unit read, best first; `rows` their unit features;
    `cross` the cross-encoder's probability of the units it read (by index in `judged`; empty without one)."""
    by_id = {e["id"]: e for e in evidence}
    cited = list(dict.fromkeys(c for s in proposal.sentences for c in s.cites if c in by_id))
    support = [by_id[c]["relevance"] for s in proposal.sentences for c in s.cites if c in by_id]
    aspects = max(len(plan["aspects"]), 1)
    rule = confidence(
        aspects=aspects,
        established=len(established),
        support=support,
        conflicts=0,
        cited=len(proposal.sentences),
    )
    picked = stated_units(proposal, judged)
    stated = [judged[i].probability for i in picked] or [0.0]
    best = judged[0].probability if judged else 0.0
    first = rows[picked[0]] if picked else np.zeros(len(FEATURES), dtype=np.float32)
    everything = rows[0] if len(rows) else first  # miss_all and cover_all are alike on every row
    words = sum(len(s.text.split()) for s in proposal.sentences)
    crossed = [cross[i] for i in picked if i in cross] or [0.0]
    cross_best = max(cross.values(), default=0.0)
    return np.asarray(
        [
            rule,
            min(len(established) / aspects, 1.0),
            sum(support) / len(support) if support else 0.0,
            max(stated),
            min(stated),
            1.0 / (1 + min(picked)) if picked else 0.0,
            best,
            best - max(stated),
            first[_AT["lex"]],
            first[_AT["miss_unit"]],
            everything[_AT["miss_all"]],
            everything[_AT["cover_all"]],
            first[_AT["cos"]],
            math.log1p(len(proposal.sentences)),
            math.log1p(len(cited)),
            math.log1p(words),
            max(crossed),
            min(crossed),
            cross_best,
            cross_best - max(crossed),
            float(alternative),
        ],
        dtype=np.float32,
    )
