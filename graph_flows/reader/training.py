"""Fit the answer-unit scorer on public question-answering data and calibrate it (`make train-reader`).

Data: records in one shape (`Record`), read from the training folder (`SLEUTH_TRAINING_DATA`, default
../shared/training): SQuAD 2.0 as published (its unanswerable questions teach declining) and any
`*/records.jsonl` converted from other public sets (docs/reader.md lists each source, commit and licence).
Every question is checked against the evaluation sets first (`disjointness`): a question an evaluation set
also asks is dropped, and the hashes of those kept are written for the disjointness test.

Each question's candidates are the units of its gold passages and of the passages most like it (what a
retriever hands the reader); a share of answerable questions loses its gold passages, so the model also
sees questions whose answer was not retrieved. Fitting, the cross-validated calibration and the artefact are
`reader.fitting`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graph_flows.reader.features import Candidate, stems
from graph_flows.reader.units import split_units

log = logging.getLogger(__name__)

TARGET_PRECISION = 0.9
DISTRACTORS = 3  # passages like the question's, beside its gold ones
GOLD_DROPPED = 0.3  # share of answerable questions asked without their gold passages
# SQuAD 2.0's unanswerable questions were written against the paragraph to look answerable; kept at this
# share, so that near misses are seen without making them the common case of a question with no answer
ADVERSARIAL_KEPT = 0.25
MAX_PASSAGES = 6
SEED = 13
# Documents (by their fold, `fitting.fold_of`) kept from the unit scorer: the answer calibration reads their
# questions through the flow, so the scorer's probabilities it learns from are those of unseen documents.
CALIBRATION_FOLDS = frozenset({3, 4})


@dataclass
class Record:
    source: str
    id: str
    question: str
    passages: list[dict]  # {"title", "text"}
    answers: list[str]
    gold: list[int]
    group: str  # questions of one document stay in one split
    supporting: list[tuple[int, str]] = field(default_factory=list)


def normalised_question(text: str) -> str:
    """As the held-out hashes are made: lower-cased, whitespace collapsed, stripped."""
    return re.sub(r"\s+", " ", text.lower()).strip()


def question_hash(text: str) -> str:
    return hashlib.sha256(normalised_question(text).encode()).hexdigest()


def squad_records(path: Path) -> Iterator[Record]:
    """SQuAD 2.0 JSON: each paragraph of an article is a passage; the article is the group."""
    for article in json.loads(path.read_text())["data"]:
        title = article["title"].replace("_", " ")
        passages = [{"title": title, "text": p["context"]} for p in article["paragraphs"]]
        for i, paragraph in enumerate(article["paragraphs"]):
            for qa in paragraph["qas"]:
                if "is_impossible" not in qa:
                    continue  # a split published without its answers
                answers = [] if qa["is_impossible"] else sorted({a["text"] for a in qa["answers"]})
                yield Record("squad2", qa["id"], qa["question"], passages, answers, [i], title)


def jsonl_records(path: Path) -> Iterator[Record]:
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("polar") or (
            {a.lower() for a in r.get("answers", [])} <= {"yes", "no"} and r.get("answers")
        ):
            continue  # a yes/no answer is no span of a unit
        group = r.get("group") or hashlib.sha1(r["id"].encode()).hexdigest()[:8]
        yield Record(
            r["source"],
            r["id"],
            r["question"],
            r["passages"],
            list(r.get("answers", [])),
            list(r.get("gold", [])),
            group,
            [tuple(s) for s in r.get("supporting", [])],
        )


def load_records(folder: Path) -> list[Record]:
    out: list[Record] = []
    rng = random.Random(SEED)
    for path in sorted(folder.glob("squad2/dev-v2.0.json")):
        out += [r for r in squad_records(path) if r.answers or rng.random() < ADVERSARIAL_KEPT]
    for path in sorted(folder.glob("*/records.jsonl")):  # questions with no answer kept at the same share
        out += [r for r in jsonl_records(path) if r.gold or rng.random() < ADVERSARIAL_KEPT]
    return out


def disjointness(records: Iterable[Record], forbidden: set[str]) -> list[str]:
    """Questions of the training data whose hash is among the evaluation sets' (should be none)."""
    return [r.question for r in records if question_hash(r.question) in forbidden]


class CorpusWeights:
    """idf over the training passages and MiniLM similarity, as the store's lexicon gives them at run time."""

    def __init__(self, passages: Iterable[str], embed) -> None:
        df: Counter[str] = Counter()
        total = 0
        for text in passages:
            total += 1
            df.update(set(stems(text)))
        self._df, self._total = df, total
        self._embed = embed
        self._vectors: dict[str, np.ndarray] = {}

    def idf(self, term: str) -> float:
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._total - df + 0.5) / (df + 0.5))

    def warm(self, texts: Sequence[str], batch: int = 256) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            for text, vector in zip(chunk, self._embed(chunk), strict=True):
                self._vectors[text] = np.asarray(vector, dtype=np.float32)

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        self.warm([query, *texts])
        q = self._vectors[query]
        return [float(self._vectors[t] @ q) for t in texts]


def candidates_for(
    record: Record, rng: random.Random, weights: CorpusWeights
) -> tuple[list[Candidate], bool]:
    """The question's candidate units and whether its gold passages are among them."""
    q = set(stems(record.question))
    gold = [i for i in record.gold if i < len(record.passages)]
    drop = bool(record.answers) and rng.random() < GOLD_DROPPED
    others = [i for i in range(len(record.passages)) if i not in gold]
    cover = {i: sum(weights.idf(t) for t in q & set(stems(record.passages[i]["text"]))) for i in others}
    near = sorted(others, key=lambda i: -cover[i])[: DISTRACTORS + (len(gold) if drop else 0)]
    chosen = sorted(near if drop else [*gold, *near])[:MAX_PASSAGES]
    out: list[Candidate] = []
    for i in chosen:
        p = record.passages[i]
        for unit in split_units(p["text"], title=p["title"], passage=f"{record.id}:{i}"):
            out.append(unit)
    return out, not drop and bool(gold)


def label(record: Record, c: Candidate, gold_present: bool) -> int:
    """A unit is right when it is in a gold passage and holds an answer (or is the supporting sentence that
    states it, for data without answer strings)."""
    if not gold_present or (not record.answers and not record.supporting):
        return 0
    index = int(c.passage.rsplit(":", 1)[1])
    if index not in record.gold:
        return 0
    said = c.text.lower()
    if record.answers:
        return int(any(a.lower() in said for a in record.answers if a.strip()))
    return int(any(i == index and s.strip() and s.strip() in c.text for i, s in record.supporting))
