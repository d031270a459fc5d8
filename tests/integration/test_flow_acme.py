"""The investigation on the demo corpus, asserting trajectories (what each round did), not just final text.

Runs the real store (SQLite + embedded Chroma + the default MiniLM embedder), the real LangGraph flow and its
SQLite checkpointer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.runtime import Runtime
from bot.settings import Settings
from connectors.sync import sync_source
from graph_flows.flow import Investigator, build_flow, sqlite_checkpointer
from tests.conftest import EXAMPLES

ALICE, BOB, CAROL = "alice@acme.io", "bob@acme.io", "carol@acme.io"


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    rt = Runtime(Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("acme"), examples_dir=EXAMPLES))
    for connector in rt.connectors():
        assert sync_source(rt.store, connector).failed == 0
    return rt


def _ask(rt: Runtime, question: str, user: str, thread: str = "T:C:1") -> dict:
    return rt.investigator.ask(thread, question, asker=user, principals=rt.principals_for_email(user))


def _steps(out: dict, node: str) -> list[dict]:
    return [s for s in out["trace"] if s["node"] == node]


def test_second_document_is_reached_through_an_entity_found_in_the_first(runtime: Runtime) -> None:
    out = _ask(
        runtime, "who's the person to chase at the supplier in OPS-31 about the shipment?", ALICE, "T:C:hop"
    )
    by_doc: dict[str, dict] = {}
    for e in out["evidence"]:  # the first reading of each document (a document may be read in several chunks)
        by_doc.setdefault(e["doc_id"], e)
    ticket, supplier = by_doc["acme:OPS-31"], by_doc["acme:wiki/ops/kestrel-motion-systems"]
    assert ticket["round"] == 1
    assert (
        supplier["round"] == 2 and supplier["via"].startswith("graph") and supplier["parent"] == ticket["id"]
    )
    first_reflect = _steps(out, "reflect")[0]
    assert (
        "S-8" in first_reflect["seeds"] and first_reflect["next"] == "graph"
    )  # OPS-31 names it only as "S-8"
    assert _steps(out, "retrieve")[1]["direction"] == "graph"


def test_a_comparison_covers_both_sides(runtime: Runtime) -> None:
    out = _ask(
        runtime, "How does the iOS Crash Triage process differ from Android Crash Triage?", ALICE, "T:C:cmp"
    )
    plan = _steps(out, "plan")[0]
    assert plan["comparison"] and len(plan["aspects"]) == 2
    cited = {s["doc_id"] for s in out["answer"]["sources"]}
    assert {"acme:wiki/eng/ios-crash-triage", "acme:wiki/eng/android-crash-triage"} <= cited
    assert out["answer"]["answered"]


def test_outdated_and_current_policy_are_reported_side_by_side_with_dates(runtime: Runtime) -> None:
    out = _ask(runtime, "What is the meal per diem when travelling?", CAROL, "T:C:conflict")
    (conflict,) = out["answer"]["conflicts"]
    sides = conflict["sides"]
    assert [s["updated_at"] for s in sides] == ["2026-01-15", "2024-05-10"]  # newest first
    assert {s["value"] for s in sides} == {"$75", "$60"}
    assert "$75" in out["answer"]["text"]


def test_a_question_the_corpus_cannot_answer_stops_with_gaps_and_no_claim(runtime: Runtime) -> None:
    out = _ask(runtime, "How many weeks of parental leave do we offer?", ALICE, "T:C:missing")
    answer = out["answer"]
    assert not answer["answered"] and answer["sentences"] == []
    assert answer["gaps"] and answer["rounds"] <= runtime.settings.flow.max_rounds
    assert answer["text"].startswith("I couldn't find an answer")
    assert answer["confidence"] == 0.0


def test_a_follow_up_resumes_from_the_checkpoint_after_a_restart(runtime: Runtime, tmp_path: Path) -> None:
    def investigator() -> Investigator:  # a fresh process: new saver, new graph, same file
        saver = sqlite_checkpointer(tmp_path / "threads.db")
        flow = build_flow(runtime.store, runtime.reasoner, runtime.settings.flow, checkpointer=saver)
        return Investigator(flow=flow, flow_settings=runtime.settings.flow)

    principals = runtime.principals_for_email(ALICE)
    first = investigator().ask(
        "T:C:follow", "What is on the iOS release checklist?", asker=ALICE, principals=principals
    )
    assert first["turn"] == 1
    second = investigator().ask("T:C:follow", "and for the Android app?", asker=ALICE, principals=principals)
    assert second["turn"] == 2
    plan = _steps(second, "plan")[0]
    assert plan["followup_of"] == 1 and plan["reused_evidence"] > 0
    assert "acme:wiki/eng/android-release-checklist" in second["answer"]["ranked_docs"][:3]


def test_a_follow_up_by_someone_with_fewer_permissions_drops_restricted_evidence(runtime: Runtime) -> None:
    budget = "acme:wiki/finance/q3-budget-2026"
    first = _ask(runtime, "What is the total operating budget for Q3 2026?", BOB, "T:C:perm")
    assert budget in {e["doc_id"] for e in first["evidence"]}
    second = _ask(runtime, "and how much of it goes to hardware?", CAROL, "T:C:perm")
    assert _steps(second, "plan")[0]["dropped_evidence"] > 0
    seen = {e["doc_id"] for e in second["evidence"]} | {s["doc_id"] for s in second["answer"]["sources"]}
    restricted = {
        budget,
        "acme:FIN-7",
        "acme:FIN-9",
        "acme:FIN-12",
        "acme:wiki/finance/supplier-contract-terms",
    }
    assert not restricted & seen
    assert budget not in second["answer"]["ranked_docs"]
    state = runtime.investigator.history("T:C:perm")
    carol_view = [t for t in state["turns"] if t["turn"] == 1]  # bob's turn, as the plan re-read it for carol
    kept = {e["id"] for e in second["evidence"]}
    assert all(set(g["clues"]) <= kept for t in carol_view for g in t["gaps"])


def test_a_gap_two_parts_of_a_message_leave_is_listed_once(runtime: Runtime) -> None:
    out = _ask(runtime, "is there parking at the Oakland office, and do we reimburse it?", ALICE, "T:C:twice")
    gaps = [(g["kind"], g["what"]) for g in out["answer"]["gaps"]]
    assert gaps and len(gaps) == len(set(gaps))
