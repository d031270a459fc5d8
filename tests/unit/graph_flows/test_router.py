"""The router: broad questions (a summary, or a collection of problems, changes, blockers) take the theme path;
anything asking for one value, a comparison or a follow-up keeps today's path."""

from __future__ import annotations

from typing import Any

import pytest

from graph_flows.router import choose_route

THING: dict[str, Any] = {"answer_type": "thing"}


@pytest.mark.parametrize(
    ("question", "plan", "route"),
    [
        ("what problems do customers report with the Android app?", THING, "broad"),
        ("summarise the open issues with supplier X", THING, "broad"),
        ("Give me an overview of the billing migration", THING, "broad"),
        ("what is blocking the next firmware release?", THING, "pointed"),  # one thing asked
        ("what is going on with the next firmware release?", THING, "broad"),
        ("what changed in our travel rules this year?", THING, "broad"),
        ("what API rate limit changes have customers needed?", THING, "broad"),
        ("what has the biggest customer asked support for?", THING, "broad"),
        ("what do we have on onboarding?", THING, "broad"),
        ("list all the known issues of the web app", THING, "broad"),
        ("what tier handles customer problems that need a code change?", THING, "pointed"),
        ("what's the hotel cap in London?", THING, "pointed"),
        ("who approves purchase orders above $10,000?", {"answer_type": "person"}, "pointed"),
        ("what problems came first, A or B?", {"answer_type": "thing", "comparison": True}, "pointed"),
        ("and what issues does the iOS one have?", {"answer_type": "thing", "followup_of": 1}, "pointed"),
        ("when did the problems start?", {"answer_type": "date"}, "pointed"),
        (
            "Who was born first, Ann Smith or Bo Lee?",
            {"answer_type": "person", "comparison": True},
            "pointed",
        ),
    ],
)
def test_route_by_question_shape(question: str, plan: dict[str, Any], route: str) -> None:
    assert choose_route(question, plan, themes_available=True)[0] == route


def test_without_themes_every_question_is_pointed() -> None:
    assert choose_route("summarise the open issues", THING, themes_available=False) == (
        "pointed",
        "no themes",
    )


@pytest.mark.parametrize(("scope", "route"), [("broad", "broad"), ("pointed", "pointed")])
def test_a_reasoner_that_states_the_scope_decides(scope: str, route: str) -> None:
    question = "what's the hotel cap in London?" if scope == "broad" else "summarise the open issues"
    assert choose_route(question, {**THING, "scope": scope}, themes_available=True) == (route, "reasoner")
