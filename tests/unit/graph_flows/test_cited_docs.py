"""What the posted answer cites is what its sentences and conflict sides cite, whichever chain they came from."""

from __future__ import annotations

from graph_flows.nodes.answer import cited_docs
from graph_flows.reasoners.base import ComposedSentence


def _passage(doc: str) -> dict:
    return {"doc_id": doc, "title": doc, "text": ""}


def test_the_cited_documents_are_those_the_posted_answer_cites() -> None:
    evidence = {
        eid: _passage(doc) for eid, doc in {"E1": "a", "E2": "b", "E3": "c", "E4": "a", "E5": "d"}.items()
    }
    # a second unit quoted from a page outside the established chain (E2) is cited as well; E5 (a gap's clue,
    # say) is not cited by anything posted
    kept = [ComposedSentence("The fact.", ["E1"]), ComposedSentence("More of it.", ["E2", "E4"])]
    conflicts = [{"sides": [{"evidence_id": "E3"}, {"evidence_id": "E1"}]}]
    assert cited_docs(kept, conflicts, evidence) == ["a", "b", "c"]  # type: ignore[arg-type]
    assert cited_docs([], [], evidence) == []  # type: ignore[arg-type]  # nothing posted, nothing cited
