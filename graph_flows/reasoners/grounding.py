"""Whether a model's sentence says only what its cited passages say. Pure.

The model gives, with each sentence, a verbatim quote from a cited passage. The program checks that the quote
is really there (case, spacing, quote marks and an elided middle "..." forgiven), then that the sentence agrees
with it: every quantity in the sentence (numbers, dates, percentages, durations, amounts) occurs in the quote (or
the cited titles) as the same *normalised whole token*, so "1 May 2024" = "2024-05-01", "1,200" = "1.2k",
"24 hours" = "24h" = "1 day", while "2 days" != "12 days" and "5%" != "15%"; numbers in "30/60/90" and
"03:30" count one by one, and a value stated once backs one quantity (not "20 requests/min · Burst: 20" from
"120 requests/min · Burst: 20"); the sentence negates exactly
as often as its support does; and most of its content terms come from the passages. Without a quote, the
passage sentence closest to the claim stands in for it (quantities are then looked up in the whole cited
passages). Then the sentence must relate its facts as the support does (`grounding_relations`: no values
swapped between the things they belong to, no other cause, no reversed direction). Each failure is a short
reason, which the trace shows and the repair request lists.

The model reads each passage as `shown_text`: one readable unit a line, table rows with their column names
bound ("Plan: Starter · Sustained: 120 requests/min"), as the offline reasoner reads them; a quote may come from
that rendering or from the raw text. A grounded sentence's quantities are then written as its source writes them
(`as_in_source`: "$2.5k" back to "$2,500"), so a reader finds the figure in the cited passage as posted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

from graph_flows.reading import sentences, term_set, units
from graph_flows.reasoners.grounding_relations import Binding, misrelated
from graph_flows.state import Evidence

GROUNDED_SHARE = 0.5  # share of a sentence's content terms that must occur in the passages it cites
MIN_QUOTE_CHARS = 12

_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_MONTH = r"(?P<{g}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{g}>[0-3]?\d)(?:st|nd|rd|th)?"
_DATE = re.compile(
    r"\b(?:(?P<iy>\d{4})-(?P<im>\d{2})(?:-(?P<id>\d{2}))?"
    + "|"
    + _DAY.format(g="ad")
    + r"\s+(?:of\s+)?"
    + _MONTH.format(g="am")
    + r",?\s+(?P<ay>\d{4})"
    + "|"
    + _MONTH.format(g="bm")
    + r"\s+"
    + _DAY.format(g="bd")
    + r",?\s+(?P<by>\d{4})"
    + "|"
    + _MONTH.format(g="cm")
    + r",?\s+(?P<cy>\d{4}))\b",
    re.I,
)
_SECONDS = {
    "ms": Decimal("0.001"),
    "s": Decimal(1),
    "sec": Decimal(1),
    "second": Decimal(1),
    "m": Decimal(60),
    "min": Decimal(60),
    "minute": Decimal(60),
    "h": Decimal(3600),
    "hr": Decimal(3600),
    "hour": Decimal(3600),
    "d": Decimal(86400),
    "day": Decimal(86400),
    "w": Decimal(604800),
    "wk": Decimal(604800),
    "week": Decimal(604800),
    "month": Decimal(2592000),
    "year": Decimal(31536000),
    "yr": Decimal(31536000),
}
_SCALE = {
    "k": Decimal(1000),
    "thousand": Decimal(1000),
    "m": Decimal(1_000_000),
    "mn": Decimal(1_000_000),
    "million": Decimal(1_000_000),
    "bn": Decimal(1_000_000_000),
    "b": Decimal(1_000_000_000),
    "billion": Decimal(1_000_000_000),
}
_UNIT = (
    r"%|percent|per\s*cent|ms|milliseconds?|secs?|seconds?|s|mins?|minutes?|hrs?|hours?|h|days?|d|wks?|weeks?|w|"
    r"months?|years?|yrs?|k|thousand|mn|m|million|bn|b|billion"
)
_QUANTITY = re.compile(
    r"(?<![\w.\-])(?<!\D/)(?<!\D:)(?<!^/)(?<!^:)[$€£]?(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|"
    + "|".join(_WORDS)
    + r")(?:st|nd|rd|th)?(?:\s?-?\s?(?P<u>"
    + _UNIT
    + r"))?(?![\w])",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|unable)\b|(?<=n)'t\b|(?<=\bnot)'t\b"
    r"|\bfail(?:ed|s)? to\b",
    re.I,
)
_SPACES = re.compile(r"\s+")
_QUOTES = str.maketrans(
    {"“": "", "”": "", '"': "", "`": "", "‘": "'", "’": "'", "–": "-", "—": "-", "…": "..."}
)


def quantities(text: str) -> list[tuple[str, frozenset[str]]]:
    """Each quantity in `text`, as written and as its normalised readings ("5m": 5 million or 5 minutes)."""
    found: list[tuple[str, frozenset[str]]] = []
    rest = text
    for m in _DATE.finditer(text):
        found.append((m.group(0), _date(m)))
        rest = rest.replace(m.group(0), " ")
    for m in _QUANTITY.finditer(rest):
        readings = _readings(m.group("n"), m.group("u"))
        if readings:
            found.append((m.group(0).strip(), readings))
    return found


def bindings(text: str) -> list[Binding]:
    """Each quantity in `text` in order, with the content terms written between it and the one before, less
    the words that follow a value (its unit)."""
    spans: list[tuple[int, int, frozenset[str]]] = []
    masked = text
    for m in _DATE.finditer(text):
        spans.append((m.start(), m.end(), _date(m)))
        masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
    for m in _QUANTITY.finditer(masked):
        readings = _readings(m.group("n"), m.group("u"))
        if readings:
            spans.append((m.start(), m.end(), readings))
    spans.sort()
    units = (
        set().union(*(term_set(" ".join(text[end:].split()[:1])) for _, end, _ in spans)) if spans else set()
    )
    out: list[Binding] = []
    last = 0
    for start, end, readings in spans:  # a value's unit ("120 requests/min") is no word of the next value's
        out.append((text[start:end].strip(), term_set(text[last:start]) - units, readings))
        last = end
    return out


def negations(text: str) -> int:
    """How many negations the text has: a claim must negate as often as its support ("are not tracked as a
    performance issue, not a crash" is not "are tracked as a performance issue, not a crash")."""
    return len(_NEGATION.findall(text))


def negated(text: str) -> bool:
    return negations(text) > 0


def shown_text(text: str) -> str:
    """A passage as the model is shown it: its headings, then each unit on its own line (prose sentences,
    list items, table rows with their column names), so a table row read alone still says what it is."""
    lines: list[str] = []
    heading = ""
    for unit in units(text):
        if unit.heading and unit.heading != heading:
            heading = unit.heading
            lines.append(f"# {heading}")
        lines.append(unit.text)
    return "\n".join(lines) or text


def _in_passage(quote: str, e: Evidence) -> bool:
    return quote_found(quote, f"{e['title']}. {e['text']}") or quote_found(quote, shown_text(e["text"]))


def quote_found(quote: str, passage: str) -> bool:
    """The quote occurs in the passage, forgiving case, spacing, quote marks and elisions ("a ... b")."""
    haystack = _flat(passage)
    pieces = [p for p in (_flat(piece) for piece in re.split(r"\.\.\.|…", quote)) if p]
    if sum(len(p) for p in pieces) < MIN_QUOTE_CHARS:
        return False
    at = 0
    for piece in pieces:
        at = haystack.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return True


def ungrounded(sentence: str, quote: str, cited: Sequence[Evidence]) -> str | None:
    """Why the sentence is not supported by its quote and cited passages, or None when it is."""
    if not cited:
        return "cites no passage"
    source = " ".join(f"{e['title']}. {e['text']}" for e in cited)
    if quote:
        if _is_heading(quote, cited):
            return "its quote is a heading or title, which states nothing"
        if not any(_in_passage(quote, e) for e in cited):
            return "its quote is not in the cited passage"
        support = quote
    else:
        support = _closest(sentence, cited)
    own = term_set(sentence)
    if not own or len(own & term_set(source)) / len(own) < GROUNDED_SHARE:
        return "most of its words are not in the cited passage"
    titles = " ".join(e["title"] for e in cited)
    against = f"{support} {titles}" if quote else source  # a quote must carry the sentence's quantities
    unused = [q for _, q in quantities(against)]  # each stated value backs one quantity of the sentence
    for written, q in quantities(sentence):
        match = next((i for i, there in enumerate(unused) if there & q), None)
        if match is not None:
            unused.pop(match)
        elif not _within(q, {r for there in unused for r in there}):
            return f"{written!r} is not in the cited passage"
    own_negations, support_negations = negations(_untitled(sentence, cited)), negations(support)
    if own_negations != support_negations:
        return (
            "it negates what the passage states"
            if own_negations > support_negations
            else "it drops the passage's negation"
        )
    claim = _untitled(sentence, cited)
    return misrelated(claim, support, bindings(claim), bindings(support))


def _untitled(sentence: str, cited: Sequence[Evidence]) -> str:
    """The sentence without the cited titles it names: "According to ENG-150: Android: card has no data, ..."
    states nothing by its source's name, so the title's "no" is not the sentence's negation."""
    for title in sorted({e["title"] for e in cited}, key=len, reverse=True):
        if title.strip():
            sentence = re.sub(re.escape(title), " ", sentence, flags=re.I)
    return sentence


def _is_heading(quote: str, cited: Sequence[Evidence]) -> bool:
    """A quote that is only a heading or a passage's title ("# Public API Rate Limits") supports no claim."""
    flat = _flat(quote.lstrip().lstrip("#"))
    names = {_flat(e["title"]) for e in cited} | {_flat(u.heading) for e in cited for u in units(e["text"])}
    return quote.lstrip().startswith("#") or flat in names


def as_in_source(sentence: str, quote: str, cited: Sequence[Evidence]) -> str:
    """The (grounded) sentence with each quantity written the way its support writes the same value: the
    quote's spelling first, else the cited passages'. Values that only agree loosely are left as written."""
    support = f"{quote} " if quote else ""
    spelled = quantities(support + " ".join(f"{e['title']}. {e['text']}" for e in cited))
    out = sentence
    for written, readings in quantities(sentence):
        source = next((w for w, r in spelled if r & readings), None)
        if source and source != written and written in out:
            out = out.replace(written, source, 1)
    return out


def _closest(sentence: str, cited: Sequence[Evidence]) -> str:
    own = term_set(sentence)
    candidates = [s for e in cited for s in sentences(e["text"])] or [""]
    return max(candidates, key=lambda s: len(own & term_set(s)))


def _within(readings: frozenset[str], available: set[str]) -> bool:
    """A month or year is supported by a full date inside it ("May 2024" by "2024-05-01")."""
    for r in readings:
        if r.startswith(("m:", "y:")) and any(
            a.startswith(("d:", "m:")) and a[2:].startswith(r[2:]) for a in available
        ):
            return True
    return False


def _date(m: re.Match[str]) -> frozenset[str]:
    g = m.groupdict()
    if g["iy"]:
        year, month, day = int(g["iy"]), int(g["im"]), int(g["id"]) if g["id"] else None
    else:
        year = int(g["ay"] or g["by"] or g["cy"])
        month = _MONTHS[(g["am"] or g["bm"] or g["cm"]).lower().rstrip(".")]
        day_text = g["ad"] or g["bd"]
        day = int(day_text) if day_text else None
    if day is None:
        return frozenset({f"m:{year:04d}-{month:02d}"})
    return frozenset({f"d:{year:04d}-{month:02d}-{day:02d}"})


def _readings(number: str, unit: str | None) -> frozenset[str]:
    word = number.lower()
    try:
        value = Decimal(_WORDS[word]) if word in _WORDS else Decimal(number.replace(",", ""))
    except InvalidOperation:
        return frozenset()
    if word in _WORDS and not unit:
        return frozenset()  # "one of the reasons" is not a quantity
    if not unit:
        plain = {f"n:{_canon(value)}"}
        if 1900 <= value <= 2099 and value == value.to_integral_value():
            plain.add(f"y:{int(value):04d}")
        return frozenset(plain)
    u = _SPACES.sub("", unit.lower())
    if u == "%" or u.startswith("per"):
        return frozenset({f"pct:{_canon(value)}"})
    readings: set[str] = set()
    single = u if u in _SECONDS or u in _SCALE else u.removesuffix("s")
    single = "ms" if single.startswith("millisecond") else single
    if single in _SECONDS:
        readings.add(f"dur:{_canon(value * _SECONDS[single])}")
    if single in _SCALE:
        readings.add(f"n:{_canon(value * _SCALE[single])}")
    return frozenset(readings or {f"n:{_canon(value)}"})


def _canon(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _flat(text: str) -> str:
    text = _SPACES.sub(" ", text.translate(_QUOTES).lower()).strip()
    return text.strip(" .,;:'")
