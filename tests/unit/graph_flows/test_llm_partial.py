"""The compose reply while it is written: closed sentence objects found in partial JSON, each grounded as the
finished reply is before it is handed on, and the draft answer record numbered as the answer numbers it."""

from __future__ import annotations

import json
from typing import Any

from graph_flows.nodes.answer import Drafts
from graph_flows.reasoners.base import ComposedSentence
from graph_flows.reasoners.llm_partial import GroundedDrafts, closed_sentences
from graph_flows.state import Evidence

PLAN: dict[str, Any] = {
    "aspects": [{"id": "a1", "text": "why Atlas slipped", "terms": [], "entities": []}],
    "answer_type": "explanation",
}


def _evidence(eid: str, title: str, text: str) -> Evidence:
    return {
        "id": eid, "chunk_id": f"c{eid}", "doc_id": f"wiki:{eid}", "title": title, "url": f"https://w/{eid}",
        "source": "wiki", "kind": "page", "text": text, "updated_at": "2024-05-01T00:00:00+00:00",
        "version": "1", "turn": 1, "round": 1, "via": "text", "parent": None, "score": 1.0, "relevance": 0.9,
    }  # fmt: skip


E1 = _evidence("E1", "Atlas Launch", "The Atlas launch moved from March to May 2024 because of ENG-142.")
E2 = _evidence("E2", "ENG-142", "ENG-142 tracks the payment gateway migration, which took 1,200 hours.")
GOOD_1 = {"text": "The Atlas launch moved to May 2024 because of ENG-142.", "cites": ["E1"],
          "quote": "The Atlas launch moved from March to May 2024 because of ENG-142.", "aspect": "a1"}  # fmt: skip
UNGROUNDED = {"text": "The board cancelled Atlas.", "cites": ["E1"], "quote": "The board cancelled Atlas.",
              "aspect": "a1"}  # fmt: skip
GOOD_2 = {"text": "ENG-142 is the payment gateway migration, which took 1,200 hours.", "cites": ["E2"],
          "quote": "ENG-142 tracks the payment gateway migration, which took 1,200 hours.", "aspect": "a1"}  # fmt: skip
REPLY = json.dumps({"sentences": [GOOD_1, UNGROUNDED, GOOD_2], "gaps": [], "conflicts": [], "answered": True})


def test_only_closed_sentence_objects_are_read_from_a_partial_reply() -> None:
    assert closed_sentences(REPLY[:10]) == []
    cut = REPLY.index("The board")  # inside the second object
    assert closed_sentences(REPLY[:cut]) == [GOOD_1]
    assert closed_sentences(REPLY) == [GOOD_1, UNGROUNDED, GOOD_2]
    assert closed_sentences("Sure! ```json\n" + REPLY[: REPLY.index("gaps")]) == [GOOD_1, UNGROUNDED, GOOD_2]


def test_a_sentence_is_handed_on_once_grounded_and_an_ungrounded_one_never() -> None:
    seen: list[list[str]] = []
    drafts = GroundedDrafts(PLAN, [E1, E2], lambda sentences: seen.append([s.text for s in sentences]))
    for end in range(1, len(REPLY) + 1, 7):
        drafts(REPLY[:end])
    drafts(REPLY)
    assert seen == [[GOOD_1["text"]], [GOOD_1["text"], GOOD_2["text"]]]  # the board's sentence never shown


def test_a_new_call_starts_its_sentences_again_and_a_failing_sink_is_dropped() -> None:
    seen: list[int] = []
    drafts = GroundedDrafts(PLAN, [E1, E2], lambda sentences: seen.append(len(sentences)))
    drafts(REPLY)
    repaired = json.dumps({"sentences": [GOOD_2], "answered": True})
    drafts(repaired[:20])  # a repair's reply, from its start
    drafts(repaired)
    drafts(repaired)  # nothing new: nothing handed on
    assert seen == [2, 1]

    def broken(sentences: list[ComposedSentence]) -> None:
        raise RuntimeError("slack down")

    failing = GroundedDrafts(PLAN, [E1, E2], broken)
    failing(REPLY)  # logged, not raised: a draft never costs the model call
    failing(REPLY[:5])
    failing(REPLY)


def test_a_draft_is_numbered_and_sourced_as_the_answer_is() -> None:
    drafts: list[dict[str, Any]] = []
    sink = Drafts({"E1": E1, "E2": E2}, drafts.append)
    sink(
        [
            ComposedSentence(text="Second first.", cites=["E2"]),
            ComposedSentence(text="Then one.", cites=["E1"]),
        ]
    )
    sink([ComposedSentence(text="Unknown.", cites=["E9"])])  # cites nothing shown: no draft
    [draft] = drafts
    assert draft["text"] == "Second first. [1] Then one. [2]"
    assert [(s["n"], s["doc_id"], s["url"]) for s in draft["sources"]] == [
        (1, "wiki:E2", "https://w/E2"),
        (2, "wiki:E1", "https://w/E1"),
    ]
