"""Text helpers shared by sources, the store and the reasoners: names of things (normalisation, English
stopwords, finding known names inside text), tokens, ticket keys, and how a ticket's comments are joined
and split.

"Supplier 8", "supplier-8" and "SUPPLIER 8" normalise to the same key; a text is scanned for known names by
token n-grams (a dictionary lookup per n-gram), which stays fast with tens of thousands of names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache

_TOKEN = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['’][A-Za-z]+)?")
TICKET_KEY = re.compile(r"\b([A-Z][A-Z0-9]{1,9}-\d{1,6})\b")
# An issue key as the REST sources (Jira, Confluence, GitHub) find it in a payload's text: Jira project keys may
# hold "_" and have no length cap there, so this is wider than TICKET_KEY (a question's or a folder's keys).
ISSUE_KEY = re.compile(r"\b[A-Z][A-Z0-9_]+-\d+\b")
COMMENT_SEPARATOR = "\n\n---\n\n"  # a ticket's body and each comment, joined: each becomes its own chunk
MAX_NAME_TOKENS = 8

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "besides",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "except",
        "excluding",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        # adverbs of time and degree that say how the asker feels about a fact, not what it is about
        "yet",
        "one",  # "on one charge", "one of them": a determiner; a count is written as a digit
        "still",
        "already",
        "ever",
        "even",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "us",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "did",
        "does",
        "get",
        "got",
        "may",
        "might",
        "must",
        "shall",
        "s",
        "t",
        # a relative pronoun and hedges: they say how something is asked, not what about; rare in pages, so
        # kept they would outweigh the subject ("whose", "actually", "ultimately")
        "whose",
        "actually",
        "ultimately",
        "roughly",
        "basically",
        "really",
        "exactly",
        "approximately",
        "anyone",
        "someone",
        "anybody",
        "somebody",
        "anything",
        "something",
        # contractions say who is asking, not what about: "i'm", "we're" occur in no page, so kept they would
        # weigh as much as the rarest subject word
        *(
            f"{head}{apostrophe}{tail}"
            for apostrophe in "'’"
            for head, tail in (
                *((w, "m") for w in ("i",)),
                *((w, "re") for w in ("we", "you", "they")),
                *((w, "ve") for w in ("i", "we", "you", "they")),
                *((w, "ll") for w in ("i", "we", "you", "they", "it")),
                *((w, "d") for w in ("i", "we", "you", "they")),
                *((w, "t") for w in ("can", "don", "doesn", "didn", "isn", "aren", "won", "wasn", "weren")),
                *((w, "t") for w in ("shouldn", "wouldn", "couldn", "haven", "hasn")),
            )
        ),
    ]
)


def fold(text: str) -> str:
    """Lowercase and strip accents, so "Café" and "cafe" compare equal."""
    if text.isascii():  # most text: nothing to strip, and decomposing costs more than the rest of tokenising
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """Folded word tokens; a possessive "'s" is dropped so "Sinatra's album" names "Sinatra"."""
    return list(_tokens(text))


@lru_cache(maxsize=100_000)
def _tokens(text: str) -> tuple[str, ...]:
    # Cached: the reasoner reads the same passages against every aspect and candidate chain, every round.
    return tuple(_POSSESSIVE.sub("", fold(t)) for t in _TOKEN.findall(text))


def normalise(name: str) -> str:
    """The alias-table key of a name: folded tokens joined by single spaces."""
    return " ".join(tokens(name))


def content_terms(text: str) -> list[str]:
    """Tokens without stopwords, in order, for lexical queries."""
    return [t for t in tokens(text) if t not in STOPWORDS]


_DISAMBIGUATOR = re.compile(r"^(?P<base>.+?)\s*\([^()]+\)$")


# "<name>, <County>, <State>": capitalised words only after the comma ("John, Count of Brienne" is a title)
_PLACED = re.compile(r"^(?P<base>[^,()]+?)(?:,\s+[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*){1,2}$")


def disambiguated_base(title: str) -> str | None:
    """ "Brand (play)" -> "Brand", "Baure, Nigeria" -> "Baure": the name a title carries before its
    disambiguator (a place's is where it is)."""
    m = _DISAMBIGUATOR.match(title.strip()) or _PLACED.match(title.strip())
    return m["base"] if m else None


def short_name(title: str) -> str | None:
    """ "Henry King (director)" -> "Henry King", "Black Hawk Township, Jefferson County, Iowa" -> "Black Hawk
    Township": how text mentions a title that carries a disambiguator (a place's is where it is; "Sims, North
    Dakota" has none: one word before a comma may be a name's own)."""
    if m := _DISAMBIGUATOR.match(title.strip()):
        return m["base"]
    base = disambiguated_base(title)
    return base if base and " " in base.strip() else None


def is_useful_name(name: str) -> bool:
    """Names worth mining for: not empty, not a lone stopword or a one-letter token."""
    toks = tokens(name)
    if not toks or len(toks) > MAX_NAME_TOKENS:
        return False
    return not (len(toks) == 1 and (toks[0] in STOPWORDS or len(toks[0]) < 2))


def find_mentions(
    text: str,
    known: set[str] | frozenset[str] | dict[str, object],
    *,
    exclude: Iterable[str] = (),
    require_capital: bool = True,
) -> Iterator[str]:
    """Yields each known normalised name that occurs in `text` (longest match first at each position).

    With `require_capital` a match must start at a capitalised word or a number in the original text: "the
    rock" inside a sentence is not a mention of the film "The Rock", while "The Rock" is. Questions typed in
    Slack are often lower case, so question analysis relaxes this for names of two or more words.
    """
    raw = _TOKEN.findall(text)
    folded = [_POSSESSIVE.sub("", fold(t)) for t in raw]
    skip = set(exclude)
    seen: set[str] = set()
    i = 0
    while i < len(folded):
        head = raw[i]
        capital = any(c.isupper() for c in head) or head[:1].isdigit()  # "iOS" and "eBay" are names too
        if require_capital and not capital:
            i += 1
            continue
        matched = 0
        for n in range(min(MAX_NAME_TOKENS, len(folded) - i), 0 if capital else 1, -1):
            key = " ".join(folded[i : i + n])
            if key in known:
                if key not in skip and key not in seen:
                    seen.add(key)
                    yield key
                matched = n
                break
        i += max(matched, 1)


def comment_text(author: str | None, created: object, body: str) -> str:
    """One ticket comment as Sleuth reads it: who, when (its own date, not the ticket's), what."""
    when = str(created)[:10] if created else "an unknown date"
    return f"Comment by {author or 'someone'} on {when}: {body.strip()}"


_COMMENT_HEADER = re.compile(r"^Comment by \S+ on (?:\d{4}-\d{2}-\d{2}|an unknown date): ")


def comment_body(text: str) -> str:
    """What a comment says, without who wrote it when (`comment_text`'s header): its date is not a value it
    states."""
    return _COMMENT_HEADER.sub("", text, count=1)


def join_comments(body: str, comments: Iterable[str]) -> str:
    """A ticket's text: the body, then each comment behind COMMENT_SEPARATOR (see `split_comments`)."""
    return COMMENT_SEPARATOR.join([body.strip(), *(c for c in comments if c.strip())])


def split_comments(text: str) -> list[str]:
    """The parts `join_comments` made: the body first, then one part per comment."""
    return [part.strip() for part in text.split(COMMENT_SEPARATOR) if part.strip()]


def dedupe(items: Iterable[str]) -> list[str]:
    """Items in order, each name once (by its normalised key: "Supplier 8" and "supplier-8" are one)."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = normalise(item) or item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
