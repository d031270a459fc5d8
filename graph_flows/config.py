"""Flow settings: the stop rules' numbers. A plain model so graph_flows never imports bot."""

from __future__ import annotations

from pydantic import BaseModel, Field


class FlowConfig(BaseModel):
    max_rounds: int = Field(default=3, ge=1, le=10)  # hard cap on retrieve rounds per turn
    time_budget_s: float = Field(default=20.0, gt=0)  # stop starting new rounds after this
    hits_per_query: int = Field(default=8, ge=1, le=50)
    evidence_per_round: int = Field(default=6, ge=1, le=30)
    fast_path_score: float = Field(default=0.82, ge=0, le=1)  # one hit this strong answers a simple lookup
    recursion_limit: int = Field(default=40, ge=8)
