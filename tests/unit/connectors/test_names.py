"""The names a document answers to: its title, its aliases and the short form text uses for a disambiguated
title."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from connectors.base import SourceDoc
from connectors.knowledge.graph import VisibleGraph
from connectors.knowledge.store import _names
from connectors.text import short_name


@pytest.mark.parametrize(
    ("title", "short"),
    [
        ("Henry King (director)", "Henry King"),
        ("Black Hawk Township, Jefferson County, Iowa", "Black Hawk Township"),  # where a place is
        ("Santa Monica, California", "Santa Monica"),
        ("John, Count of Brienne", None),  # a title of nobility, not a place
        ("Louis of Nassau, Lord of De Lek and Beverweerd", None),
        ("Culture, Society and Masculinities", None),  # a list in a title
        ("Mary, mother of Jesus", None),
        ("Northwind Logistics", None),
    ],
)
def test_a_disambiguated_title_has_the_short_name_text_uses(title: str, short: str | None) -> None:
    assert short_name(title) == short


def _doc(title: str) -> SourceDoc:
    return SourceDoc(
        id=f"s:{title}",
        source="s",
        kind="page",
        title=title,
        text="",
        updated_at=datetime(2026, 1, 1, tzinfo=UTC),
        acl=frozenset(["public"]),
    )


@pytest.mark.parametrize(
    ("title", "answers_to"),
    [
        ("WILM (AM)", {"WILM (AM)", "WILM"}),  # a call sign is a name on its own
        ("Heart (1987 film)", {"Heart (1987 film)"}),  # "Heart" alone would match every "heart"
        (
            "Black Hawk Township, Jefferson County, Iowa",
            {"Black Hawk Township, Jefferson County, Iowa", "Black Hawk Township"},
        ),
    ],
)
def test_a_one_word_short_name_counts_only_when_it_cannot_be_a_word(title: str, answers_to: set[str]) -> None:
    assert set(_names(_doc(title)).values()) == answers_to


def test_a_one_word_title_with_a_disambiguator_is_found_by_its_word() -> None:
    titles = {"d1": "Brand (play)", "d2": "Baure, Nigeria", "d3": "Heart (1987 film)", "d4": "Heart (band)"}
    graph = VisibleGraph(docs=set(titles), titles=titles, names={})
    assert graph.disambiguated("Brand") == ["Brand (play)"]
    assert graph.disambiguated("baure") == ["Baure, Nigeria"]  # a place's disambiguator is where it is
    assert graph.disambiguated("Heart") == ["Heart (1987 film)", "Heart (band)"]  # two: the caller decides
    assert graph.disambiguated("Play") == []


def test_the_names_a_text_mentions_are_remembered_with_the_graph() -> None:
    graph = VisibleGraph(docs={"d1"}, titles={"d1": "Kestrel Motion"}, names={"kestrel motion": {"d1"}})
    text = "Kestrel Motion ships the motors; the kestrel motion line is old."
    first = graph.mentions(text)
    assert first == ("kestrel motion",)  # the capitalised mention only
    assert graph.mentions(text) is first  # read again, not searched again
    assert graph.mentions(text, require_capital=False) == ("kestrel motion",)
    assert graph.mentions("Nothing named here.") == ()
