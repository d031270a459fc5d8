"""Generic features of a candidate answer unit for a question: how much of the question it covers (by weight
of the question's words and by meaning), how it stands against the other candidates, and whether it holds a
span of the kind the question asks for. Nothing here names a domain, a data set or a question form beyond
English wh-words; the weights that combine the features are learned (`reader.model`).

The same code computes the features for training (`reader.training`, over public QA data) and at answer time
(over the asker's evidence), so what the model learned is what it is asked.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
from nltk.stem.porter import PorterStemmer

from connectors.text import STOPWORDS, tokens

_STEMMER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)  # the store's FTS5 tokenizer stems alike

# The question's kind by its wh-word: what shape of span answers it. English function words, not a domain.
QUESTION_KINDS = ("person", "time", "place", "quantity", "reason", "manner", "polar", "other")
_KIND_OPENERS = (
    ("quantity", re.compile(r"\bhow (many|much|long|far|big|large|old|often|fast|high|tall)\b")),
    ("reason", re.compile(r"\bwhy\b")),
    ("manner", re.compile(r"\bhow\b")),
    ("time", re.compile(r"\b(when|what (year|date|day|month|time))\b")),
    ("place", re.compile(r"\bwhere\b")),
    ("person", re.compile(r"\b(who|whom|whose)\b")),
    ("polar", re.compile(r"^(is|are|was|were|do|does|did|can|could|should|will|would|has|have|had)\b")),
)
_NUMBER = re.compile(r"\d")
_YEAR_OR_DATE = re.compile(r"\b(1[0-9]\d\d|20\d\d)\b|\b\d{4}-\d{2}-\d{2}\b")
_MONTH = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|november|december)\b", re.I
)
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+")

FEATURES = (
    "cos",
    "cos_gap",
    "cos_rank",
    "lex",
    "lex_gap",
    "lex_rank",
    "lex_unit_only",
    "lex_window",
    "miss_unit",
    "miss_window",
    "miss_all",
    "cover_all",
    "passage_lex",
    "passage_rank",
    "bigram",
    "novelty",
    "length",
    "type_match",
    "has_number",
    "has_date",
    "has_new_name",
    *(f"kind_{k}" for k in QUESTION_KINDS),
    *(f"match_{k}" for k in QUESTION_KINDS),
)


class Weights(Protocol):
    """What the features need from the corpus: a term's weight and dense similarity (a Lexicon fits)."""

    def idf(self, term: str) -> float: ...

    def similarity(self, query: str, texts: list[str]) -> list[float]: ...


@dataclass(frozen=True)
class Candidate:
    """One unit that may answer: its text, the document title and heading above it, the passage it is in
    (an id and that passage's whole text) and its place in that passage."""

    text: str
    title: str
    heading: str
    passage: str
    passage_text: str
    position: int

    @property
    def shown(self) -> str:
        """The unit as the dense side embeds it: with its heading when that adds to the title ("Per diem: $75
        a day"), as the composer's dense reading embeds it, so one vector serves both. The title counts on the
        lexical side."""
        return f"{self.heading}: {self.text}" if self.heading and self.heading != self.title else self.text


@lru_cache(maxsize=200_000)
def stems(text: str) -> tuple[str, ...]:
    """Porter stems of a text's content words, in order."""
    return tuple(_STEMMER.stem(t) for t in tokens(text) if t not in STOPWORDS and len(t) > 1)


def question_kind(question: str) -> str:
    q = question.strip().lower()
    for kind, pattern in _KIND_OPENERS:
        if pattern.search(q):
            return kind
    return "other"


def _spans(text: str, question_stems: frozenset[str]) -> tuple[bool, bool, bool]:
    has_number = bool(_NUMBER.search(text))
    has_date = bool(_YEAR_OR_DATE.search(text) or _MONTH.search(text))
    # a capitalised word past the first one is a name's (the first may only open the sentence)
    names = {_STEMMER.stem(m.group(0).lower()) for m in _CAPITALISED.finditer(text) if m.start() > 0}
    return has_number, has_date, bool(names - question_stems)


def _type_match(kind: str, has_number: bool, has_date: bool, has_name: bool) -> float:
    expected = {
        "person": has_name,
        "place": has_name,
        "time": has_date or has_number,
        "quantity": has_number,
    }
    return float(expected.get(kind, True))


def _coverage(weights: dict[str, float], present: set[str] | frozenset[str]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in present) / total if total else 0.0


def _missing(weights: dict[str, float], present: set[str] | frozenset[str]) -> float:
    """The weight of the rarest question word absent from `present`, as a share of the rarest overall: one
    rare word missing ("the Lite model" where only the Pro is described) outweighs many common ones."""
    top = max(weights.values(), default=0.0)
    missing = max((w for t, w in weights.items() if t not in present), default=0.0)
    return missing / top if top else 0.0


def _ranks(values: Sequence[float]) -> list[float]:
    """1 / rank of each value among all (ties share the better rank)."""
    order = sorted(set(values), reverse=True)
    place = {v: i + 1 for i, v in enumerate(order)}
    return [1.0 / place[v] for v in values]


def featurise(question: str, candidates: Sequence[Candidate], weights: Weights) -> np.ndarray:
    """One row of FEATURES per candidate, each judged against the others (the set is what was retrieved)."""
    if not candidates:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    q_stems = stems(question)
    q_set = frozenset(q_stems)
    w = {t: max(weights.idf(t), 0.0) for t in q_set}
    bigrams = set(itertools.pairwise(q_stems))
    kind = question_kind(question)
    cos = weights.similarity(question, [c.shown for c in candidates])
    by_passage: dict[str, list[int]] = {}
    for i, c in enumerate(candidates):
        by_passage.setdefault(c.passage, []).append(i)
    passage_cover = {
        p: _coverage(w, set(stems(candidates[ix[0]].passage_text)) | set(stems(candidates[ix[0]].title)))
        for p, ix in by_passage.items()
    }
    passage_ranks = dict(zip(passage_cover, _ranks(list(passage_cover.values())), strict=True))
    lex, unit_only, window, rows = [], [], [], []
    contexts, windows = [], []
    for c in candidates:
        own = set(stems(c.text))
        context = own | set(stems(c.title)) | set(stems(c.heading))
        lex.append(_coverage(w, context))
        unit_only.append(_coverage(w, own))
        near = set(own)
        for j in by_passage[c.passage]:
            if abs(candidates[j].position - c.position) == 1:
                near |= set(stems(candidates[j].text))
        window.append(_coverage(w, near | context))
        contexts.append(context)
        windows.append(near | context)
    everything = set().union(*windows)
    miss_all, cover_all = _missing(w, everything), _coverage(w, everything)
    cos_ranks, lex_ranks = _ranks(cos), _ranks(lex)
    best_cos, best_lex = max(cos), max(lex)
    for i, c in enumerate(candidates):
        unit_stems = stems(c.text)
        own = set(unit_stems)
        unit_bigrams = set(itertools.pairwise(unit_stems))
        has_number, has_date, has_name = _spans(c.text, q_set)
        novelty = len(own - q_set) / len(own) if own else 0.0
        row = [
            cos[i],
            cos[i] - best_cos,
            cos_ranks[i],
            lex[i],
            lex[i] - best_lex,
            lex_ranks[i],
            unit_only[i],
            window[i],
            _missing(w, contexts[i]),
            _missing(w, windows[i]),
            miss_all,
            cover_all,
            passage_cover[c.passage],
            passage_ranks[c.passage],
            len(bigrams & unit_bigrams) / len(bigrams) if bigrams else 0.0,
            novelty,
            math.log1p(len(tokens(c.text))),
            _type_match(kind, has_number, has_date, has_name),
            float(has_number),
            float(has_date),
            float(has_name),
            *(float(kind == k) for k in QUESTION_KINDS),
            *(float(kind == k) * _type_match(k, has_number, has_date, has_name) for k in QUESTION_KINDS),
        ]
        rows.append(row)
    return np.asarray(rows, dtype=np.float32)
