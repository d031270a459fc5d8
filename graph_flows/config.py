"""Flow settings (the stop rules' numbers, a plain model so graph_flows never imports bot) and the
thresholds the flow's modules share."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field


class FlowConfig(BaseModel):
    max_rounds: int = Field(default=3, ge=1, le=10)  # hard cap on retrieve rounds per turn
    time_budget_s: float = Field(default=20.0, gt=0)  # stop starting new rounds after this
    hits_per_query: int = Field(default=8, ge=1, le=50)
    evidence_per_round: int = Field(default=6, ge=1, le=30)
    fast_path_score: float = Field(default=0.82, ge=0, le=1)  # one hit this strong answers a simple lookup
    recursion_limit: int = Field(default=40, ge=8)


@dataclass(frozen=True)
class Thresholds:
    """Numbers the nodes and every reasoner share. Not operator settings: they are tuned on the evals and
    changed here only, with the bench per kind checked before and after."""

    relevant: float = 0.3  # relevance (the reasoner's judgement) at which a passage counts for the turn


THRESHOLDS = Thresholds()
