"""Retrieval and answer metrics, as HippoRAG reports them, plus latency percentiles. Pure functions.

- Recall@k: per question, the share of gold passages among the first k *distinct* passages, averaged.
- AR@k: the share of questions with every gold passage in the first k.
- Answer-in-evidence: the normalised gold answer (or an alias) occurs, on word boundaries, in the normalised
  text of the passages the answer cites. Normalisation is SQuAD's: lowercase, drop punctuation and the
  articles a/an/the, squeeze whitespace. Yes/no answers are left out (passages never spell them out).
- Answer-in-answer: the same test on what the user reads as the answer (`posted_text`): the answer's own
  sentences and the conflict block, never the sources list, and nothing when Sleuth declined (the closest
  passages it then shows are marked as not answering).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable, Sequence
from typing import Any

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”–—")
YES_NO = frozenset({"yes", "no"})


def distinct(doc_ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(doc_ids))


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        return 0.0
    return len(wanted & set(distinct(ranked)[:k])) / len(wanted)


def all_recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    return 1.0 if wanted and wanted <= set(distinct(ranked)[:k]) else 0.0


def normalise_answer(text: str) -> str:
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def is_yes_no(answers: Sequence[str]) -> bool:
    return bool(answers) and normalise_answer(answers[0]) in YES_NO


def answer_in_text(answers: Iterable[str], text: str) -> bool:
    """Whether any normalised answer occurs in the normalised text as whole words."""
    haystack = f" {normalise_answer(text)} "
    for answer in answers:
        needle = normalise_answer(answer)
        if needle and f" {needle} " in haystack:
            return True
    return False


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def posted_text(answer: dict[str, Any]) -> str:
    """What a user reads as the answer: its sentences and the sides of any conflict (value, title, date)."""
    if not answer.get("answered"):
        return ""
    lines = [str(line.get("text", "")) for line in answer.get("sentences") or []]
    for conflict in answer.get("conflicts") or []:
        for side in conflict.get("sides") or []:
            lines.append(
                f"{side.get('title', '')} ({side.get('updated_at', '')}): {side.get('value', '')}. "
                f"{side.get('sentence', '')}"
            )
    return "\n".join(lines)


def contains_all(required: Iterable[str | Sequence[str]], text: str) -> bool:
    """Every requirement occurs in the text (case-insensitive); a requirement that is a list is met by any
    one of its alternatives. Plain substring, so "$75" and "99.5%" keep their symbols."""
    haystack = " ".join(text.lower().split())
    for need in required:
        options = [need] if isinstance(need, str) else list(need)
        if not any(" ".join(str(o).lower().split()) in haystack for o in options if str(o).strip()):
            return False
    return True
