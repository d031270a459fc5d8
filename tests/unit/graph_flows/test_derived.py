"""Derived text carries the documents it was built from: one rule (`shown`) for every view of it, and
`derivation`, which says what a follow-up's wording was built from besides what its asker typed."""

from __future__ import annotations

from typing import Any

import pytest

from graph_flows.derived import Derivation, Derived, derivation, shown

OPEN = {"acme:guide"}


@pytest.mark.parametrize(
    ("derived", "text"),
    [
        (Derived("who sponsors FIN-9", (), "who sponsors it?"), "who sponsors FIN-9"),
        (Derived("parking at Oakland Office Guide", ("acme:guide",), "parking?"), "parking at Oakland Office Guide"),
        (Derived("who sponsors FIN-9", ("acme:FIN-9",), "who sponsors it?"), "who sponsors it?"),
        (Derived("who sponsors FIN-9", ("acme:guide", "acme:FIN-9"), "who sponsors it?"), "who sponsors it?"),
        (Derived("theme “kestrel · credit”", ("acme:FIN-9",)), "a question about 1 document you cannot open"),
        (Derived("theme “kestrel”", ("acme:FIN-9", "acme:FIN-7", "acme:FIN-9")),
         "a question about 2 documents you cannot open"),
    ],
    ids=["typed-only", "all-openable", "hidden", "one-of-two-hidden", "nothing-typed", "counted-once"],
)  # fmt: skip
def test_derived_text_reaches_only_a_viewer_who_may_open_all_it_came_from(
    derived: Derived, text: str
) -> None:
    assert shown(derived, lambda doc: doc in OPEN) == text


def _turn(**extra: Any) -> dict[str, Any]:
    return {
        "turn": 1,
        "question": "which ticket tracks the late delivery credit from Kestrel?",
        "asker": "bob@acme.io",
        "evidence_ids": ["E1", "E2"],
        "gaps": [],
        "answered": True,
        "effective_question": "which ticket tracks the late delivery credit from Kestrel?",
        "subjects": [{"name": "FIN-9", "evidence_id": "E2"}],
        **extra,
    }


DOCS = {"E1": "acme:wiki/finance/supplier-contract-terms", "E2": "acme:FIN-9"}


@pytest.mark.parametrize(
    ("typed", "effective", "previous", "expected"),
    [
        ("what is FIN-9 about?", "what is FIN-9 about?", None, Derivation()),
        ("who is the board sponsor of it?", "who is the board sponsor of it?", _turn(), Derivation()),
        ("who is the board sponsor of it?", "who is the board sponsor of FIN-9", _turn(),
         Derivation(("acme:FIN-9",), ("bob@acme.io",))),
        ("and for the Reno site?", "which ticket tracks the late delivery credit from Reno?", _turn(),
         Derivation((), ("bob@acme.io",))),
        ("and who signed it?", "who signed the Lumen Cell agreement", _turn(),
         Derivation(tuple(DOCS.values()), ("bob@acme.io",))),
        ("and when was it paid?", "when was FIN-9 paid",
         _turn(derived_from=["acme:FIN-3"], derived_askers=["ann@acme.io"]),
         Derivation(("acme:FIN-3", "acme:FIN-9"), ("ann@acme.io", "bob@acme.io"))),
    ],
    ids=["not-a-follow-up", "nothing-added", "pronoun-made-whole", "entity-swap", "words-from-nowhere",
         "carried-along"],
)  # fmt: skip
def test_a_follow_up_made_whole_carries_what_supplied_its_words(
    typed: str, effective: str, previous: dict[str, Any] | None, expected: Derivation
) -> None:
    assert derivation(typed, effective, previous, DOCS) == expected


def test_a_stated_name_whose_passage_the_asker_cannot_open_was_never_theirs_to_inherit() -> None:
    """The plan node hands `derivation` only the evidence this asker may open: a subject whose passage is gone
    from it adds nothing (the history the reasoner saw held no such name either)."""
    visible = {"E1": DOCS["E1"]}
    got = derivation("who is it?", "who is FIN-9", _turn(subjects=[]), visible)
    assert got.docs == (DOCS["E1"],)  # words from nowhere: fail closed on what the answer read
