"""Calibrate the answer: public questions read through this flow, each stated answer marked right or wrong,
and a map fitted from the reader's verdict features to the share that was right (`make train-reader`).

The questions are the training data's calibration folds (documents the unit scorer was not fitted on), asked
over every passage of the training corpus as one knowledge base, with the gate off so that every proposal is
seen, and with the reader's choice off, so that the composer's proposal and the reader's own one-unit proposal
(`decide.own_proposal`) are both recorded. A proposal is right when the gold answer (or, for answer-selection
data, a correct sentence) is in its text; any proposal for a question with no answer is wrong. Fitting: a logistic regression over the
verdict features, its out-of-document scores mapped by isotonic regression (`fitting.calibrate`); the expected
calibration error is measured on probabilities from maps fitted without the document asked about, and the
threshold on the out-of-document scores. Needs scikit-learn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from connectors.knowledge.embedding import Embedder
from evals.index import open_index
from evals.loaders import BenchSet, Passage, Question
from evals.metrics import answer_in_text, posted_text
from evals.modes import BENCH_ASKER, LOOP_MODES, build_investigator
from evals.runner import BENCH_PRINCIPALS
from graph_flows.reader.fitting import calibrate as calibrate_steps
from graph_flows.reader.fitting import reliability, threshold_for
from graph_flows.reader.proposal import PROPOSAL_FEATURES
from graph_flows.reader.training import TARGET_PRECISION, Record
from graph_flows.reasoners.offline import OfflineReasoner

READ = "reader-calibration-read.json"  # what the flow proposed for each question, with its label


def bench_of(records: Sequence[Record], asked: Sequence[Record]) -> BenchSet:
    """Every passage of the records as one corpus (a passage once), and the asked records as questions."""
    passages: dict[tuple[str, str], Passage] = {}
    for r in records:
        for p in r.passages:
            key = (p["title"], p["text"])
            passages.setdefault(key, Passage(f"{r.source}:{len(passages)}", p["title"], p["text"]))
    # an answer-selection record has correct sentences instead of answer strings: stating one is right
    questions = [
        Question(r.id, r.question, tuple(r.answers or [t for _, t in r.supporting]), ()) for r in asked
    ]
    return BenchSet("reader-calibration", "squad2", list(passages.values()), questions)


def read_through_flow(
    bench: BenchSet,
    embedder: Embedder,
    data_dir: Path,
    groups: dict[str, str],
    progress: Callable[[int], None],
) -> dict[str, list]:
    """Each question asked with the gate off; a stated proposal's features, label and document."""
    store, _ = open_index(bench, embedder, data_dir)
    investigator = build_investigator(store, reasoner=OfflineReasoner(gate=False, choose=False))
    rows, right, group, ids = [], [], [], []
    for n, q in enumerate(bench.questions):
        out = investigator.ask(
            f"calibrate:{q.id}",
            q.question,
            asker=BENCH_ASKER,
            principals=BENCH_PRINCIPALS,
            modes=list(LOOP_MODES["loop-graph"]),
        )
        answer = out.get("answer") or {}
        verdict = answer.get("calibration") or {}
        proposals = (
            [(verdict, posted_text(answer))] if answer.get("answered") and "features" in verdict else []
        )
        if (own := verdict.get("alternative")) is not None:
            proposals.append((own, own["text"]))
        for proposal, text in proposals:
            rows.append([proposal["features"][f] for f in PROPOSAL_FEATURES])
            right.append(bool(q.answers) and answer_in_text(q.answers, text))
            group.append(groups[q.id])
            ids.append(q.id)
        progress(n + 1)
    return {"rows": rows, "right": right, "group": group, "id": ids, "asked": len(bench.questions)}


def _fit(rows: np.ndarray, right: np.ndarray):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(rows)
    model = LogisticRegression(C=1.0, max_iter=1000).fit(scaler.transform(rows), right)
    return scaler, model


def fit(read: dict[str, list]) -> tuple[dict, dict]:
    """The artefact and its measurements: out-of-document raw scores, isotonic map, held-out probabilities."""
    from sklearn.metrics import roc_auc_score

    rows, right = np.asarray(read["rows"], dtype=np.float64), np.asarray(read["right"], dtype=bool)
    group = np.asarray(read["group"])
    raw = np.zeros(len(right))
    for g in sorted(set(group)):
        held = group == g
        scaler, model = _fit(rows[~held], right[~held])
        raw[held] = model.predict_proba(scaler.transform(rows[held]))[:, 1]
    held_p = np.zeros(len(right))
    for g in sorted(set(group)):
        held = group == g
        held_p[held] = calibrate_steps(raw[~held], right[~held]).predict(raw[held])
    iso = calibrate_steps(raw, right)
    # chosen on out-of-document scores: the isotonic map only renames them as probabilities
    mapped = iso.predict(raw)
    threshold = threshold_for(mapped, right, TARGET_PRECISION)
    ece, table = reliability(held_p, right)
    stated = mapped >= threshold
    metrics = {
        "asked": read["asked"],
        "proposed": len(right),
        "proposals_right": round(float(right.mean()), 4),
        "auc": round(float(roc_auc_score(right, raw)), 4),
        "ece": ece,
        "reliability": table,
        "threshold": round(threshold, 4),
        "stated_at_threshold": int(stated.sum()),
        "precision_at_threshold": round(float(right[stated].mean()), 4) if stated.any() else None,
        "documents": len(set(group)),
    }
    scaler, model = _fit(rows, right)
    artefact = {
        "features": list(PROPOSAL_FEATURES),
        "mean": scaler.mean_.round(6).tolist(),
        "scale": scaler.scale_.round(6).tolist(),
        "coef": model.coef_[0].round(6).tolist(),
        "intercept": round(float(model.intercept_[0]), 6),
        "calibration": {
            "x": np.round(iso.x, 6).tolist(),
            "y": np.round(iso.y, 6).tolist(),
        },
        "threshold": round(threshold, 4),
        "target_precision": TARGET_PRECISION,
        "metrics": {"cross_validated_by_document": metrics},
    }
    return artefact, metrics


def calibrate(
    records: Sequence[Record],
    asked: Sequence[Record],
    embedder: Embedder,
    data_dir: Path,
    out: Path,
    progress_factory,
    *,
    reuse: bool = False,
) -> dict:
    """Read, fit, write `out`; the measurements are returned (and kept in the artefact as its card).
    `reuse`: refit on what the last run read (the flow and the scorer unchanged since)."""
    started = time.time()
    bench = bench_of(records, asked)
    groups = {r.id: r.group for r in asked}
    if reuse and (data_dir / READ).is_file():
        read = json.loads((data_dir / READ).read_text())
    else:
        with progress_factory(len(bench.questions)) as progress:
            read = read_through_flow(bench, embedder, data_dir, groups, progress)
        (data_dir / READ).write_text(json.dumps(read))
    artefact, metrics = fit(read)
    artefact["trained"] = time.strftime("%Y-%m-%d")
    artefact["seconds"] = round(time.time() - started, 1)
    out.write_text(json.dumps(artefact, indent=1) + "\n")
    return metrics
