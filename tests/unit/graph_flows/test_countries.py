"""Countries by their adjectives, from the countryinfo data shipped with the package (read offline)."""

from __future__ import annotations

import pytest

from graph_flows.reasoners.offline.countries import (
    adjectives_of,
    countries_by_adjective,
    countries_named,
    places_in,
    provinces_named,
)
from graph_flows.reasoners.offline.reflect import mentions_all


@pytest.mark.parametrize(
    ("text", "countries"),
    [
        ("the Finnish markka", ("Finland",)),
        ("a Mexican surgeon and a Dutch painter", ("Mexico", "Netherlands")),
        ("a South Korean singer", ("South Korea",)),  # the longer adjective, not a shorter one inside it
        ("Chinese journalist", ("China",)),  # shared by China, Hong Kong and Macau: the most populous
        ("french fries", ()),  # case counts
        ("the American Basketball Association", ()),  # the adjective opening a longer name is that name's
        ("Americana music", ()),  # a word that merely starts like one
    ],
)
def test_countries_by_adjective(text: str, countries: tuple[str, ...]) -> None:
    assert countries_by_adjective(text) == countries


def test_adjectives_of_a_country() -> None:
    assert "American" in adjectives_of("United States")
    assert adjectives_of("Atlantis") == ()


def test_the_places_in_a_country_are_its_other_names_and_provinces() -> None:
    uk = places_in("uk")
    assert ("cumbria",) in uk and ("british",) in uk and ("united", "kingdom") in uk
    assert ("no",) not in places_in("norway")  # a code names the country as the question's word only
    assert places_in("velden") == ()


@pytest.mark.parametrize(
    ("text", "placed"),
    [
        ("It is located entirely within the county of Cumbria.", True),  # a province of the UK
        ("The band toured Great Britain in 1990.", True),
        ("A British rower.", True),
        ("It is located entirely within Bavaria.", False),
    ],
)
def test_a_country_the_question_names_is_met_by_a_place_in_it(text: str, placed: bool) -> None:
    assert mentions_all(["uk"], [text]) == placed


@pytest.mark.parametrize(
    ("text", "countries"),
    [
        ("Kohuwala is a suburb in Colombo, Sri Lanka.", ("Sri Lanka",)),
        ("a 2000 Hong Kong action film", ("Hong Kong",)),  # a name, whatever word follows
        ("a Chinese journalist", ("China",)),  # by adjective too
        ("Georgia Tech is in New Jersey.", ()),  # inside a longer name it is that name's
    ],
)
def test_countries_named(text: str, countries: tuple[str, ...]) -> None:
    assert countries_named(text) == countries


@pytest.mark.parametrize(
    ("text", "provinces"),
    [
        ("a site in Hinds County, Mississippi, dating from 800", ("Mississippi",)),
        ("located in the city of Greenfield, Indiana.", ("Indiana",)),
        ("the Central region", ()),  # a province's name said any other way is an everyday word
        ("Atlanta, Georgia Tech", ()),  # after the comma, a longer name
    ],
)
def test_provinces_named_the_way_an_address_gives_them(text: str, provinces: tuple[str, ...]) -> None:
    assert provinces_named(text) == provinces
