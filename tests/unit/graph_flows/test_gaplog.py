"""The gap log reads back what the flow writes: entries, the per-asker filter, recurring groups, the dated
notes, and forgetting one person."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from connectors.database import make_engine
from graph_flows.gaplog import GapLog, gap_subject, group_gaps

WHEN = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)
CLOSEST = [{"doc_id": "acme:wiki/company/office-guide", "source": "acme"}]


@pytest.fixture
def log(tmp_path: Path) -> GapLog:
    return GapLog(make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}"))


def _gap(what: str, kind: str = "missing_source") -> dict:
    return {"kind": kind, "log_what": what, "closest": CLOSEST}


def test_an_entry_written_is_read_back_for_its_asker_only(log: GapLog) -> None:
    question = "Where do I park at the Oakland office?"
    log.append(
        question, [_gap("parking at the Oakland office")], asker="ann@acme.io", thread="T:C:1", when=WHEN
    )

    [entry] = log.entries(viewer="ann@acme.io")
    assert (entry.kind, entry.what, entry.asker, entry.question) == (
        "missing_source", "parking at the Oakland office", "ann@acme.io", question,
    )  # fmt: skip
    assert (entry.thread, entry.at, entry.closest) == (
        "T:C:1",
        WHEN,
        (("acme:wiki/company/office-guide", "acme"),),
    )
    assert log.entries(viewer="bob@acme.io") == []
    assert [g.count for g in log.summary()] == [1]
    assert log.summary(viewer="bob@acme.io") == []


def test_the_audit_probe_text_survives_odd_characters(log: GapLog) -> None:
    """What the old file format broke on: parentheses and "asked by" inside the question."""
    question = "What (asked by legal: x) says the NDA?"
    log.append(question, [_gap(question)], asker="ann@acme.io", when=WHEN)
    assert [e.question for e in log.entries(viewer="ann@acme.io")] == [question]


def test_differently_worded_questions_about_one_thing_are_one_recurring_gap(log: GapLog) -> None:
    asked = [
        ("ann@acme.io", "Is there parking at the Oakland office?"),
        ("bob@acme.io", "Where do I park at the Oakland office?"),
        ("cat@acme.io", "Oakland office parking?"),
        ("ann@acme.io", "Can I park at the oakland office"),
        ("bob@acme.io", "Who approves visa sponsorship for contractors?"),
    ]
    for n, (asker, question) in enumerate(asked):
        log.append(question, [_gap(question)], asker=asker, when=WHEN + timedelta(minutes=n))

    parking, visa = log.summary()
    assert (parking.count, parking.askers) == (4, ["ann@acme.io", "bob@acme.io", "cat@acme.io"])
    assert parking.closest() == [("acme:wiki/company/office-guide", "acme")]
    assert visa.count == 1 and "visa" in visa.label(lambda doc: True)
    assert [g.count for g in log.summary(since=WHEN + timedelta(minutes=2))] == [2, 1]


class _Aliases:
    """Two names of one document, as the store's alias table would resolve them."""

    def names_in(self, text: str, *, strict: bool = True) -> list[str]:
        return [n for n in ("S-8", "Supplier 8") if n.lower() in text.lower()]

    def resolve(self, name: str) -> list[str]:
        return ["acme:wiki/finance/supplier-8"]


def test_aliases_of_one_document_are_one_subject() -> None:
    a = gap_subject("payment terms of S-8", _Aliases())
    b = gap_subject("Supplier 8 payment terms", _Aliases())
    assert a == b == ["@acme:wiki/finance/supplier-8", "payment", "term"]


def test_subjects_naming_different_documents_never_merge(log: GapLog) -> None:
    for doc in ("acme:a", "acme:b"):
        log.append("payment terms?", [{**_gap("payment terms"), "subject": [f"@{doc}", "payment", "term"]}],
                   asker="ann@acme.io", when=WHEN)  # fmt: skip
    assert [g.count for g in group_gaps(log.entries())] == [1, 1]


def test_export_writes_dated_notes_and_forget_removes_one_person(log: GapLog, tmp_path: Path) -> None:
    log.append("Oakland parking?", [_gap("Oakland parking")], asker="ann@acme.io", when=WHEN)
    log.append(
        "Oakland parking?", [_gap("Oakland parking")], asker="bob@acme.io", when=WHEN + timedelta(days=1)
    )

    written = log.export(tmp_path / "notes")

    assert [p.name for p in written] == ["gaps-2026-11-30.md", "gaps-2026-12-01.md"]
    first = written[0].read_text(encoding="utf-8")
    assert first.startswith("# Open gaps 2026-11-30") and "asked by ann@acme.io" in first
    assert "acme:wiki/company/office-guide (acme)" in first
    [hidden] = log.export(tmp_path / "as-reader", since=WHEN + timedelta(hours=1), can_open=lambda doc: False)
    assert "closest: 1 you cannot open" in hidden.read_text(
        encoding="utf-8"
    ) and "office-guide" not in hidden.read_text(encoding="utf-8")
    assert log.forget(["ann@acme.io", "slack:U1"]) == 1
    assert [e.asker for e in log.entries()] == ["bob@acme.io"]


SPONSOR = "who is the board sponsor of it?"  # a pronoun follow-up...
MADE_WHOLE = "who is the board sponsor of FIN-9"  # ...made whole with a name from a finance-only answer


def _derived(log: GapLog, asker: str = "dana@acme.io") -> None:
    gap = {
        **_gap(MADE_WHOLE, kind="relation"),
        "derived_from": ["acme:FIN-9"],
        "derived_askers": ["bob@acme.io"],
    }
    log.append(SPONSOR, [gap], asker=asker, thread="T:C:1", when=WHEN)


def test_wording_made_whole_from_a_document_is_read_only_by_those_who_may_open_it(
    log: GapLog, tmp_path: Path
) -> None:
    _derived(log)
    [entry] = log.entries()
    assert (entry.what, entry.derived_from, entry.derived_askers) == (
        MADE_WHOLE,
        ("acme:FIN-9",),
        ("bob@acme.io",),
    )
    [group] = log.summary()
    assert group.label(lambda doc: doc == "acme:FIN-9") == MADE_WHOLE
    assert group.label(lambda doc: False) == SPONSOR  # what the asker typed, not the name they never typed
    [note] = log.export(tmp_path / "notes", can_open=lambda doc: False)
    text = note.read_text(encoding="utf-8")
    assert SPONSOR in text and "FIN-9" not in text
    [note] = log.export(tmp_path / "finance", can_open=lambda doc: True)
    assert MADE_WHOLE in note.read_text(encoding="utf-8")


def test_forgetting_the_earlier_asker_takes_their_words_out_of_others_entries(log: GapLog) -> None:
    _derived(log)
    log.append("Oakland parking?", [_gap("Oakland parking")], asker="bob@acme.io", when=WHEN)
    assert log.forget(["bob@acme.io"]) == 1  # bob's own entry goes...
    [entry] = log.entries()  # ...and dana's, worded from bob's question, reads as she typed it
    assert (entry.asker, entry.what, entry.derived_from, entry.derived_askers) == (
        "dana@acme.io",
        SPONSOR,
        (),
        (),
    )
    assert "fin" not in entry.subject
