"""Countries and their provinces by their other names. Pages give a person's or a thing's country by its
adjective ("a Norwegian playwright", "the Finnish markka") and a fact about the country by its name ("the
currency of Finland from 1860"): the bridge between two such pages is one country said two ways. A question's
"in the UK" is met by "the county of Cumbria", and "the state where X is" by the state X's page gives as an
address does ("Hinds County, Mississippi"). The data is the countryinfo package's (shipped with it, read
offline, loaded once); where one adjective belongs to several countries (Chinese: China, Hong Kong, Macau), it
names the most populous.
"""

from __future__ import annotations

import re
from functools import lru_cache

from countryinfo import CountryInfo

from connectors.text import tokens
from graph_flows.reasoners.offline.language import CAPITAL


@lru_cache(maxsize=1)
def _by_adjective() -> dict[str, str]:
    """Each demonym ("Finnish", "South Korean") with the country it names."""
    best: dict[str, tuple[int, str]] = {}
    for info in CountryInfo.all().values():
        name, population = info.get("name") or "", info.get("population") or 0
        # a few entries list two ("Antiguan,Barbudan"); each names the country
        for adjective in (info.get("demonym") or "").split(","):
            adjective = adjective.strip()
            if name and adjective and population >= best.get(adjective, (-1, ""))[0]:
                best[adjective] = (population, name)
    return {adjective: name for adjective, (_, name) in best.items()}


def _any_of(words: set[str] | dict[str, str], after: str = "") -> re.Pattern[str]:
    """Any of the words as a whole word, the longest first ("South African" before "African")."""
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w'’-])({alternatives})(?![\w-]){after}")


@lru_cache(maxsize=1)
def _adjective_pattern() -> re.Pattern[str]:
    # an adjective opening a longer name is that name's word ("the American Basketball Association")
    return _any_of(_by_adjective(), rf"(?!\s+[{CAPITAL}])")


@lru_cache(maxsize=100_000)
def countries_by_adjective(text: str) -> tuple[str, ...]:
    """The countries a text names by their adjective, in order ("a Finnish markka": Finland). Case counts:
    "french fries" names no country, nor does "American" in "the American Basketball Association"."""
    table = _by_adjective()
    return tuple(dict.fromkeys(table[m.group(1)] for m in _adjective_pattern().finditer(text)))


@lru_cache(maxsize=1024)
def adjectives_of(country: str) -> tuple[str, ...]:
    """The adjectives that name a country ("United States": "American")."""
    return tuple(adjective for adjective, name in _by_adjective().items() if name == country)


_INSIDE_BEFORE = re.compile(rf"[{CAPITAL}][\w'’.-]*\s+$")
_INSIDE_AFTER = re.compile(rf"\s+[{CAPITAL}]")


@lru_cache(maxsize=1)
def _name_pattern() -> re.Pattern[str]:
    return _any_of({info.get("name") or "" for info in CountryInfo.all().values()} - {""})


@lru_cache(maxsize=100_000)
def countries_named(text: str) -> tuple[str, ...]:
    """The countries a text names, by name or by adjective, in order ("a suburb of Colombo, Sri Lanka")."""
    # a country's name inside a longer name is that name's ("New Jersey", "Georgia Tech")
    found = [
        (m.start(), m.group(1))
        for m in _name_pattern().finditer(text)
        if not _INSIDE_BEFORE.search(text, 0, m.start()) and not _INSIDE_AFTER.match(text, m.end())
    ]
    table = _by_adjective()
    found += [(m.start(), table[m.group(1)]) for m in _adjective_pattern().finditer(text)]
    return tuple(dict.fromkeys(name for _, name in sorted(found)))


@lru_cache(maxsize=1)
def _places_of() -> dict[str, tuple[str, ...]]:
    """Each country's one-word names in lower case ("uk", "norway") with the other ways pages place something
    there: its names, adjectives and provinces ("united kingdom", "british", "cumbria")."""
    table: dict[str, tuple[str, ...]] = {}
    for info in CountryInfo.all().values():
        name = info.get("name") or ""
        spellings = [name, *(s for s in info.get("altSpellings") or [] if s.isascii() and len(s) > 1)]
        # a code ("NO", "GB") names the country only where it is the question's word: as a form it is any "no"
        words = [s for s in spellings if not (s.isupper() and len(s) <= 3)]
        forms = [*words, *adjectives_of(name), *(info.get("provinces") or [])]
        lowered = tuple(dict.fromkeys(f.lower() for f in forms if f and f.isascii()))
        for short in spellings:
            if " " not in short and short[:1].isupper():
                table.setdefault(short.lower(), lowered)
    return table


@lru_cache(maxsize=1024)
def places_in(country: str) -> tuple[tuple[str, ...], ...]:
    """For a country's one-word name in lower case ("uk"), the names that place something in it, each as its
    tokens: its other names, its adjectives, its provinces ("the county of Cumbria" is in the UK). Empty for
    any other word."""
    return tuple(tuple(tokens(place)) for place in _places_of().get(country, ()))


@lru_cache(maxsize=1)
def _provinces() -> frozenset[str]:
    """Every country's provinces or states by name ("Mississippi", "Maharashtra", "Cumbria")."""
    return frozenset(p for info in CountryInfo.all().values() for p in info.get("provinces") or [] if p)


_AFTER_A_PLACE = re.compile(rf"[{CAPITAL}][\w'’.-]*,\s+([{CAPITAL}][\w'’-]*(?:\s+[{CAPITAL}][\w'’-]*)?)")


@lru_cache(maxsize=100_000)
def provinces_named(text: str) -> tuple[str, ...]:
    """The provinces or states a text places something in, as an address gives them after a comma ("in Hinds
    County, Mississippi", "the city of Greenfield, Indiana"), in order. A province's name said any other way
    ("Central", "Georgia Tech") is read as no place: many are everyday words."""
    known = _provinces()
    return tuple(dict.fromkeys(m.group(1) for m in _AFTER_A_PLACE.finditer(text) if m.group(1) in known))
