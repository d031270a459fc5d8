"""Fit, calibrate and measure the answer scorer (the second half of `reader.training`), and write the artefact.

Needs scikit-learn (the `train` extra); the product never imports this module.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graph_flows.reader.features import FEATURES, featurise
from graph_flows.reader.training import (
    SEED,
    TARGET_PRECISION,
    CorpusWeights,
    Record,
    candidates_for,
    label,
)

log = logging.getLogger(__name__)
BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)


@dataclass
class Split:
    rows: np.ndarray  # unit features
    labels: np.ndarray  # unit holds the answer
    question: np.ndarray  # which question each row belongs to
    answerable: np.ndarray  # per question: an answer is among its candidates
    fold: np.ndarray  # per question: its cross-validation fold

    def subset(self, questions: np.ndarray) -> Split:
        """The rows of the chosen questions (a boolean mask over questions), renumbered."""
        rows = questions[self.question]
        renumber = np.cumsum(questions) - 1
        return Split(
            self.rows[rows],
            self.labels[rows],
            renumber[self.question[rows]],
            self.answerable[questions],
            self.fold[questions],
        )


FOLDS = 5


def fold_of(group: str) -> int:
    """The cross-validation fold of a document's questions (a stable hash: one document, one fold)."""
    return int(hashlib.sha1(group.encode()).hexdigest()[:8], 16) % FOLDS


def build(records: Sequence[Record], weights: CorpusWeights, progress: Callable[[int], None]) -> Split:
    rng = random.Random(SEED)
    rows, labels, questions, answerable, folds = [], [], [], [], []
    for n, record in enumerate(records):
        candidates, gold_present = candidates_for(record, rng, weights)
        if candidates:
            rows.append(featurise(record.question, candidates, weights))
            said = [label(record, c, gold_present) for c in candidates]
            labels += said
            questions += [len(answerable)] * len(candidates)
            answerable.append(any(said))
            folds.append(fold_of(record.group))
        progress(n + 1)
    return Split(
        np.vstack(rows), np.asarray(labels), np.asarray(questions), np.asarray(answerable), np.asarray(folds)
    )


def fit_scorer(train: Split, hidden: tuple[int, ...] = (32, 16)):
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train.rows)
    model = MLPClassifier(
        hidden_layer_sizes=hidden,
        alpha=1e-3,
        early_stopping=True,
        max_iter=200,
        random_state=SEED,
    )
    model.fit(scaler.transform(train.rows), train.labels)
    return scaler, model


def unit_scores(scaler, model, split: Split) -> np.ndarray:
    return model.predict_proba(scaler.transform(split.rows))[:, 1]


def best_per_question(split: Split, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per question: the best unit's score and whether stating that unit is right."""
    n = len(split.answerable)
    best = np.full(n, -1.0)
    right = np.zeros(n, dtype=bool)
    for i, (q, s) in enumerate(zip(split.question, scores, strict=True)):
        if s > best[q]:
            best[q], right[q] = s, bool(split.labels[i])
    return best, right


@dataclass(frozen=True)
class Steps:
    """A calibration map as its table of steps: what the artefact stores and `np.interp` reads."""

    x: np.ndarray
    y: np.ndarray

    def predict(self, scores: np.ndarray) -> np.ndarray:
        return np.interp(scores, self.x, self.y)


def calibrate(scores: np.ndarray, right: np.ndarray) -> Steps:
    """Isotonic regression of rightness on score, each step's rate then smoothed by Laplace's rule of
    succession ((right + 1) / (n + 2)), so a step of a few answers, all right, reads as likely, not certain."""
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip", increasing=True)
    iso.fit(scores, right.astype(float))
    fitted = iso.predict(scores)
    smoothed = {}
    for level in np.unique(iso.y_thresholds_):
        inside = np.isclose(fitted, level)
        smoothed[level] = (right[inside].sum() + 1) / (inside.sum() + 2)
    y = np.maximum.accumulate([smoothed[v] for v in iso.y_thresholds_])
    return Steps(np.asarray(iso.X_thresholds_, dtype=np.float64), np.asarray(y, dtype=np.float64))


def threshold_for(probability: np.ndarray, right: np.ndarray, target: float = TARGET_PRECISION) -> float:
    """The lowest calibrated probability whose stated answers reach the target precision."""
    for t in sorted(set(np.round(probability, 4))):
        stated = probability >= t
        if stated.sum() >= 20 and right[stated].mean() >= target:
            return float(t)
    return 1.0


def reliability(probability: np.ndarray, right: np.ndarray) -> tuple[float, list[dict]]:
    """Expected calibration error and the table of buckets (count, mean confidence, accuracy)."""
    table, ece = [], 0.0
    for lo, hi in itertools.pairwise(BUCKETS):
        inside = (probability >= lo) & (probability < hi)
        if not inside.any():
            continue
        conf, acc = float(probability[inside].mean()), float(right[inside].mean())
        ece += inside.sum() / len(probability) * abs(conf - acc)
        table.append(
            {
                "bucket": f"{lo:.1f}-{min(hi, 1.0):.1f}",
                "n": int(inside.sum()),
                "confidence": round(conf, 3),
                "accuracy": round(acc, 3),
            }
        )
    return round(float(ece), 4), table


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return round(float(roc_auc_score(labels, scores)), 4)


def out_of_fold(data: Split) -> np.ndarray:
    """Each unit's score from a scorer fitted without its document's fold."""
    scores = np.zeros(len(data.labels))
    for k in sorted(set(data.fold.tolist())):
        held = data.fold == k
        scaler, model = fit_scorer(data.subset(~held))
        rows = held[data.question]
        scores[rows] = unit_scores(scaler, model, data.subset(held))
    return scores


def cross_calibrated(best: np.ndarray, right: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Each question's probability from an isotonic map fitted on the other folds (for honest ECE)."""
    out = np.zeros(len(best))
    for k in sorted(set(folds.tolist())):
        held = folds == k
        out[held] = calibrate(best[~held], right[~held]).predict(best[held])
    return out


def measure(data: Split, scores: np.ndarray, probability: np.ndarray, threshold: float) -> dict:
    best, right = best_per_question(data, scores)
    stated = probability >= threshold
    ece, table = reliability(probability, right)
    return {
        "questions": len(best),
        "answerable": int(data.answerable.sum()),
        "unit_auc": auc(scores, data.labels),
        "top_unit_right_when_answerable": round(float(right[data.answerable].mean()), 4),
        "stated": round(float(stated.mean()), 4),
        "precision_stated": round(float(right[stated].mean()), 4) if stated.any() else None,
        "ece": ece,
        "reliability": table,
    }


def artefact(scaler, model, iso: Steps, threshold: float, card: dict) -> dict:
    xs, ys = iso.x, iso.y
    return {
        "features": list(FEATURES),
        "mean": scaler.mean_.round(6).tolist(),
        "scale": scaler.scale_.round(6).tolist(),
        "layers": [
            {"weights": w.round(6).tolist(), "bias": b.round(6).tolist()}
            for w, b in zip(model.coefs_, model.intercepts_, strict=True)
        ],
        "calibration": {"x": np.round(xs, 6).tolist(), "y": np.round(ys, 6).tolist()},
        "threshold": round(threshold, 4),
        **card,
    }


def run(records: Sequence[Record], weights: CorpusWeights, out: Path, progress, sources: dict) -> dict:
    """Out-of-fold scores calibrate and measure; the shipped scorer is then fitted on every fold."""
    started = time.time()
    data = build(records, weights, progress)
    oof = out_of_fold(data)
    best, right = best_per_question(data, oof)
    iso = calibrate(best, right)
    held_out = cross_calibrated(best, right, data.fold)
    threshold = threshold_for(held_out, right)  # chosen on probabilities no fold fitted itself
    scaler, model = fit_scorer(data)
    card = {
        "trained": time.strftime("%Y-%m-%d"),
        "sources": sources,
        "target_precision": TARGET_PRECISION,
        "metrics": {"cross_validated": measure(data, oof, held_out, threshold)},
        "seconds": round(time.time() - started, 1),
    }
    out.write_text(json.dumps(artefact(scaler, model, iso, threshold, card), indent=1) + "\n")
    return card


def forbidden_hashes(shared: Path, examples: Path) -> set[str]:
    """sha256 of every evaluation question: the held-out list, the bench sets and the examples' eval files."""
    from graph_flows.reader.training import question_hash

    out: set[str] = set()
    held = shared / "blind" / "heldout-question-hashes.txt"
    if held.is_file():
        out |= {line.strip() for line in held.read_text().splitlines() if line.strip()}
    for path in sorted((shared / "bench" / "data").glob("*/*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, list):
            for item in data:
                if isinstance(item, dict) and "question" in item:
                    out.add(question_hash(item["question"]))
                    out |= {question_hash(d["question"]) for d in item.get("question_decomposition", [])}
    for path in sorted(examples.glob("*/eval.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                out |= {
                    question_hash(item[k]) for k in ("question", "followup") if isinstance(item.get(k), str)
                }
    return out


def training_records(
    data: Path, *, shared: Path, examples: Path, hashes_out: Path
) -> tuple[list[Record], int]:
    """Every training question no evaluation set asks (and how many were dropped because one does); the
    sha256 of those kept goes to `hashes_out`, for the disjointness test."""
    from graph_flows.reader.training import disjointness, load_records, question_hash

    records = load_records(data)
    if not records:
        raise SystemExit(f"no training data under {data} (docs/reader.md says where it comes from)")
    forbidden = forbidden_hashes(shared, examples)
    dropped = disjointness(records, forbidden)
    records = [r for r in records if question_hash(r.question) not in forbidden]
    log.info("training questions dropped because an evaluation set asks them too: %d", len(dropped))
    hashes_out.write_text("".join(f"{h}\n" for h in sorted({question_hash(r.question) for r in records})))
    return records, len(dropped)


def split_for_calibration(records: Sequence[Record]) -> tuple[list[Record], list[Record]]:
    """(the unit scorer's questions, the answer calibration's): by document, never one document in both."""
    from graph_flows.reader.training import CALIBRATION_FOLDS

    scorer: list[Record] = []
    held: list[Record] = []
    for r in records:
        (held if fold_of(r.group) in CALIBRATION_FOLDS else scorer).append(r)
    return scorer, held


def train(records: Sequence[Record], dropped: int, out: Path, *, embed, progress_factory) -> dict:
    """Featurise, fit, calibrate, measure, write the unit scorer. Returns the model card."""
    weights = CorpusWeights(dict.fromkeys(p["text"] for r in records for p in r.passages), embed)
    sources: dict[str, int] = {}
    for r in records:
        sources[r.source] = sources.get(r.source, 0) + 1
    with progress_factory(len(records)) as progress:
        card = run(records, weights, out, progress, {**sources, "dropped_as_evaluation": dropped})
    return card
