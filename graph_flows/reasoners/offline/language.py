"""Reading the question: follow-ups and what they change, comparison sides, the names and codes a question
insists on, and which way a comparison question picks. Pure functions of text and the asker's lexicon.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from connectors.text import STOPWORDS, fold, normalise, tokens
from graph_flows.reading import DIMENSIONS, HEDGES, MONTHS, TYPE_NOUNS, question_terms, stem, terms
from graph_flows.reasoners.base import Lexicon

_FOLLOWUP_START = re.compile(
    r"^(and|also|what about|how about|same for|and for|and in|and the|what of|then)\b", re.I
)
# the words that stand for the thing itself: "that"/"this" only on their own ("what about that?"), never as
# in "the team that runs it"
_REFERS = re.compile(r"\b(it|they|them|those|these|he|she|him)\b|\b(that|this)\b(?=\s*[?.!,]*$)", re.I)
PRONOUN = re.compile(r"\b(it|its|that|this|they|them|their|those|these|he|she|his|her)\b", re.I)
COMPARISON = re.compile(
    r"\b(or|vs\.?|versus|between|compare[sd]?|comparison|both|differ\w*|same|than)\b",
    re.I,
)
QUOTED = re.compile(r"[\"“]([^\"”]{3,80})[\"”]")
# a capital letter, accented ones too ("Émile", "Åke", "Şehzade"): `re` has no \p{Lu}
CAPITAL = "A-Z" + "".join(chr(c) for c in range(0xC0, 0x250) if chr(c).isupper())
_CAPITALISED = re.compile(
    rf"(?<!^)(?<![.?!]\s)\b([{CAPITAL}][\w'-]*(?:\s+(?:(?:of|the|and|de|von|van)\b|[{CAPITAL}][\w'-]*))*)"
)
_JOINER = re.compile(
    r"^\W*(?:\w+\s+){0,2}?(?:or|and|vs\.?|versus|&|compared? (?:to|with)|differs? from|than)\W*"
    r"(?:(?:the|a|an)\s+)?$",
    re.I,
)
# "Bronze partners get a reply from us compared with Platinum ones", "in Portugal compared to back home in Norway"
_LOOSE_JOINER = re.compile(
    r"^\W*(?:[\w']+\s+){0,6}?(?:compared? (?:to|with)|differs? from|versus|vs\.?)\W*(?:[\w']+\s+){0,4}?$",
    re.I,
)
# Question scaffolding: capitalised for grammar, never a name the answer must contain.
_SCAFFOLD = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "i",
        "we",
        "you",
        "our",
        "my",
        "your",
        "me",
        "us",
        "tell",
        "please",
        "list",
        "show",
        "give",
        "explain",
    ]
)
_TARGET = re.compile(r"\b(?:of|for|on|in|about)\s+(?:the\s+|our\s+|a\s+)?([^?.,]+?)\s*[?.]*$", re.I)
_POSSESSIVE_PRONOUN = re.compile(r"\b(its|their|his|her)\b", re.I)
VERSION = re.compile(r"\d+(?:\.\d+)+")  # a release asked by number ("4.3", "2.8.0")
_CODE = re.compile(r"^(?=.*\d)(?=.*[a-z])[a-z0-9.-]+$", re.I)  # P3, v2, 4.2, LC-2509, rev-c

# Which side a comparison question picks, by the words it uses: by time, or by a measure.
_EARLY = "first|earlier|earliest|older|oldest|before|sooner"
_LATE = "later|last|latest|younger|youngest|after|newer|newest|more recent|most recent"
_SMALL = "smaller|smallest|fewer|fewest|less|least|lower|lowest|shorter|shortest|cheaper|cheapest"
_LARGE = (
    "larger|largest|bigger|biggest|more|most|higher|highest|longer|longest|greater|greatest|faster|fastest"
)
_PICK_LOW = re.compile(rf"\b({_EARLY}|{_SMALL})\b", re.I)
_PICK_HIGH = re.compile(rf"\b({_LATE}|{_LARGE})\b", re.I)
_BY_TIME = re.compile(rf"\b({_EARLY}|{_LATE})(?:ly)?\b", re.I)


def is_followup(question: str, lexicon: Lexicon) -> bool:
    if _FOLLOWUP_START.search(question):
        return True
    content = terms(question)
    if len(content) <= 2:
        return True
    return bool(PRONOUN.search(question)) and not lexicon.names_in(question) and len(content) <= 5


def followup_question(
    previous: str, followup: str, lexicon: Lexicon, *, answered: Sequence[str] = ()
) -> tuple[str, str]:
    """The follow-up as a whole question, and what kind of edit it made to the previous one:

    - "entity": another thing, same question ("and for the Android app?", "And the Pro model?", "what about
      Starter?");
    - "attribute": the same thing, another question ("and its weight?", "who owns it?"); after a question
      that asked *for* a thing ("which supplier makes our packs?"), "it"/"they" is the thing the answer named
      (`answered`);
    - "own": a whole question of its own that only opens like a follow-up ("and how does a customer get logs
      from the iOS app?");
    - "same": nothing new ("and?", "why?" keeps the previous question with the new cue).
    """
    fresh = [t for t in tokens(followup) if t not in set(tokens(previous)) and t not in STOPWORDS]
    asked = [t for t in fresh if t not in _SCAFFOLD]
    if len(asked) >= _OWN_QUESTION and _QUESTION_WORD.search(followup) and not _REFERS.search(followup):
        return _FOLLOWUP_START.sub("", followup.strip()).strip(" ,"), "own"
    swapped = (
        _swap_name(previous, fresh, lexicon, followup)
        or _swap_code(previous, followup, asked)
        or _swap_aligned(previous, followup, fresh)
    )
    if swapped:
        return swapped, "entity"
    if answered and PRONOUN.search(followup) and _ASKS_FOR_A_THING.search(previous):
        cue = _FOLLOWUP_START.sub("", followup.strip()).strip(" ,?.")
        return _REFERS.sub(answered[0], _POSSESSIVE_PRONOUN.sub(f"{answered[0]}'s", cue)), "attribute"
    named = lexicon.names_in(followup)
    if named and not PRONOUN.search(followup):
        # a new name and nothing pointing back: the previous question about it
        old = lexicon.names_in(previous)
        if old:
            return re.sub(re.escape(old[0]), named[0], previous, flags=re.IGNORECASE), "entity"
    asked = [t for t in fresh if t not in _SCAFFOLD]
    if asked:
        target = " and ".join(lexicon.names_in(previous)[:2]) or target_phrase(previous)
        cue = _FOLLOWUP_START.sub("", followup.strip()).strip(" ,?.")
        if PRONOUN.search(cue):
            cue = _POSSESSIVE_PRONOUN.sub(f"{target}'s", cue)
            return _REFERS.sub(target, cue), "attribute"
        return f"{cue} of {target}", "attribute"
    return f"{followup} {previous}", "same"


def _swap_name(previous: str, fresh: Sequence[str], lexicon: Lexicon, followup: str) -> str | None:
    """A name of the previous question with one word swapped for a word the follow-up brings, when the result
    is a visible name: "iOS Release Checklist" + "Android" -> "Android Release Checklist"."""
    for name in lexicon.names_in(previous):
        words = re.findall(r"[\w'’-]+", name)
        for i in range(len(words)):
            for word in fresh:
                written = _as_written(word, followup)
                candidate = " ".join([*words[:i], written, *words[i + 1 :]])
                if lexicon.resolve(candidate):
                    replaced = re.sub(re.escape(name), candidate, previous, flags=re.IGNORECASE)
                    return re.sub(rf"\b{re.escape(words[i])}\b", written, replaced, flags=re.IGNORECASE)
    return None


def _as_written(word: str, text: str) -> str:
    """A lower-cased token as the text writes it ("android" -> "Android")."""
    m = re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE)
    return m.group(0) if m else word


def _swap_code(previous: str, followup: str, asked: Sequence[str]) -> str | None:
    """A follow-up that brings only a new name ("And the P3?", "what about Starter?", "and for Radhaus
    Berlin?", "And the Fen 7 Cargo?") puts it where the previous question's name of the same kind stood."""
    spans = name_spans_in(followup)
    new = [sp for sp in spans if any(t in asked for t in tokens(sp))]
    rest = [t for t in asked if not any(t in tokens(sp) for sp in new)]
    if len(new) != 1 or rest:
        return None
    written = new[0]
    old_spans = name_spans_in(previous)
    first = tokens(written)[0]
    # the previous name that shares the new one's first word ("Fen 3" for "Fen 7 Cargo"), else one of its kind
    for old in sorted(old_spans, key=lambda sp: tokens(sp)[0] != first):
        if old != written and (tokens(old)[0] == first or _same_kind(tokens(old)[-1], tokens(written)[-1])):
            return re.sub(rf"\b{re.escape(old)}\b", written, previous, count=1)
    return None


_NAME_WORD = rf"(?<![\w'’])(?:[a-z]?[{CAPITAL}][\w'’&-]*|\d[\w.]*)"  # "Fen", "P3", "4.2", "iOS"


def name_spans_in(text: str) -> list[str]:
    """Runs of capitalised words and codes past the first word ("Fen 7 Cargo", "Radhaus Berlin", "P3"), not
    question scaffolding: the names a question is about, known to the lexicon or not."""
    out = []
    for m in re.finditer(rf"{_NAME_WORD}(?:\s+{_NAME_WORD})*", text):
        words = m.group(0).split()
        while words and (words[0].lower() in _SCAFFOLD or words[0].lower() in STOPWORDS):
            words = words[1:]  # "And", "What": the question's own words
        if words and not all(w.isdigit() for w in words):
            out.append(" ".join(words))
    return out


def _same_kind(a: str, b: str) -> bool:
    """Two names that can stand in for each other: codes of one family ("p2"/"p3"), release numbers, or two
    plain words."""
    code_a, code_b = _CODE_FAMILY.match(a), _CODE_FAMILY.match(b)
    if code_a or code_b:
        return bool(code_a and code_b and code_a.group(1) == code_b.group(1))
    if VERSION.fullmatch(a) or VERSION.fullmatch(b):
        return bool(VERSION.fullmatch(a) and VERSION.fullmatch(b))
    return a.isalpha() and b.isalpha() and len(a) > 1 and len(b) > 1


_CODE_FAMILY = re.compile(r"^([a-z]+)-?\d+$")
_QUESTION_WORD = re.compile(r"\b(what|which|who|whom|whose|when|where|why|how)\b", re.I)
_OWN_QUESTION = 3  # fresh content words that make a follow-up-shaped question one of its own
# a question that asks *for* a thing: its answer is what a follow-up's pronoun then means
_ASKS_FOR_A_THING = re.compile(
    r"^\W*(?:and\s+)?(?:which|who|whom|what (?:company|supplier|vendor|customer|ticket|team|tool|person|product))\b",
    re.I,
)


def _swap_aligned(previous: str, followup: str, fresh: Sequence[str]) -> str | None:
    """A fresh word that stands where a word of the previous question stood, next to a word both share:
    "the Lite model's top speed?" + "And the Pro model?" -> "the Pro model's top speed?"."""
    prev, new = tokens(previous), tokens(followup)
    for i, word in enumerate(new):
        if word not in fresh:
            continue
        for j, shift in ((i + 1, -1), (i - 1, 1)):  # the shared neighbour after, then before
            if not 0 <= j < len(new) or new[j] in STOPWORDS or new[j] in fresh:
                continue
            for k, old in enumerate(prev):
                if old == new[j] and 0 <= k + shift < len(prev) and prev[k + shift] not in STOPWORDS:
                    target = prev[k + shift]
                    written = _as_written(word, followup)
                    return re.sub(
                        rf"\b{re.escape(target)}\b", written, previous, count=1, flags=re.IGNORECASE
                    )
    return None


def target_phrase(question: str) -> str:
    """What a question without known names is about: the phrase after its last "of/for/on/in/about"
    ("the top speed of the Pro model" -> "Pro model"), else its capitalised words and codes."""
    m = _TARGET.search(question.strip())
    if m:
        return m.group(1).strip()
    spans = name_spans_in(question)
    if spans:  # the last name, with the word that says what it is ("the Harbor project approved")
        m = re.search(rf"\b{re.escape(spans[-1])}(\s+[a-z][\w-]*)?", question)
        follower = ((m.group(1) if m else "") or "").strip()
        return spans[-1] + (f" {follower}" if follower and follower not in STOPWORDS else "")
    named = constraint_words(question)
    if named:  # the first name with the word after it ("the Harbor project approved" -> "Harbor project")
        m = re.search(rf"\b({re.escape(named[0])})(\s+[a-z][\w-]*)?", question, re.IGNORECASE)
        if m:
            follower = (m.group(2) or "").strip()
            return m.group(1) + (f" {follower}" if follower and follower not in STOPWORDS else "")
    return " ".join([t for t in tokens(question) if t not in STOPWORDS][-2:])


def constraint_words(text: str) -> list[str]:
    """Names and codes a question insists on ("Pro", "Lisbon", "P3", "4.2"): capitalised words that are not
    the sentence's first word nor scaffolding, and codes mixing letters and digits. An answer that never
    mentions them answers something else (a sibling product's row, a neighbouring city)."""
    raw = re.findall(r"[^\W_][\w.'’-]*", text)  # a word may open with an accent ("Ælfwine")
    out: list[str] = []
    for i, word in enumerate(raw):
        word = re.sub(r"['’][sS]$", "", word).rstrip(".")
        low = fold(word)  # "König" is written "konig" where text is read
        # a lone capital after a word is a variant's letter ("rev C", "Plan B"), not the article "A" or "I"
        letter = len(word) == 1 and word.isupper() and i > 0 and word not in {"A", "I"}
        # a model number after a capitalised name ("the Fen 7 Cargo", "a Pixel 8"): the name and the number
        name = raw[i - 1].lower() if i > 1 and raw[i - 1][:1].isupper() else ""
        if word.isdigit() and len(word) <= 2 and name.isalpha() and name not in MONTHS:
            if f"{name}-{word}" not in out:
                out.append(f"{name}-{word}")
            continue
        if low in _SCAFFOLD or (low in STOPWORDS and not letter) or (len(word) < 2 and not letter):
            continue
        capitalised = word[0].isupper() and i > 0
        if (capitalised or _CODE.match(word) or VERSION.fullmatch(word)) and low not in out:
            out.append(low)
    return out


def comparison_sides(question: str, entities: list[str]) -> list[str]:
    """Two or more named things joined by "or", "and", "vs" ("X or Y", "between X and Y", "both X and Y"),
    in a question that compares: each becomes an aspect. A name that merely contains a comma ("Leland, North
    Carolina") or an "or" elsewhere in the sentence is not a comparison."""
    if not COMPARISON.search(question):
        return []
    # known names first; then runs of capitalised words and codes ("the Starter and Pro plans", "Fen 5 versus
    # Fen 7 Cargo"); then capitalised phrases that may hold "of"/"and" ("Bank of Leeds")
    capitalised = [m.strip() for m in _CAPITALISED.findall(question) if len(m.strip()) > 2]
    for names in (entities, name_spans_in(question), capitalised):
        spans = name_spans(question, names)
        sides: list[str] = []
        for (_s1, e1, n1), (s2, _e2, n2) in pairwise(spans):
            between = question[e1:s2]
            if _JOINER.match(between) or _LOOSE_JOINER.match(between):
                sides += [n for n in (n1, n2) if n not in sides]
        if len(sides) >= 2:
            return sides[:4]
    return []


def name_spans(question: str, names: Sequence[str]) -> list[tuple[int, int, str]]:
    """Where each name occurs in the question (case-insensitive), in order, without overlaps."""
    spans: list[tuple[int, int, str]] = []
    for name in sorted(set(names), key=len, reverse=True):
        m = re.search(re.escape(name), question, re.I)
        if m and not any(m.start() < e and s < m.end() for s, e, _ in spans):
            spans.append((m.start(), m.end(), name))
    return sorted(spans)


def pick_words(question: str) -> list[str]:
    """The words by which a comparison picks a side ("later", "first", "larger")."""
    return [m.group(0) for m in (*_PICK_LOW.finditer(question), *_PICK_HIGH.finditer(question))]


# "the customer that hosts our canary robots", "the motors whose late delivery held up 4.2": a thing the
# question picks out by what another passage says of it (a bridge), before asking about it
_RELATIVE_CLAUSE = re.compile(
    r"\b(?:the|a|an|our|their|its|this)\s+(?:[\w-]+\s+){0,2}?[\w-]+\s+(?:that|whose|who|which)\s+(?!is\b|are\b)\w",
    re.I,
)


# "which country are they in?", "what city is it based in?": the class the answer is a member of
# "which customer reported", "which customer's request": a member of the class is the answer
_ASKS_A_CLASS = re.compile(r"^\s*(?:and\s+|so\s+)?(?:which|what)\s+([a-z]+)(?:['’]s)?\s+(?!of\b)[a-z]", re.I)


def asked_class(question: str) -> str | None:
    """The stem of the class noun a "which X ..." question asks for a member of, if it opens so."""
    m = _ASKS_A_CLASS.match(question)
    if not m or m.group(1).lower() in _SCAFFOLD or m.group(1).lower() in STOPWORDS:
        return None
    return stem(m.group(1).lower())


_EXCLUDING = re.compile(
    r"\b(?:besides|other than|except(?: for)?|apart from|aside from|excluding)\s+(?:the\s+)?", re.I
)


# "the next app version after 4.2", "the release after 4.2": the version one step on
_VERSION_AFTER = re.compile(
    r"\b(?:the\s+)?(?:(?:next|following)\s+((?:[a-z]+\s+){0,3}?)(?:after|following)"
    r"|((?:[a-z]+\s+){0,2}?(?:version|release))\s+after)\s+v?(\d+)\.(\d+)(?:\.\d+)?\b",
    re.I,
)


def version_after(question: str) -> str:
    """The question with "the next version after 4.2" said as the version it means ("version 4.3"): pages
    name a release by its number, never as the one after another ("major" steps the first number)."""

    def step(m: re.Match[str]) -> str:
        words = (m.group(1) or m.group(2) or "").strip()
        major, minor = int(m.group(3)), int(m.group(4))
        number = f"{major + 1}.0" if "major" in words.lower().split() else f"{major}.{minor + 1}"
        noun = "" if re.search(r"\b(?:version|release)$", words, re.I) else " version"
        return f"{words}{noun} {number}".strip()

    return _VERSION_AFTER.sub(step, question)


_ANOTHER = re.compile(r"\b(?:any\s+other|another|other)\s+([a-z]+)", re.I)


def another_of(question: str) -> str | None:
    """The stem of the class a question asks for another member of ("apart from Bluefin, has any other supplier
    sent a revised quote?": a supplier, not Bluefin)."""
    m = _ANOTHER.search(question)
    return None if m is None or m.group(1).lower() in STOPWORDS else stem(m.group(1).lower())


def excluded_names(question: str, names: Sequence[str]) -> list[str]:
    """The names a question sets aside ("apart from Bluefin, has any other supplier..."): the answer is about
    someone else."""
    found: list[str] = []
    for m in _EXCLUDING.finditer(question):
        rest = normalise(question[m.end() :])
        found += [n for n in names if normalise(n) and rest.startswith(normalise(n)) and n not in found]
    return found


def picks_by_relative_clause(question: str) -> bool:
    return bool(_RELATIVE_CLAUSE.search(question))


# A clause inside the question that picks out the occasion or the thing ("when we enforced YubiKeys", "whose
# Reno site went down"), up to the next comma or the end; never the question's opening word
_SUBORDINATE = re.compile(
    r"(?<=\w)\s+(?:when|whenever|after|before|while|whose|that|which|who|where)\s+([^,;?]+)", re.I
)


_HEDGE = re.compile(rf"^\s*(?:(?:{HEDGES})\s+)+", re.I)
# a possessive ending ("Voss's", "Leeds's"): not part of the name
POSSESSIVE = re.compile(r"['’]s?$")


# a clause with no relative word: a noun, then who did something to it ("the robot we took back from Pinecrest")
_ZERO_RELATIVE = re.compile(
    r"\b(?!(?:do|does|did|can|could|should|would|will|shall|must|may|might|have|has|had|are|is|was|were|am|"
    r"what|which|who|how|when|where|why|if|so|and|or|but|that)\b)[a-z]{3,}\s+(?:we|you|they|i)\s+([^,;?]+)",
    re.I,
)


# the first question of a message, read after a later one that refers back to it ("which teams did it hold up
# (what stalled the March billing migration)"): it says what "it" is, not what this part asks
_EARLIER_PART = re.compile(
    r"\s\((?=(?:which|what|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|has|have|can)\b)"
    r"([^()]+)\)\s*$",
    re.I,
)


def subordinate_terms(question: str) -> frozenset[str]:
    """The terms of the clauses that pick out what the question is about rather than what it asks: a passage
    holding the answer may say them anywhere, not in the answering sentence."""
    # with the names and codes said there ("whose missing sign-off delayed Web 7.1": the release too)
    return frozenset(
        t
        for clause in subordinate_clauses(question)
        for t in [*question_terms(clause), *(stem(c) for c in constraint_words(clause))]
    )


def subordinate_clauses(question: str) -> list[str]:
    """The clauses themselves ("the kiln is located"): what `subordinate_terms` reads."""
    question = _HEDGE.sub("", question)  # "roughly when is...": the question word opens it, no clause
    clauses = [
        *_SUBORDINATE.finditer(question),
        *_ZERO_RELATIVE.finditer(question),
        *_EARLIER_PART.finditer(question),
    ]
    return [m.group(1) for m in clauses]


def picks_by_time(question: str) -> bool:
    """A comparison that picks by when ("which shipped first", "which opened later"): each side's date is
    what is compared, so a date in its passage says the event ("a 2019 kiln" says when it came)."""
    return bool(_BY_TIME.search(question))


def pick_direction(question: str) -> str | None:
    """ "low" when the question asks for the first/smaller side, "high" for the later/larger one."""
    low, high = _PICK_LOW.search(question), _PICK_HIGH.search(question)
    if low and (not high or low.start() < high.start()):
        return "low"  # "older" sits here: the older one came first
    return "high" if high else None


def words_for(text: str, stems: Sequence[str]) -> list[str]:
    """The words of `text` whose stems are among `stems`, as written, in order."""
    wanted = set(stems)
    out: list[str] = []
    for token in tokens(text):
        if stem(token) in wanted and token not in out:
            out.append(token)
    return out


# "what's the web portal's current error budget", "what storage quota are we...", "how many desks...": the noun
# the question asks a value of. The words that end its phrase: a preposition, a clause, a verb of the question.
_HEAD_STOP = frozenset(
    [
        *("of", "for", "at", "in", "on", "to", "from", "with", "under", "during", "after", "before", "by"),
        *("when", "if", "that", "which", "who", "whose", "where", "while", "else", "there"),
        *("do", "does", "did", "is", "are", "was", "were", "be", "been", "will", "would", "should", "can"),
        *("could", "may", "might", "must", "have", "has", "had"),
        *("we", "i", "you", "they", "he", "she", "it", "our", "your", "their", "my"),
    ]
)
_ASKS_A_VALUE = re.compile(
    r"\b(?:what(?:'s|’s| is| are| was| were)|how many|how much|(?:is|are) there(?: an?| any)?|"
    r"what(?=\s+\w+(?:\s+\w+)?\s+"
    r"(?:is|are|was|were|do|does|did)\b))\s+(.+?)\s*[?.!]*$",
    re.I,
)
_MEASURE_UNITS = frozenset(["minutes", "hours", "days", "weeks", "months", "years", "times", "percent"])
_LEADING = frozenset(["the", "a", "an", "any", "current", "latest", "new", "old", "actual", "exact"])
# the form of a question, not its subject ("at what purchase amount"): no value is named by them
_FORM_NOUNS = frozenset(["amount", "number", "quantity", "total", "value", "figure", "sum"])


def asked_head(question: str) -> list[str]:
    """The stems of the noun phrase a question asks a value of, its head last and the word before it ("crash
    rate" -> [crash, rate], "renewal price" -> [renew, price], "how many employees" -> [employe]), from "what is
    X" and "how many X" questions; empty when the question has another form ("what company makes...")."""
    m = _ASKS_A_VALUE.search(question)
    if not m:
        return []
    phrase: list[str] = []
    for raw in m.group(1).split():
        word = re.sub(r"['’]s$", "", raw.strip(",;:")).lower()
        if not phrase and word in DIMENSIONS:
            return [stem(DIMENSIONS[word])]  # "how much cheaper": a price; "how much faster": a speed
        if raw.lower().endswith(("'s", "’s")):
            phrase = []  # "Kestrel's on-time delivery rate": what follows the owner is the asked thing
            continue
        if word == "of" and len(phrase) == 1 and (phrase[0] in _MEASURE_UNITS or phrase[0] == "name"):
            # "how many weeks of parental leave": the weeks measure the leave; "the name of the supplier": the
            # airport is asked
            phrase = []
            continue
        if word in _HEAD_STOP or not re.fullmatch(r"[a-z][a-z-]*", word):
            break
        if word in _LEADING and not phrase:
            continue
        phrase.append(word)
    if not phrase or len(phrase) > 4 or phrase[-1] in _FORM_NOUNS:
        return []
    head = terms(" ".join(phrase[-2:]).replace("-", " "))[-2:]
    if not head:
        return []
    if not re.match(r"\s*(?:what(?:'s|’s| is| are| was| were)|how|is|are)\b", question[m.start() :], re.I):
        # "what company makes...", "what tier is...": a class whose member answers ("Gold"), not
        # a noun the page names; a price or a date ("what renewal price are we...") is still the asked value
        return head if head[-1] in TYPE_NOUNS else []
    return head


_QUALIFIER = re.compile(
    rf"\b(?:in|at|during)\s+((?:[{CAPITAL}][\w'’-]+)(?:\s+[{CAPITAL}][\w'’-]+)*)|\b(?:in|during|of|by)\s+((?:1[5-9]|20)\d\d)\b"
)


def qualifiers(question: str, entities: Sequence[str]) -> list[str]:
    """Places and years a question narrows its fact to ("launch in Germany", "ship in 2025"): the answer must
    say them where it states the fact, or it states the fact for somewhere or some time else. The question's
    own subject (a named entity) is not a qualifier."""
    subject = {t for name in entities for t in tokens(name)}
    found = [
        w for m in _QUALIFIER.finditer(question) for w in tokens(m.group(1) or m.group(2)) if w not in subject
    ]
    return [w for w in found if w not in _SCAFFOLD]


# Where a question asks a second thing: ", and when ...", "; who ...", "? how long ...". Only before a question
# word, so "X and Y" inside one question (a comparison, a list) stays whole.
_SECOND_PART = re.compile(
    r"(?:,\s*and\s+|;\s*(?:and\s+)?|\?\s+(?:and\s+)?)(?=(?:what|when|which|who|whom|where|why|how|is|are|was|were|"
    r"does|do|did|can|could|should|will|has|have|with what|by when|in what|at what|since when)\b)"
    # without a comma, a question word that opens a clause of its own ("... and which tickets came out of it")
    r"|\s+and\s+(?=(?:what|when|which|who|whom|where|why|how)\s+\w+\s+\w+)",
    re.I,
)
_ELLIPTIC = re.compile(
    r"^(?:with what|by when|in what|at what|since when|how (?:long|much|many|fast|soon))\b", re.I
)


def question_parts(question: str) -> list[str]:
    """The questions one message asks ("which ticket implements X, and when is it supposed to land?" asks
    two). A part that refers back ("it", "they") or only names what it asks ("with what score?", "how fast?")
    is read with the first part before it: its subject is there."""
    raw = [p.strip(" ,;?") for p in _SECOND_PART.split(question.strip())]
    parts = [p for p in raw if p]
    if len(parts) < 2:
        return [question]
    first = parts[0]
    out = [first]
    for part in parts[1:]:
        refers = bool(_REFERS.search(part) or _POSSESSIVE_PRONOUN.search(part) or _ELLIPTIC.match(part))
        out.append(f"{part} ({first})" if refers or len(terms(part)) < 2 else part)
    return out


def distributed(question: str, names: Sequence[str], lexicon: Lexicon) -> tuple[str, list[str]]:
    """Two things sharing one name's tail ("the Android and iOS crash triage meetings" names "Android Crash
    Triage" and "iOS Crash Triage"): the question with the shared tail written out for each, and the names so
    found that the lexicon knows."""
    found: list[str] = []
    for name in names:
        first, _, tail = name.partition(" ")
        if not tail:
            continue
        m = re.search(
            rf"{_NAME_WORD}(?=\s+(?:and|or|vs\.?|versus)\s+{re.escape(first)}\s+{re.escape(tail)}\b)",
            question,
            re.I,
        )
        if not m:
            continue
        other = f"{m.group(0)} {tail}"
        if lexicon.resolve(other) and other not in names:
            found.append(other)
            question = question[: m.start()] + other + question[m.end() :]
    return question, found


_SIDE_BREAK = re.compile(r"\b(?:compared? (?:to|with)|versus|vs\.?|than|differs? from)\b", re.I)


def side_words(question: str, sides: Sequence[str]) -> dict[str, list[str]]:
    """What each side of a two-sided comparison says of itself: "the Windows beta ring last compared with
    the Linux nightly channel" -> Windows: beta ring last; Linux: nightly channel. Words before the first
    side are asked of both; none when the sides are only joined ("X and Y")."""
    spans = name_spans(question, sides)
    if len(spans) != 2:
        return {}
    (_s1, e1, n1), (s2, e2, n2) = spans
    between = question[e1:s2]
    cut = _SIDE_BREAK.search(between)
    if not cut:
        return {}
    # "Gold dealers ... compared with Silver ones": "ones" stands for the first side's words, shared
    first, second = terms(between[: cut.start()]), terms(_PRO_FORM.sub(" ", question[e2:]))
    if not first or not second:
        return {}
    return {n1: first, n2: second}


_PRO_FORM = re.compile(r"\b(?:ones?|those|that)\b", re.I)
