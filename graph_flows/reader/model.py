"""The fitted answer-unit scorer and its calibration, loaded from the artefact shipped with the package.

`answer_scorer.json` is written by `reader.training` (`make train-reader`): a small multilayer perceptron over
`features.FEATURES` (standardised), then an isotonic map from the best unit's score to the probability that
stating that unit answers the question right, and the threshold chosen on validation for the precision we
promise. Inference is two matrix products in numpy: no training library at run time. The model card is
docs/reader.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from graph_flows.reader.features import FEATURES

ARTEFACT = Path(__file__).with_name("answer_scorer.json")


class ArtefactError(RuntimeError):
    """The shipped artefact is missing or was fitted on other features than this code computes."""


@dataclass(frozen=True)
class AnswerScorer:
    mean: np.ndarray
    scale: np.ndarray
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    calibration_x: np.ndarray
    calibration_y: np.ndarray
    threshold: float  # calibrated probability at or above which an answer is stated
    card: dict

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """The unit-level score in [0, 1] for each row of features (higher: more likely to hold the answer)."""
        if rows.shape[0] == 0:
            return np.zeros(0, dtype=np.float32)
        h = (rows - self.mean) / self.scale
        for i, (weights, bias) in enumerate(self.layers):
            h = h @ weights + bias
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return (1.0 / (1.0 + np.exp(-h[:, 0]))).astype(np.float32)

    def probability(self, score: float) -> float:
        """P(stating the unit with this score is right), from the isotonic calibration table."""
        return float(np.interp(score, self.calibration_x, self.calibration_y))

    def states(self, probability: float) -> bool:
        return probability >= self.threshold


def from_dict(data: dict) -> AnswerScorer:
    if tuple(data.get("features", ())) != FEATURES:
        raise ArtefactError("the answer scorer was fitted on other features: run `make train-reader`")
    layers = tuple(
        (np.asarray(layer["weights"], dtype=np.float32), np.asarray(layer["bias"], dtype=np.float32))
        for layer in data["layers"]
    )
    return AnswerScorer(
        mean=np.asarray(data["mean"], dtype=np.float32),
        scale=np.asarray(data["scale"], dtype=np.float32),
        layers=layers,
        calibration_x=np.asarray(data["calibration"]["x"], dtype=np.float64),
        calibration_y=np.asarray(data["calibration"]["y"], dtype=np.float64),
        threshold=float(data["threshold"]),
        card={k: v for k, v in data.items() if k not in {"layers", "mean", "scale"}},
    )


@lru_cache(maxsize=4)
def load(path: Path = ARTEFACT) -> AnswerScorer:
    """The shipped scorer (cached: every question reads it)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise ArtefactError(f"no answer scorer at {path}: run `make train-reader`") from exc
    return from_dict(data)
