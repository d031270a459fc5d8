"""Reading passages the way the offline reasoner needs: sentences, stemmed content terms, answer-type cues.

Stems match SQLite FTS5's porter tokenizer (the original Porter algorithm), so the store's document
frequencies weight the same terms the lexical index ranks with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from nltk.stem.porter import PorterStemmer

from connectors.text import STOPWORDS, comment_body, normalise, tokens

_STEMMER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
# a sentence does not end at an abbreviation, a name's initial ("W. Mara Voss") or "c." before a year
_ABBREVIATIONS = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|St|Jr|Sr|Inc|Ltd|Co|No|Lt|Col|Gen|Capt|Prof|Rev|Gov|Sen|Mt|Ft|ca?)"
    r"|(?<![\w.'’-])[A-Z])\.$"
)
NUMBER = re.compile(
    r"(?<![\w.])[$€£]?\d[\d,]*(?:\.\d+)?\s?(?:(?:working|business|calendar|full|school)\s)?"
    r"(?:%|kwh|wh|kg|km/h|km|m/s|mph|cm|mm|°c|k|m|bn|ms|s|h|days?|hours?|minutes?|weeks?|months?|years?)?"
    r"(?![\w/])(?!\.\d)",  # not a release number ("4.2.0")
    re.IGNORECASE,
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
    r"blocks|slipped|delayed|waiting (?:on|for)|held up|(?:is|are|was|were|running) late|depends on|until)\b",
    re.IGNORECASE,
)
# Irregular English morphology the Porter stemmer leaves apart (born/birth, died/death, wrote/write, went/go...),
# month abbreviations, and clipped forms of long words. Morphology only: synonyms are the dense embedder's job.
_DERIVATIONS = {
    "jan": "januari",
    "feb": "februari",
    "apr": "april",
    "jun": "june",
    "jul": "juli",
    "aug": "august",
    "sep": "septemb",
    "sept": "septemb",
    "oct": "octob",
    "nov": "novemb",
    "dec": "decemb",
    "born": "birth",
    "di": "death",
    "die": "death",
    "dying": "death",
    "dead": "death",
    "wrote": "write",
    "written": "write",
    "writer": "write",
    "director": "direct",
    "founder": "found",
    "establish": "found",  # "established in 1893" and "founded in 1893" say the same
    "kept": "keep",
    "retent": "keep",  # "how long do we keep logs": the retention period
    "retain": "keep",
    "owner": "own",
    "leader": "lead",
    "maker": "make",
    "made": "make",
    "chose": "choos",
    "chosen": "choos",
    "bought": "buy",
    "sold": "sell",
    "led": "lead",
    "paid": "pai",
    "began": "begin",
    "begun": "begin",
    "went": "go",
    "gone": "go",
    "goe": "go",
    "broke": "break",
    "broken": "break",
    "took": "take",
    "taken": "take",
    "held": "hold",
    "ran": "run",
    "sent": "send",
    "got": "get",
    "gotten": "get",
    "came": "come",
    "gave": "give",
    "given": "give",
    "built": "build",
    "brought": "bring",
    # a unit of measure and its symbol ("how many kilos": "600 kg")
    "kilo": "kg",
    "kilogram": "kg",
    "kilometr": "km",
    "kilomet": "km",
    # a compound read as its head where datasheets say either ("Payload: 600 kg", "Max system load: 140 kg")
    "payload": "load",
    # a long word and the clipping people write for it ("rev C" for revision C): read as the clipping, which is
    # too short to match other words by prefix ("revis" would match "revisit")
    "revis": "rev",
    "specif": "spec",
    "configur": "config",
    "quantiti": "qty",
    "approxim": "approx",
    "document": "doc",
    "repositori": "repo",
    "environ": "env",
}


_ONLY_AS_STEM = frozenset(["di"])  # what "died" stems to, and a word of its own in names
_ORDINAL = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)$")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    if ordinal := _ORDINAL.match(word):
        return ordinal.group(1)  # "the 27th" is the day "27"
    base = _STEMMER.stem(word)
    if word in _ONLY_AS_STEM:
        return base  # "Ada di Velden": the particle, not "died"
    return _DERIVATIONS.get(word, _DERIVATIONS.get(base, base))


def terms(text: str) -> list[str]:
    """Stemmed content terms, in order (stopwords dropped)."""
    return [stem(t) for t in tokens(text) if t not in STOPWORDS and len(t) > 1]


@lru_cache(maxsize=200_000)
def term_set(text: str) -> frozenset[str]:
    """Cached: the reasoner reads the same sentences against every aspect, every round."""
    return frozenset(terms(text)) | {stem(word) for word in also_said(text)}


@lru_cache(maxsize=100_000)
def also_said(text: str) -> frozenset[str]:
    """Words a text says without writing them: the month of an ISO date ("2026-01-27" is in January, as
    "January 27" asks) and the initials of a spelled-out name ("Customer Success Manager" is the CSM)."""
    return _month_words(text) | _initialisms(text)


# A relation said from the other side: "X reports to Y" says who X's manager is. General English, like the
# derivations.
_BETWEEN_PEOPLE = [(re.compile(r"\breports?\s+to\b", re.I), ("manager",))]
_BETWEEN_THINGS = [
    # "X was replaced by Y": X came before Y, as "what preceded Y" asks
    (
        re.compile(r"\b(?:replaced|succeeded|superseded)\s+by\b", re.I),
        ("predated", "preceded", "predecessor"),
    ),
]
_CONVERSES = [*_BETWEEN_PEOPLE, *_BETWEEN_THINGS]


@lru_cache(maxsize=100_000)  # every unit of every candidate passage is read with it
def converses(text: str, *, people: bool = True) -> frozenset[str]:
    """The relations a text says from the other side ("X reports to Y": Y is a manager). Without `people`, only
    those between things: which way a relation between people runs is never read off one sentence ("X reports
    to Y" answers "who is X's manager", not "who is Y's manager")."""
    said = _CONVERSES if people else _BETWEEN_THINGS
    return frozenset(word for pattern, words in said if pattern.search(text) for word in words)


_WORD = re.compile(r"[\w'’.-]+|[,;:()]")
# the next clause names the next role ("reviewed by A and approved by B"); a comma may open an apposition
# ("signed off by our auditor, Mara Voss"); "as" names no one ("listed as Gold")
_BREAKS = frozenset([";", ":", "(", ")", "and", "or", "but", "while", "with", "featuring", "starring", "as"])
_BINDING_REACH = 8  # words from a role word ("directed", "composer") to the name that fills it
_POSSESSIVE = re.compile(r"['’]s?$")


def _role_bound(words: list[str], low: list[str], roles: frozenset[str] | set[str]) -> set[int]:
    """Indexes of the capitalised words a role word of the sentence binds: named right after it, up to the next
    "and" or "<verb>ed by". A role word inside a name is none ("United States")."""
    bound: set[int] = set()
    for i, word in enumerate(low):
        if _POSSESSIVE.search(words[i]) or (i > 0 and words[i][:1].isupper()):
            continue  # "the owner's team, Platform Ops": the team is no owner
        if not any(holds(frozenset([stem(part)]), role) for part in word.split("-") for role in roles):
            continue
        for j in range(i + 1, min(len(words), i + 1 + _BINDING_REACH)):
            if words[j].lower() in _BREAKS or (low[j].endswith("ed") and low[j + 1 : j + 2] == ["by"]):
                break  # the next clause names the next role ("... produced by")
            if (
                words[j][:1].isupper()
                and low[j] not in STOPWORDS
                # "signed 17 January 2026": a date fills no role ("August Voss" may)
                and not _in_a_date(words, j)
            ):
                bound.add(j)
    return bound


def _in_a_date(words: list[str], j: int) -> bool:
    """The word is a month's name beside a number ("17 January 1969", "January 17")."""
    beside = [words[k] for k in (j - 1, j + 1) if 0 <= k < len(words)]
    return words[j].lower() in MONTHS and any(w[:1].isdigit() for w in beside)


def role_fillers(text: str, roles: frozenset[str] | set[str]) -> frozenset[str]:
    """The words of the names a sentence gives the asked roles ("approved by Mara Voss": mara, voss)."""
    words = _WORD.findall(text)
    low = [normalise(wd) for wd in words]
    return frozenset(low[j] for j in _role_bound(words, low, roles))


_ISO_MONTH = re.compile(r"\b(?:1[5-9]|20)\d\d-(0[1-9]|1[0-2])(?:-\d\d)?\b")


def _month_words(text: str) -> frozenset[str]:
    return frozenset(MONTHS[int(m) - 1] for m in _ISO_MONTH.findall(text))


# A run of capitalised words, with the short words a name may hold inside it ("Bill of Materials")
_CAPITALISED_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:(?:of|and|for|&)\s+)?[A-Z][a-z]+)+\b")
_INITIALISM_WORDS = (3, 5)  # "CSM", "RMA", "SLA" ... "MSDS": shorter ones collide with words and codes


def _initialisms(text: str) -> frozenset[str]:
    """The initials of each run of capitalised words ("Customer Success Manager" -> "csm", "Bill of Materials" ->
    "bom"): a page that spells a role or a document out answers a question that abbreviates it."""
    found: set[str] = set()
    low, high = _INITIALISM_WORDS
    for run in _CAPITALISED_RUN.findall(text):
        words = run.split()
        for i in range(len(words)):
            for j in range(i + 1, min(len(words), i + high + 2) + 1):
                part = words[i:j]
                if not part[0][0].isupper() or not part[-1][0].isupper():
                    continue
                spelled = "".join(w[0] for w in part if w != "&").lower()
                kept = "".join(w[0] for w in part if w[0].isupper()).lower()
                found |= {x for x in (spelled, kept) if low <= len(x) <= high}
    return frozenset(found)


# "how many", "how long", "what amount of": the question's form says what kind of answer it wants (the answer
# type does that job), not what the answer is about. In a small corpus these words are rare, so left in they
# weigh more than the subject.
_QUESTION_FORM = re.compile(
    r"\bhow\s+(?:much|many|long|often|soon|far|quickly|fast|big|large|old|loud|heavy|tall|wide)\b|"
    r"\b(?:what|which)\s+(?:\w+\s+)?(?:amount|number|quantity)\b(?:\s+of\b)?|"
    r"\bthe\s+name\s+of\b",  # "what is the name of the supplier": the supplier is asked
    re.IGNORECASE,
)


def question_terms(question: str) -> list[str]:
    """The content terms of a question: its terms without the words of its form, a measure adjective read as
    the dimension pages name ("how loud" -> noise, "faster" -> speed)."""
    asked = _COMPARATIVE.sub(lambda m: DIMENSIONS[m.group(0).lower()], question)
    if asks_duration(asked):
        asked = _DURATION_VERB.sub(" ", asked)  # "how long does the review take": "take" is the form's
    asked = _PHRASAL_VERB.sub(" ", asked)
    if _ASKS_AN_AMOUNT.search(asked):
        asked = _CAPACITY_VERB.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + "load", asked)
    asked = _HOLDING_VERB.sub(r"\1", asked)
    asked = _CAUSING_VERB.sub(" ", asked)
    asked = _POINTER.sub(" ", asked)
    asked = _SPOKEN_NUMBER.sub(_in_digits, asked)
    if _ASKS_WHEN.match(asked):
        asked = _SCHEDULED.sub(" ", asked)  # "when is it planned to ship": a date answers, whatever the plan
    return terms(_QUESTION_FORM.sub(lambda m: _form_keep(m.group(0)), asked))


# A light verb with a particle ("went down", "came out of", "held up"): the pair means what pages say in other
# words (an outage, a result, a delay); the verb alone would weigh as a rare word and match nothing meant.
_PHRASAL_VERB = re.compile(
    r"\b(?:go|goes|going|went|gone|come|comes|coming|came|get|gets|getting|got|gotten|hold|holds|held|put|puts|"
    r"take|takes|took|taken|turn|turns|turned|set|sets|run|runs|ran|bring|brings|brought)"
    r"(?=\s+(?:up|down|out|off|over|back|through|away|around)\b)",
    re.IGNORECASE,
)
# "how much can it carry", "which one can carry more": an amount it can carry is its load ("payload", "max
# system load"); "who can carry the kiln" asks no amount
_CAPACITY_VERB = re.compile(r"\b(?:can|could)\s+(?:[\w'’-]+\s+){0,3}?(carry|haul|lift|tow)\b", re.IGNORECASE)
_ASKS_AN_AMOUNT = re.compile(r"\bhow (?:much|many|heavy)\b|\b(?:more|most|less|least|max(?:imum)?)\b", re.I)
# "which release will include the fix": the verb only says the fix is in it ("Fix will go into 4.2.1")
_HOLDING_VERB = re.compile(
    r"\b((?:release|version|build)s?\s+(?:will|would|does|did|do|should|could|is going to|are going to)\s+)"
    r"(?:include|contain|carry|ship|have|get|bring)s?\b",
    re.IGNORECASE,
)
# "which request pushed us to keep telemetry longer": the verb says only that one thing led to the other (the
# page says "driven by", "triggered"); the cause and the effect are what pages name
_CAUSING_VERB = re.compile(
    r"\b(?:push|pushed|pushes|led|leads|lead|made|makes|make|prompted|prompts|drove|drives|forced|forces)"
    r"\s+(?:us|them|him|her)\s+to\b",
    re.IGNORECASE,
)
# words a question may open with before its question word ("roughly when is...")
HEDGES = "roughly|approximately|about|around"
_ASKS_WHEN = re.compile(
    rf"^\s*(?:(?:and|so|{HEDGES})\s+)*(?:when|by when|until when|what date|what day)\b", re.IGNORECASE
)
_SCHEDULED = re.compile(
    r"\b(?:planned|scheduled|expected|supposed|slated|due|meant|set|going|likely)\b(?=\s+(?:to|for|on|by)\b)",
    re.IGNORECASE,
)
# "the supplier named in QA-57", "the customer mentioned on the page": how the question points at the thing, not
# a word the answer holds
_POINTER = re.compile(
    r"\b(?:named|mentioned|listed|referenced|cited|linked)(?=\s+(?:in|on|by)\b)", re.IGNORECASE
)
_DURATION_VERB = re.compile(r"\b(?:take|takes|took|taken|last|lasts|lasted)\b", re.IGNORECASE)
# A round sum said in words ("more than a quarter million a year", "half a million"): pages write it in digits
# ("Above $250,000"), so the question reads it as they do
_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_COUNTS |= {"nine": 9, "ten": 10, "twenty": 20, "fifty": 50, "hundred": 100}
_FRACTIONS = {
    "a quarter": 0.25,
    "a quarter of a": 0.25,
    "half a": 0.5,
    "a half": 0.5,
    "three quarters of a": 0.75,
}
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_SPOKEN_NUMBER = re.compile(
    r"\b(?:(?P<fraction>three quarters of a|a quarter of a|a quarter|half a|a half)|(?P<count>\d+(?:\.\d+)?|"
    + "|".join(_COUNTS)
    + r"))\s+(?P<scale>thousand|million|billion)\b",
    re.IGNORECASE,
)


def _in_digits(match: re.Match[str]) -> str:
    part = match.group("fraction") or match.group("count")
    size = _FRACTIONS.get(part.lower()) or _COUNTS.get(part.lower()) or float(part)
    return f"{round(size * _SCALES[match.group('scale').lower()]):,}"


# Measure adjectives and their comparatives -> the dimension a spec table or a sentence names. General English,
# like the derivations above: pages say "Noise level: 62 dB(A)", people ask "how loud", "is it quieter".
DIMENSIONS = {
    "loud": "noise",
    "louder": "noise",
    "quieter": "noise",
    "fast": "speed",
    "faster": "speed",
    "slower": "speed",
    "quicker": "speed",
    "heavy": "weight",
    "heavier": "weight",
    "lighter": "weight",
    "tall": "height",
    "taller": "height",
    "wide": "width",
    "wider": "width",
    "big": "size",
    "bigger": "size",
    "large": "size",
    "larger": "size",
    "smaller": "size",
    "old": "age",
    "older": "age",
    "cheaper": "price",
    "pricier": "price",
    "far": "range",  # "how far does it go on one charge": its range
    "farther": "range",
}
_COMPARATIVES = "|".join(k for k in DIMENSIONS if k.endswith("er"))
# a comparative that compares ("faster than", "which is heavier?", "how much cheaper"), not "the lighter pack"
_COMPARATIVE = re.compile(
    rf"\b(?:{_COMPARATIVES})\b(?=\s+than\b|\s*[?.!]?\s*$)|(?<=\bmuch\s)(?:{_COMPARATIVES})\b", re.IGNORECASE
)


def asked_dimension(question: str) -> str | None:
    """The dimension a "how far", "how heavy", "how loud" question asks the value of (its stem): the answer is a
    value of it, whatever else the question names ("how far on one charge": the range, not the charge time)."""
    m = re.search(r"\bhow\s+(\w+)", question, re.IGNORECASE)
    word = m.group(1).lower() if m else ""
    return stem(DIMENSIONS[word]) if word in DIMENSIONS else None


def _form_keep(form: str) -> str:
    """Of "what purchase amount", keep "purchase"; of "how loud", the dimension asked: only the form goes."""
    words = form.split()
    if words[0].lower() == "how" and words[-1].lower() in DIMENSIONS:
        return DIMENSIONS[words[-1].lower()]
    if words[0].lower() in {"what", "which"} and len(words) > 2 and words[1].lower() not in _FORM_WORDS:
        return words[1]
    return " "


_FORM_WORDS = frozenset(["amount", "number", "quantity"])
PREFIX_MATCH = 5  # a stem this long that begins another ("compet" / "competit") is read as the same word


@lru_cache(maxsize=200_000)
def _by_prefix(held: frozenset[str]) -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for t in held:
        if len(t) >= PREFIX_MATCH:
            index.setdefault(t[:PREFIX_MATCH], []).append(t)
    return {k: tuple(v) for k, v in index.items()}


def holds(held: frozenset[str], term: str) -> bool:
    """Whether a set of stems holds `term`, or a stem one derivation away that Porter leaves apart
    ("competing" / "competitive", "enforce" / "enforcement"): the shorter is a prefix of the longer and at
    least PREFIX_MATCH long."""
    if term in held:
        return True
    if len(term) < PREFIX_MATCH:
        return False
    return any(
        other.startswith(term) or term.startswith(other)
        for other in _by_prefix(held).get(term[:PREFIX_MATCH], ())
    )


@dataclass(frozen=True)
class Unit:
    """One readable piece of a passage, with the structure around it.

    kind: "sentence" (prose, a key-value line), "item" (one list item), "row" (one table row, rendered with
    its header: "Plan: Pro · Sustained: 600 requests/min"). `heading` is the nearest heading above it in the
    passage; `block` numbers the list or table it belongs to (-1 for prose), so a list question can take the
    whole block; `label` is a table row's first cell (what the row is about); `lead` is the prose sentence
    introducing the block, which says what its rows are ("Dealer discounts off the retail price, by tier:")."""

    kind: str
    text: str
    heading: str = ""
    block: int = -1
    label: str = ""
    lead: str = ""


_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
UNIT_SEPARATOR = " · "  # between a table row's cells as rendered


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _plain(text: str) -> str:
    return _EMPHASIS.sub("", text).strip()


def units(text: str) -> list[Unit]:
    """The passage as units: headings tracked, list items and table rows kept whole, prose split into
    sentences. Cached: the reasoner reads the same passages against every aspect, every round."""
    return list(_units(text))


@lru_cache(maxsize=50_000)
def _units(text: str) -> tuple[Unit, ...]:
    out: list[Unit] = []
    heading = ""
    lead = ""  # the last prose sentence, when it ends in a colon: it introduces the block that follows
    header: list[str] | None = None
    block = -1
    blocks = 0
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        if not line.strip():
            header, block = None, -1
            continue
        m = _HEADING.match(line)
        if m:
            heading, header, block, lead = _plain(m.group(2)), None, -1, ""
            continue
        if line.lstrip().startswith("|") and line.count("|") >= 2:
            if _TABLE_SEPARATOR.match(line):
                continue
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if header is None:
                if _TABLE_SEPARATOR.match(nxt):  # a header row: the column names of the rows below
                    header, block, blocks = _cells(line), blocks, blocks + 1
                    continue
                header, block, blocks = [], blocks, blocks + 1
            cells = [_plain(c) for c in _cells(line)]
            pairs = [
                f"{h}: {c}" if h else c for h, c in zip([*header, *[""] * len(cells)], cells, strict=False)
            ]
            shown = UNIT_SEPARATOR.join(p for p in pairs if p.strip(": "))
            if shown:
                out.append(Unit("row", shown, heading, block, cells[0] if cells else "", lead))
            continue
        item = _ITEM.match(line)
        if item:
            if block < 0 or header is not None:
                block, blocks, header = blocks, blocks + 1, None
            out.append(Unit("item", _plain(item.group(1)), heading, block, lead=lead))
            continue
        if block >= 0 and raw[:1].isspace() and out and out[-1].kind == "item":  # a wrapped list item
            last = out[-1]
            out[-1] = Unit("item", f"{last.text} {_plain(line)}", last.heading, last.block, lead=last.lead)
            continue
        block, header = -1, None
        said = _sentences(line.strip())
        out += [Unit("sentence", sentence, heading) for sentence in said]
        lead = said[-1] if said and said[-1].endswith(":") else ""
    return tuple(u for u in out if u.text.strip(" \t-*#>|"))


def sentences(text: str) -> list[str]:
    """The passage's units as text: prose sentences (abbreviations kept together), list items, and table
    rows rendered with their column names."""
    return [u.text for u in _units(text)]


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


_REPLACES_VERB = r"(?:replac(?:es|ed|ing)|supersed(?:es|ed|ing)|obsolete[sd]?|in place of)"
_REPLACES = re.compile(rf"\b{_REPLACES_VERB}\b", re.IGNORECASE)
_REPLACED_NAME = re.compile(
    rf"\b{_REPLACES_VERB}\s+(?:the\s+)?(?:\d{{4}}\s+)?([A-Z][^.;:()]{{3,80}})", re.IGNORECASE
)


def says_it_replaces(sentence: str) -> bool:
    """Whether a sentence speaks of replacing something ("This policy supersedes the 2024 ...")."""
    return bool(_REPLACES.search(sentence))


def replaced_names(text: str) -> list[str]:
    """The names a passage says it replaces ("supersedes the 2024 Travel Expense Policy" -> that title)."""
    return [m.group(1).strip() for m in _REPLACED_NAME.finditer(text) if m.group(1)[:1].isupper()]


# "A customer asks if they get a discount ...", "Rachel wants to know whether ...", "Can we ...?": a sentence that
# reports or puts a question raises it; the answer is elsewhere (the reply under it, the policy it points to)
_ASKS = re.compile(
    r"\b(?:asks?|asked|asking|wants? to know|wondering|wonders|enquir\w*|inquir\w*)\s+(?:about|if|whether|"
    r"what|how|when|why|which|who)\b|\?\s*$",
    re.IGNORECASE,
)


def raises_a_question(text: str) -> bool:
    return bool(_ASKS.search(text))


# "PAY-12 was reopened twice; in which build did the fix land ...", "my badge stopped working: who resets it": the
# setting, then the question
_SETTING = re.compile(
    r"[;:]\s+(?=(?:and |so |but )?(?:in |by |for |from |at |to )?"
    r"(?:who|whom|whose|what|which|when|where|why|how|is|are|was|were|do|does|did|can|should)\b)"
)


_OTHER_QUESTION_WORD = re.compile(r"(?:and\s+|so\s+)?(?:who|whom|whose|where|which|what)\b")


def answer_type(question: str) -> str:
    """A coarse expected answer type from question cues: person, date, number, place, version (a release),
    explanation, yesno, choice (a pick between named options), list (a checklist, steps, a procedure), or
    thing."""
    q = _SETTING.split(question.strip().lower())[-1]  # the question follows its setting
    first = q.split()[0] if q.split() else ""
    head = " ".join(q.split()[:4])  # the question word sits near the start ("so when is...", "and who...")
    if re.search(r"\b(why|what caused|what was the reason|how come)\b", q):
        return "explanation"
    if _LIST_CUE.search(q):
        return "list"
    dated = re.search(r"\b(when|what year|what (?:[\w-]+ )?date|which year|how long ago)\b", head)
    # "who was on call when the site went down": the question word is "who"; the "when" is a clause's
    if dated and not (dated.group(1) == "when" and _OTHER_QUESTION_WORD.match(q)):
        return "date"
    if re.search(
        r"\b(what do (?:we|i|you|they) (?:pay|charge|spend)|how much (?:do|does|did|will|would) .{0,40}"
        r"(?:cost|pay|charge)|what(?: is|'s| are) the (?:\w+ )?(?:cost|price|fee|salary)s?\b)",
        q,
    ):
        return "money"
    if re.search(
        r"\b(how many|how much|what percentage|what do (?:we|i|you|they) (?:pay|charge|spend)|"
        r"what(?: is|'s| are) (?:the |our )?(?:[\w'’-]+ ){0,4}?(?:limit|threshold|rate|cost|price|"
        r"budget|allowance|cap|fee|salary|discount|amount|number|size|count))\b",
        q,
    ):
        return "number"
    if re.search(r"\bwhat (?:\w+ )?(?:amount|sum|percentage)\b", q):
        return "number"
    # "what mileage rate do I get", "what discount does a reseller get": the asked value before the verb
    if re.search(
        r"\bwhat (?:(?!(?:if|the|a|an|to|of|when|happens?)\b)[\w'’-]+ ){0,2}?(?:limit|threshold|rate|cost|price|"
        r"budget|allowance|cap|fee|salary|discount|amount|number|size|count)s? (?:do|does|did|will|would|can|"
        r"should|applies|apply)\b",
        q,
    ):
        return "money" if re.search(r"\b(?:cost|price|fee|salary)s? \w+\b", q) else "number"
    if re.search(r"\bhow (?:long|often|soon|far|quickly|fast|big|large|old|loud|heavy|tall|wide)\b", q):
        return "number"  # a duration, a frequency, a measure: answered by a quantity
    if re.search(
        r"\b(where|(?:which|what) (?:country|city|town|village|place|region|province|county))\b", head
    ):
        return "place"
    if re.search(
        r"\b(?:which|what) (?:[\w-]+ )?(?:release|version|build)s?\b(?! (?:date|day|notes?)\b)", head
    ):
        return "version"  # "which release will include the fix": a version number answers
    if re.search(r"\b(who|whom|whose)\b", head):
        return "person"
    if re.search(r",? or ", q) and re.search(r"\b(which|who|what)\b", q):
        return "choice"
    if first in {"is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "should"}:
        return "yesno"
    return "thing"


_LIST_CUE = re.compile(
    r"\b(what(?:'s| is| are) (?:on|in) the \w+(?: \w+)?? ?(?:check ?list|list|steps|procedure|process)|"
    r"(?:check ?list|steps|procedure) (?:for|to|of)|what (?:are|were) the (?:\w+ )?steps|what steps|which steps|"
    r"how (?:do|should|can|would) (?:i|we|you) (?!know\b)\w+|what do (?:i|we|you) (?:need to|have to) do|"
    r"how (?:do|does|should|can) (?:a|an) \w+ (?![^?]*\b(?:differ|compare|work)\w*\b)\w+|"
    r"walk me through|list (?:the|all|every))\b"
)


_PRECISE_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\s+(?:"
    + "|".join(MONTHS)
    + r")\w*\s+\d{4}\b|\b(?:"
    + "|".join(MONTHS)
    + r")\w*\s+\d{1,2},?\s+\d{4}\b",
    re.IGNORECASE,
)


def only_a_year(text: str) -> bool:
    """A "when" answered by a year or a month alone ("a deliverable for 2026"), not by a day, a weekday or a time
    ("Mondays at 10:00 PT", "1 July")."""
    return bool(YEAR.search(text)) and not (
        precise_date(text) or re.search(_DAY_OR_TIME, text, re.IGNORECASE) or _DAY_OF_YEAR.search(text)
    )


def precise_date(text: str) -> bool:
    """A day, not only a year or a month ("2026-03-31", "31 March 2026")."""
    return bool(_PRECISE_DATE.search(text))


# A time of week or day, a quarter, a month without a year: "Mondays at 10:00 PT", "Q2", "in March".
_DAY_OR_TIME = r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b"
_WHEN = re.compile(
    rf"{_DAY_OR_TIME}|\bQ[1-4]\b|"
    r"\b(?:january|february|march|april|june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)
_WORD_QUANTITY = re.compile(
    r"\b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|several|half an?)\s+"
    r"(?:business\s+|working\s+|calendar\s+)?(?:hours?|days?|weeks?|months?|years?|minutes?)\b",
    re.IGNORECASE,
)
_MONEY = re.compile(r"[$€£]\s?\d|\d\s?(?:usd|eur|gbp|dollars|euros|pounds)\b", re.IGNORECASE)


_VERSION_NUMBER = re.compile(
    r"(?<![\w.$€£])v?\d+\.\d+(?:\.\d+)*(?![\w.]*\d)"
    r"(?!\s?(?:%|°|(?:kg|km|cm|mm|m|h|s|wh|kwh|mph|hours?|days?|minutes?|weeks?|months?|years?)\b))",
    re.IGNORECASE,
)  # "4.2.1", "v5.4", "Release 4.2"; not "0.3%", "2.5 kg", "$1.50"
QUANTITY_KINDS = frozenset(["date", "number", "money"])  # answered only by a date or a quantity
TYPED_KINDS = QUANTITY_KINDS | {"person", "place", "version"}  # answered by a span of a known type


_PLACE = re.compile(
    r"\b(?:in|at|near|from|to|of|outside)\s+(?:the\s+)?[A-Z][\w'’-]+|"
    r"\b(?i:location|city|country|site|address|hq|headquarters|based|office|region)\s*:\s*[A-Z]"
)


_CALENDAR_WORDS = frozenset([m[:3] for m in MONTHS[:12]] + ["mon", "tue", "wed", "thu", "fri", "sat", "sun"])


# a value's label naming no time ("X-RateLimit-Limit: 2000", "Robots: 1200"): the number is a count, not a year
_LABEL = re.compile(r"([A-Za-z][\w-]*)\s*:\s*$")
_TIME_LABELS = frozenset(
    stem(word)
    for line in (
        "year date since from until founded born died released release launched opened built",
        "established created updated published live start end due deadline effective introduced season",
        "period term",
    )
    for word in line.split()
)


def _a_year(sentence: str, match: re.Match[str]) -> bool:
    label = _LABEL.search(sentence[: match.start()])
    return label is None or stem(label.group(1).split("-")[-1].lower()) in _TIME_LABELS


def has_answer_shape(sentence: str, kind: str) -> bool:
    """Whether a sentence could hold an answer of the expected kind (a cheap filter, not a judgement). A
    comment's header ("Comment by ana on 2026-03-04: No date yet.") is when it was said, not what it says."""
    sentence = comment_body(sentence)
    if kind == "date":
        return bool(
            _DATE.search(sentence)
            or _WHEN.search(sentence)
            or any(_a_year(sentence, m) for m in YEAR.finditer(sentence))
        )
    if kind == "money":
        return bool(_MONEY.search(sentence))
    if kind == "number":
        if _WORD_QUANTITY.search(sentence):
            return True
        return any(
            not _is_identifier(sentence, m) and not YEAR.fullmatch(m.group(0).strip())
            for m in NUMBER.finditer(sentence)
        )
    if kind == "explanation":
        return bool(_CAUSAL.search(sentence))
    if kind == "version":
        return bool(_VERSION_NUMBER.search(sentence))
    if kind == "place":
        # a place is named after "in", "at", "near", "from" ("based in Leeds"); any capitalised word would take
        # every name of a person for a place
        return bool(_PLACE.search(sentence))
    if kind == "person":  # a capitalised word inside the sentence, not a month or a day ("since April 2023")
        return any(
            m.group(0).lower()[:3] not in _CALENDAR_WORDS
            for m in re.finditer(r"(?<![.!?]\s)\b[A-Z][a-z]+", sentence[1:])
        )
    return True


# Nouns that name the type of the answer, not a thing a page must say: "the launch date", "the place of
# delivery", "the price": a sentence holding a date, a capitalised place, an amount of money shows them.
TYPE_NOUNS = {
    **dict.fromkeys(
        ["price", "cost", "fee", "salari", "budget", "spend", "charg", "pai", "monei", "cash"], "money"
    ),
    **dict.fromkeys(["date", "year", "birthdai"], "date"),
    "place": "place",
    **dict.fromkeys(["rate", "traffic", "throughput"], "rate"),  # traffic is so many requests per minute
    **dict.fromkeys(["email", "mail"], "email"),
    "channel": "channel",
    **dict.fromkeys(["releas", "version"], "version"),  # "which release": a version number shows one
    **dict.fromkeys(["phone", "telephon"], "phone"),
    **dict.fromkeys(["url", "websit"], "url"),
    "databas": "database",  # "which database": a database's name shows one ("TimescaleDB", "ClickHouse")
    "compani": "company",  # "which company": a firm's name shows one ("Kestrel Motion Systems", "Acme Ltd")
}  # not "location", "time", "name": pages name those ("Location: Brno"), and the page that does is the answer
# types a unit names the answer by showing, whatever its words: how to reach someone or something (an address),
# which database (its product's name) and which company (its name)
NAMED_KINDS = frozenset(["email", "channel", "phone", "url", "database", "company"])
_SHOWN_BY = {
    # a rate is a quantity per something ("~4,000 messages/sec", "2 visits per week") or a share ("0.4%")
    "rate": re.compile(r"\d[\d,.]*\s?(?:[^\W\d]+\s?)?(?:/\s?[^\W\d]+|per\s+[^\W\d]+)|\d\s?%", re.IGNORECASE),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),  # "who do I email": an address answers
    # a chat channel, "#eng-platform"
    "channel": re.compile(r"(?<![\w&])#[a-z0-9][\w-]*[a-z0-9]", re.IGNORECASE),
    "phone": re.compile(r"\+?\d[\d ().-]{7,}\d"),
    "url": re.compile(r"\bhttps?://\S+|\bwww\.[\w-]+(?:\.[\w-]+)+"),  # a link, not any dotted word
    # a database by its product's name: "...DB" ("TimescaleDB", "MongoDB") or a well-known engine
    "database": re.compile(
        r"\b[A-Z][A-Za-z]+DB\b|\b(?:PostgreSQL|Postgres|MySQL|SQLite|ClickHouse|Redis|Cassandra|Elasticsearch"
        r"|OpenSearch|BigQuery|Snowflake|Redshift|Spanner|Firestore|Bigtable|Neo4j|Oracle Database|SQL Server)\b"
    ),
    # a firm by its name: capitalised words ending in a legal form or a trade word ("Kestrel Motion Systems")
    "company": re.compile(
        r"\b(?!(?:The|A|An|Our|Their|This|That|Its|Each|Every)\s)(?:[A-Z][\w&'’.-]*\s+){1,4}(?:Inc|Ltd|LLC|GmbH|AG|BV|B\.V|SA|S\.A|plc|Corp|Corporation|Company|Co"
        r"|Group|Holdings|Industries|Systems|Technologies|Labs|Logistics|Components|Manufacturing|Partners"
        r"|Solutions|Electronics|Motors|Sensors|Freight|Metals|Works|Foods|Supply|Supplies)\b"
    ),
}


def shows_type(sentence: str, term: str) -> bool:
    """Whether a sentence shows the answer type a type noun of the question names ("date" -> a date in it, "email"
    -> an address)."""
    kind = TYPE_NOUNS.get(term)
    if kind in _SHOWN_BY:
        return bool(_SHOWN_BY[kind].search(sentence))
    return bool(kind) and has_answer_shape(sentence, kind)  # type: ignore[arg-type]


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
    found |= {m.group(0).lower() for m in _DAY_OF_YEAR.finditer(sentence)}  # "lapse on 1 July"
    return found


# a day of every year, without one ("1 July", "April 1"): a yearly deadline; a dated day is a _DATE
_DAY_OF_YEAR = re.compile(
    r"\b\d{1,2}\s+(?:"
    + "|".join(MONTHS)
    + r")\b(?!\s+\d{4})|\b(?:"
    + "|".join(MONTHS)
    + r")\s+\d{1,2}\b(?!,?\s+\d{4})",
    re.IGNORECASE,
)


_CORRECTION = re.compile(
    r"\b(?:not|instead of|rather than|down from|up from|no longer|(?:was|were) previously|replacing)\s+"
    r"(?:the\s+|an?\s+|about\s+)?(?=[$€£]?\d)",
    re.IGNORECASE,
)


def corrected(sentence: str) -> set[str]:
    """The values a sentence says are wrong or old ("8.5 hours, not 10 hours", "down from $60"): stated to be
    corrected, they are not what it claims."""
    out = {
        v for v in values(sentence) if re.search(rf"{re.escape(v)}\s*(?:->|→)", sentence.lower())
    }  # "14 -> 30"
    for m in _CORRECTION.finditer(sentence):
        found = values(sentence[m.end() : m.end() + 40])
        first = min(found, key=lambda v: sentence.lower().find(v, m.end()), default=None)
        if first:
            out.add(first)
    return out


_ASKS_DURATION = re.compile(
    r"\bhow long\b(?!\s+ago\b)(?!\s+(?:is|are)\s+(?:the|a|an)\s+\w+\s*\?)", re.IGNORECASE
)


def asks_duration(question: str) -> bool:
    """ "how long did it take", "how long do we keep": a span of time is asked (not "how long is the cable?")."""
    return bool(_ASKS_DURATION.search(question))


def states_duration(sentence: str) -> bool:
    """The sentence holds a span of time: "9 hours", "three months", "5 business days"."""
    return bool(_WORD_QUANTITY.search(sentence)) or any(value_kind(v) == "duration" for v in values(sentence))


def value_kind(value: str) -> str:
    """money, percent, duration, date or number: only values of one kind can contradict each other."""
    if value[:1] in "$€£":
        return "money"
    if value.endswith("%"):
        return "percent"
    if re.search(r"(days?|hours?|minutes?|weeks?|months?|years?|ms|s|h)$", value):
        return "duration"
    if _DATE.fullmatch(value) or _DAY_OF_YEAR.fullmatch(value):
        return "date"
    return "number"


def _has_unit(value: str) -> bool:
    value = value.strip()
    return value[:1] in "$€£" or not value.replace(",", "").replace(".", "").isdigit()
