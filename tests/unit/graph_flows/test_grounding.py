"""Grounding a model's sentence in its quote: formats forgiven, different values and negations caught."""

from __future__ import annotations

import pytest

from graph_flows.reasoners.grounding import (
    as_in_source,
    negated,
    negations,
    quantities,
    quote_found,
    shown_text,
    ungrounded,
)
from graph_flows.state import Evidence


def _evidence(text: str, title: str = "Gateway migration") -> Evidence:
    return {
        "id": "E1", "chunk_id": "c1", "doc_id": "wiki:1", "title": title, "url": "", "source": "wiki",
        "kind": "page", "text": text, "updated_at": "2024-05-01T00:00:00+00:00", "version": "1", "turn": 1,
        "round": 1, "via": "text", "parent": None, "score": 1.0, "dense": 0.0, "relevance": 0.0,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("1 May 2024", "2024-05-01", True),
        ("May 1, 2024", "1st May 2024", True),
        ("1,200", "1.2k", True),
        ("$2,500", "$2.5k", True),
        ("24 hours", "24h", True),
        ("24 hours", "1 day", True),
        ("two weeks", "14 days", True),
        ("15 percent", "15%", True),
        ("2 days", "12 days", False),
        ("5%", "15%", False),
        ("1 May 2024", "2024-05-02", False),
        ("300ms", "300 s", False),
    ],
)  # fmt: skip
def test_quantities_compare_as_normalised_whole_tokens(a: str, b: str, same: bool) -> None:
    [(_, left)] = quantities(a)
    [(_, right)] = quantities(b)
    assert bool(left & right) is same


def test_identifiers_and_number_words_without_units_are_not_quantities() -> None:
    assert quantities("ENG-142 is one of the tickets; see v2.3.1") == []


@pytest.mark.parametrize(
    ("text", "negative"),
    [("It was approved.", False), ("It was not approved.", True), ("It wasn't approved.", True),
     ("Nobody approved it.", True), ("It failed to pass review.", True), ("Notes were approved.", False)],
)  # fmt: skip
def test_negation(text: str, negative: bool) -> None:
    assert negated(text) is negative


def test_a_negation_written_into_a_contraction_counts_twice() -> None:
    """ "can't" negated once more ("can not't") is a second negation, not the same one reworded."""
    assert negations("An existing supplier can't do it.") == 1
    assert negations("An existing supplier can not't do it.") == 2


@pytest.mark.parametrize(
    ("quote", "found"),
    [("the migration took 12 days", True), ("The migration  took “12 days”.", True),
     ("The migration took ... because the vendor", True), ("The migration took 14 days", False),
     ("took", False)],
)  # fmt: skip
def test_quote_found(quote: str, found: bool) -> None:
    passage = 'The migration took "12 days" because the vendor missed its deadline.'
    assert quote_found(quote, passage) is found


PASSAGE = _evidence(
    "The gateway migration took 12 days. It was not approved by finance until 2024-05-01. "
    "Payroll for the team is $1,200 per month. Uptime stayed at 15% above target."
)


@pytest.mark.parametrize(
    ("sentence", "quote", "reason"),
    [
        ("The gateway migration took twelve days.", "The gateway migration took 12 days", None),
        ("Finance did not approve it until 1 May 2024.", "It was not approved by finance until 2024-05-01", None),
        ("Team payroll is $1.2k a month.", "Payroll for the team is $1,200 per month", None),
        ("The gateway migration took 2 days.", "The gateway migration took 12 days", "'2 days' is not in"),
        ("Uptime stayed 5% above target.", "Uptime stayed at 15% above target", "'5%' is not in"),
        ("The gateway migration took 12 days.", "The gateway migration took 14 days", "its quote is not in"),
        ("Finance did not approve the migration.", "The gateway migration took 12 days", "negates"),
        ("Finance approved it by 2024-05-01.", "", "drops the passage's negation"),
        ("The migration took 12 days.", "", None),
        ("The migration took 2 days.", "", "'2 days' is not in"),
        ("Salaries are confidential board data.", "", "most of its words"),
    ],
    ids=["number-word", "date-format-and-negation-kept", "amount-format", "wrong-number", "wrong-percent",
         "invented-quote", "negated-claim", "dropped-negation", "no-quote-ok", "no-quote-wrong-number",
         "off-topic"],
)  # fmt: skip
def test_ungrounded(sentence: str, quote: str, reason: str | None) -> None:
    found = ungrounded(sentence, quote, [PASSAGE])
    assert (found is None) if reason is None else (found is not None and reason in found), found


def test_a_second_negation_is_caught() -> None:
    source = _evidence("Hangs on the fleet map are tracked as a performance issue, not a crash: ENG-214.")
    quote = "Hangs on the fleet map are tracked as a performance issue, not a crash"
    claim = "Fleet map hangs are not tracked as a performance issue, not a crash."
    assert ungrounded(claim, quote, [source]) == "it negates what the passage states"


def test_a_negation_in_the_cited_title_is_not_the_sentences() -> None:
    """A model naming its source ("According to ENG-150: ... has no data ...") negates nothing by the title;
    a negation of its own is still caught."""
    source = _evidence(
        "The card stays empty on P3 robots with the new motors.", title="ENG-150: Card has no data"
    )
    quote = "The card stays empty on P3 robots with the new motors"
    faithful = (
        "According to ENG-150: Card has no data, the card stays empty on P3 robots with the new motors."
    )
    assert ungrounded(faithful, quote, [source]) is None
    negated_too = "According to ENG-150: Card has no data, the card does not stay empty on P3 robots."
    assert ungrounded(negated_too, quote, [source]) == "it negates what the passage states"


TABLE = "| Plan | Sustained | Burst |\n|---|---|---|\n| Starter | 120 requests/min | 20 |\n\nCheck-in at 03:30; reviews at 30/60/90 days."


@pytest.mark.parametrize(
    ("sentence", "quote", "reason"),
    [
        ("Starter allows 120 requests/min, burst 20.", "Plan: Starter · Sustained: 120 requests/min · Burst: 20", None),
        ("Starter allows 20 requests/min, burst 20.", "Plan: Starter · Sustained: 120 requests/min · Burst: 20",
         "'20' is not in the cited passage"),  # "20" is stated once, for the burst
        ("Check-in is at 03:30.", "Check-in at 03:30", None),
        ("Check-in is at 03:31.", "Check-in at 03:30", "'31' is not in the cited passage"),
        ("Reviews come at 30/60/91 days.", "reviews at 30/60/90 days", "'91 days' is not in the cited passage"),
    ],
)  # fmt: skip
def test_each_stated_value_backs_one_quantity_and_lists_and_times_count(
    sentence: str, quote: str, reason: str | None
) -> None:
    assert ungrounded(sentence, quote, [_evidence(TABLE, title="Rate limits")]) == reason


def test_a_quote_of_a_table_row_as_shown_to_the_model_is_found_and_figures_are_posted_as_written() -> None:
    e = _evidence("Trips above $2,500 need pre-approval.\n\n" + TABLE, title="Policy")
    assert "Plan: Starter · Sustained: 120 requests/min · Burst: 20" in shown_text(e["text"])
    assert (
        ungrounded("Starter: 120 requests/min.", "Plan: Starter · Sustained: 120 requests/min", [e]) is None
    )
    said = "Trips above $2.5k need pre-approval on 1 May 2024."
    assert as_in_source(said, "Trips above $2,500 need pre-approval.", [e]) == (
        "Trips above $2,500 need pre-approval on 1 May 2024."  # a value the source does not state stays
    )


def test_a_heading_or_title_quoted_as_support_states_nothing() -> None:
    e = _evidence("# Public API Rate Limits\n\n## Plans\nStarter gets 120 requests/min.", title="Rate limits")
    why = "its quote is a heading or title, which states nothing"
    assert (
        ungrounded("According to Rate limits, public API rate limits.", "# Public API Rate Limits", [e])
        == why
    )
    assert ungrounded("Rate limits are per plan.", "Plans", [e]) == why
    assert ungrounded("Starter gets 120 requests/min.", "Starter gets 120 requests/min.", [e]) is None


RATES = "Starter allows 120 requests/min and Pro allows 600 requests/min."
ATLAS = "The Atlas launch moved from March to May 2024 because of ENG-142."
CHURN = "Churn fell 5% in Q2 after the price change."


@pytest.mark.parametrize(
    ("sentence", "quote", "reason"),
    [
        ("Starter allows 600 requests/min and Pro allows 120 requests/min.", RATES, "values swapped"),
        ("Pro allows 120 requests/min and Starter allows 600 requests/min.", RATES, "values swapped"),
        ("Starter allows 120 requests/min and Pro allows 600 requests/min.", RATES, None),
        ("Pro allows 600 requests/min, Starter 120 requests/min.", RATES, None),  # reordered, still bound
        ("The Atlas launch moved because the vendor missed its deadline.", ATLAS, "another cause"),
        ("ENG-142 was caused by the Atlas launch moving to May 2024.", ATLAS, "another cause"),
        ("The Atlas launch moved to May 2024 because of ENG-142.", ATLAS, None),
        ("ENG-142 led to the Atlas launch moving to May 2024.", ATLAS, None),  # the same cause, the other way
        ("The Atlas launch moved to May 2024 because of Q2 churn.", "The Atlas launch moved to May 2024.",
         "a cause its quote does not state"),
        ("Churn rose 5% in Q2 after the price change.", CHURN, "'rose' reverses the direction"),
        ("Churn fell 5% in Q2 before the price change.", CHURN, "'before' reverses the direction"),
        ("Churn dropped 5% in Q2 after the price change.", CHURN, None),  # the same direction in other words
        ("Trips above $2,500 need pre-approval.", "Trips below $2,500 need pre-approval.", "'above' reverses"),
        ("Trips above $2,500 has to get manager pre-approval prior to booking.",
         "Trips above $2,500 must get manager pre-approval before booking.", None),
    ],
    ids=["swapped", "swapped-reordered", "bound", "reordered", "changed-cause", "cause-for-effect",
         "same-cause", "same-cause-forward", "invented-cause", "rose-for-fell", "before-for-after",
         "same-direction", "above-for-below", "prior-for-before"],
)  # fmt: skip
def test_values_causes_and_directions_must_be_related_as_the_quote_relates_them(
    sentence: str, quote: str, reason: str | None
) -> None:
    found = ungrounded(sentence, quote, [_evidence(quote, title="Notes")])
    assert (found is None) if reason is None else (found is not None and reason in found), found
