"""The answer calibrator: P(a proposed answer is right) from its features, and the threshold that states it.

`answer_calibration.json` is written by `evals.reader_calibration` (`make train-reader`, after the unit
scorer): a logistic regression over `proposal.PROPOSAL_FEATURES` (standardised), then an isotonic map from
its output to the share of such answers that were right, both fitted on public questions read through this
flow; the threshold is the lowest probability whose stated answers reached the target precision, read off
scores of proposals whose document the regression was not fitted on. Inference is a dot product and an interpolation. The model card is docs/reader.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from graph_flows.reader.model import ArtefactError
from graph_flows.reader.proposal import PROPOSAL_FEATURES

ARTEFACT = Path(__file__).with_name("answer_calibration.json")


@dataclass(frozen=True)
class AnswerCalibrator:
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    calibration_x: np.ndarray
    calibration_y: np.ndarray
    threshold: float

    def probability(self, row: np.ndarray) -> float:
        """P(the proposal with these features is right)."""
        z = float(((row - self.mean) / self.scale) @ self.coef + self.intercept)
        raw = 1.0 / (1.0 + np.exp(-z))
        return float(np.interp(raw, self.calibration_x, self.calibration_y))

    def states(self, probability: float) -> bool:
        return probability >= self.threshold


def from_dict(data: dict) -> AnswerCalibrator:
    if tuple(data.get("features", ())) != PROPOSAL_FEATURES:
        raise ArtefactError("the answer calibrator was fitted on other features: run `make train-reader`")
    return AnswerCalibrator(
        mean=np.asarray(data["mean"], dtype=np.float64),
        scale=np.asarray(data["scale"], dtype=np.float64),
        coef=np.asarray(data["coef"], dtype=np.float64),
        intercept=float(data["intercept"]),
        calibration_x=np.asarray(data["calibration"]["x"], dtype=np.float64),
        calibration_y=np.asarray(data["calibration"]["y"], dtype=np.float64),
        threshold=float(data["threshold"]),
    )


@lru_cache(maxsize=4)
def load(path: Path = ARTEFACT) -> AnswerCalibrator | None:
    """The shipped calibrator, or None before the first `make train-reader` has fitted one."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    return from_dict(data)
