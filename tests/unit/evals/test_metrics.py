from __future__ import annotations

import pytest

from evals.metrics import (
    all_recall_at,
    answer_in_text,
    distinct,
    is_yes_no,
    mean,
    normalise_answer,
    percentile,
    recall_at,
)


@pytest.mark.parametrize(
    ("ranked", "gold", "k", "expected"),
    [
        (["a", "b", "c"], ["a", "c"], 2, 0.5),
        (["a", "b", "c"], ["a", "c"], 5, 1.0),
        (["a", "a", "c"], ["a", "c"], 2, 1.0),  # distinct passages: a repeat does not use up a slot
        (["x", "y"], ["a"], 5, 0.0),
        ([], ["a", "b"], 5, 0.0),
        (["a"], [], 5, 0.0),  # no gold: nothing to recall
        (["a", "b"], ["a", "a", "b"], 1, 0.5),  # gold is a set
        (["b", "missing:T"], ["missing:T", "b"], 2, 1.0),
    ],
    ids=["half", "all", "dedup", "none", "empty-ranked", "no-gold", "gold-set", "ids-verbatim"],
)
def test_recall_at(ranked: list[str], gold: list[str], k: int, expected: float) -> None:
    assert recall_at(ranked, gold, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "gold", "expected"),
    [
        (["a", "b", "c", "d", "e", "f"], ["a", "e"], 1.0),
        (["a", "b", "c", "d", "e", "f"], ["a", "f"], 0.0),
        (["a", "a", "a", "a", "a", "f"], ["a", "f"], 1.0),
        (["a"], [], 0.0),
    ],
    ids=["inside", "sixth", "dedup", "no-gold"],
)
def test_all_recall_at_5(ranked: list[str], gold: list[str], expected: float) -> None:
    assert all_recall_at(ranked, gold, 5) == expected


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("The Beatles", "beatles"),
        ("  Detroit,   Michigan. ", "detroit michigan"),
        ("an Apple a day", "apple day"),
        ("$2,500", "2500"),
        ("Théâtre", "théâtre"),
        ("Mondays at 10:00 PT", "mondays at 1000 pt"),
        ("“quoted” – dash", "quoted dash"),
        ("", ""),
    ],
)
def test_normalise_answer(raw: str, normal: str) -> None:
    assert normalise_answer(raw) == normal


@pytest.mark.parametrize(
    ("answers", "text", "found"),
    [
        (["Detroit"], "She died in Detroit, Michigan.", True),
        (["Motor City", "Detroit"], "He moved to detroit in 1960.", True),
        (["the Beatles"], "Beatles songs", True),
        (["Paris"], "Parisian cafes", False),  # whole words only
        (["1,200"], "a fleet of 1200 robots", True),
        (["Ann"], "", False),
        ([""], "anything", False),  # an empty answer is never found
    ],
    ids=["plain", "alias", "article", "word-boundary", "punctuation", "empty-text", "empty-answer"],
)
def test_answer_in_text(answers: list[str], text: str, found: bool) -> None:
    assert answer_in_text(answers, text) is found


@pytest.mark.parametrize(
    ("answers", "yes_no"), [(["yes"], True), (["No."], True), (["Norway"], False), ([], False)]
)
def test_is_yes_no(answers: list[str], yes_no: bool) -> None:
    assert is_yes_no(answers) is yes_no


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, 0.0),
        ([7.0], 95, 7.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([3.0, 1.0, 2.0], 50, 2.0),  # order of input does not matter
        ([float(v) for v in range(1, 101)], 95, 95.05),
        ([10.0, 20.0], 0, 10.0),
        ([10.0, 20.0], 100, 20.0),
    ],
)
def test_percentile_matches_linear_interpolation(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_distinct_keeps_first_order() -> None:
    assert distinct(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_mean_of_nothing_is_zero() -> None:
    assert mean([]) == 0.0
    assert mean([1.0, 0.0]) == 0.5
