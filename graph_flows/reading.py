"""Reading passages the way the offline reasoner needs: sentences, stemmed content terms, answer-type cues.

Stems match SQLite FTS5's porter tokenizer (the original Porter algorithm), so the store's document
frequencies weight the same terms the lexical index ranks with.
"""

from __future__ import annotations

import re
from functools import lru_cache

from nltk.stem.porter import PorterStemmer

from connectors.text import STOPWORDS, tokens

_STEMMER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|St|Jr|Sr|Inc|Ltd|Co|No)\.$")
NUMBER = re.compile(
    r"(?<![\w.])[$€£]?\d[\d,]*(?:\.\d+)?\s?(?:%|k|m|bn|ms|s|h|days?|hours?|minutes?|weeks?|months?|years?)?"
)
YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
]
_DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}\s+(?:"
    + "|".join(MONTHS)
    + r")\w*\s+\d{4}|(?:"
    + "|".join(MONTHS)
    + r")\w*\s+\d{1,2},?\s+\d{4}|(?:"
    + "|".join(MONTHS)
    + r")\w*\s+\d{4})\b",
    re.IGNORECASE,
)
_CAUSAL = re.compile(
    r"\b(because|due to|caused|causing|as a result|root cause|since|so that|therefore|reason|blocked by|"
    r"blocks|slipped|delayed|after)\b",
    re.IGNORECASE,
)
# Irregular English morphology the Porter stemmer leaves apart (born/birth, died/death, wrote/write...).
# Morphology only: synonyms are the dense embedder's job.
_DERIVATIONS = {
    "born": "birth",
    "di": "death",
    "dead": "death",
    "wrote": "write",
    "written": "write",
    "writer": "write",
    "director": "direct",
    "founder": "found",
    "chose": "choos",
    "chosen": "choos",
    "bought": "buy",
    "sold": "sell",
    "led": "lead",
    "paid": "pai",
    "began": "begin",
    "begun": "begin",
}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    base = _STEMMER.stem(word)
    return _DERIVATIONS.get(word, _DERIVATIONS.get(base, base))


def terms(text: str) -> list[str]:
    """Stemmed content terms, in order (stopwords dropped)."""
    return [stem(t) for t in tokens(text) if t not in STOPWORDS and len(t) > 1]


@lru_cache(maxsize=200_000)
def term_set(text: str) -> frozenset[str]:
    """Cached: the reasoner reads the same sentences against every aspect, every round."""
    return frozenset(terms(text))


def sentences(text: str) -> list[str]:
    """Splits a passage into sentences (lines and sentence ends), keeping abbreviations together."""
    return list(_sentences(text))


@lru_cache(maxsize=50_000)
def _sentences(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip(" \t-*#>|")
        if not piece:
            continue
        if out and _ABBREVIATIONS.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return tuple(out)


def answer_type(question: str) -> str:
    """A coarse expected answer type from question cues: person, date, number, place, explanation, yesno,
    choice (a pick between named options), or thing."""
    q = question.strip().lower()
    first = q.split()[0] if q.split() else ""
    head = " ".join(q.split()[:4])  # the question word sits near the start ("so when is...", "and who...")
    if re.search(r"\b(why|what caused|what was the reason|how come)\b", q):
        return "explanation"
    if re.search(r"\b(when|what year|what date|which year|how long ago)\b", head):
        return "date"
    if re.search(
        r"\b(how many|how much|what percentage|what do (?:we|i|you|they) (?:pay|charge|spend)|"
        r"what(?: is|'s| are) the (?:\w+ )?(?:limit|threshold|rate|cost|price|"
        r"budget|allowance|cap|fee|salary|discount|amount|number|size|count))\b",
        q,
    ):
        return "number"
    if re.search(r"\b(where|which (?:country|city|place))\b", head):
        return "place"
    if re.search(r"\b(who|whom|whose)\b", head):
        return "person"
    if re.search(r",? or ", q) and re.search(r"\b(which|who|what)\b", q):
        return "choice"
    if first in {"is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "should"}:
        return "yesno"
    return "thing"


def has_answer_shape(sentence: str, kind: str) -> bool:
    """Whether a sentence could hold an answer of the expected kind (a cheap filter, not a judgement)."""
    if kind == "date":
        return bool(_DATE.search(sentence) or YEAR.search(sentence))
    if kind == "number":
        return any(
            not _is_identifier(sentence, m) and not YEAR.fullmatch(m.group(0).strip())
            for m in NUMBER.finditer(sentence)
        )
    if kind == "explanation":
        return bool(_CAUSAL.search(sentence))
    if kind in {"person", "place"}:
        return bool(re.search(r"(?<![.!?]\s)\b[A-Z][a-z]+", sentence[1:]))
    return True


def _is_identifier(sentence: str, match: re.Match[str]) -> bool:
    """A number that is part of a name or key ("KM-40", "ENG-142", "P3"), not a quantity."""
    before = sentence[max(0, match.start() - 1) : match.start()]
    return before == "-" or before.isalpha()


def values(sentence: str) -> set[str]:
    """Quantities in a sentence (amounts, percentages, durations, dates), normalised, for spotting conflicting
    statements of one fact. Numbers inside names or keys ("S-8", "ENG-142") and bare years are not values."""
    found = {
        m.group(0).strip().lower().replace(",", "")
        for m in NUMBER.finditer(sentence)
        if not _is_identifier(sentence, m) and _has_unit(m.group(0))
    }
    found |= {m.group(0).lower() for m in _DATE.finditer(sentence)}
    return found


def value_kind(value: str) -> str:
    """money, percent, duration, date or number: only values of one kind can contradict each other."""
    if value[:1] in "$€£":
        return "money"
    if value.endswith("%"):
        return "percent"
    if re.search(r"(days?|hours?|minutes?|weeks?|months?|years?|ms|s|h)$", value):
        return "duration"
    if _DATE.fullmatch(value):
        return "date"
    return "number"


def _has_unit(value: str) -> bool:
    value = value.strip()
    return value[:1] in "$€£" or not value.replace(",", "").replace(".", "").isdigit()
