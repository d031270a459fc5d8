"""What a follow-up's "it" or "they" may point at after an answer (`nodes.answer`): the names its sentences
state that the question did not, from what the sources state (not the title a model attributes a sentence to),
and, after a second reader, from the program's own composition, so that a follow-up reads the same whichever
reasoner answered the turn before."""

from __future__ import annotations

import re
from typing import Any

from graph_flows.nodes.answer import _referents, _subjects
from graph_flows.reasoners.base import ComposedSentence, Composition

NAMES = ("Vendor Register", "Corvo Leather", "Saddle Notice", "ENG-230")


class Names:
    def names_in(self, text: str) -> list[str]:
        found = [(m.start(), n) for n in NAMES for m in re.finditer(re.escape(n), text, re.IGNORECASE)]
        return [n for _, n in sorted(found)]


def _evidence(eid: str, title: str, text: str) -> Any:
    return {"id": eid, "doc_id": f"d:{eid}", "title": title, "text": text}


ROW = _evidence("E1", "Vendor Register", "Vendor: Corvo Leather · What we buy: saddles · Location: Porto")
NOTICE = _evidence("E2", "Saddle Notice", "Check the saddles against the recall notice.")
TICKET = _evidence("E3", "ENG-230: Release iOS 4.3", "Tracking ticket for iOS 4.3.")
EVIDENCE = {e["id"]: e for e in (ROW, NOTICE, TICKET)}
PLAN: Any = {"entities": [], "effective_question": "which vendor makes our saddles?"}


def _names(sentences: list[ComposedSentence]) -> list[str]:
    return [s["name"] for s in _subjects(sentences, EVIDENCE, Names(), PLAN)]


def test_a_title_the_sentence_is_attributed_to_is_not_what_it_stated() -> None:
    said = ComposedSentence(f"According to Vendor Register, {ROW['text'].lower()}", ["E1"])
    assert _names([said]) == ["Corvo Leather"]
    ticket = ComposedSentence("According to ENG-230, tracking ticket for iOS 4.3.", ["E3"])
    assert _names([ticket]) == ["ENG-230"]  # a cited ticket is still named by its key


def test_after_a_second_reader_the_programs_own_sentences_are_the_referents() -> None:
    model = [
        ComposedSentence(f"According to Saddle Notice, {NOTICE['text'].lower()}", ["E2"]),
        ComposedSentence("The vendor in Porto makes them.", ["E1"]),
    ]
    own = [ComposedSentence(ROW["text"], ["E1"])]
    merged = Composition(sentences=model, answered=True, referents=own)
    assert _names(_referents(merged, model, EVIDENCE)) == ["Corvo Leather"]
    assert _referents(Composition(sentences=model, answered=True), model, EVIDENCE) == model
    elsewhere = Composition(
        sentences=model, answered=True, referents=[ComposedSentence(TICKET["text"], ["E3"])]
    )
    assert _referents(elsewhere, model, EVIDENCE) == model  # the answer does not cite it: its own sentences
