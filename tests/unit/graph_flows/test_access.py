"""The live access check in the flow: what the answer shows is asked of the check, and a document the asker may
no longer open (or whose access could not be confirmed) leaves the answer, which is composed again without it.

The real flow (offline reasoner, in-memory threads) on the demo corpus in a real store; the check is a table of
verdicts standing in for the sources (tests/integration/connectors/test_live_access.py asks real ones).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from connectors.knowledge.store import KnowledgeStore
from connectors.sync import sync_source
from graph_flows.access import GONE, OPEN, SYNCED, UNCONFIRMED
from graph_flows.config import FlowConfig
from graph_flows.flow import Investigator, build_flow
from graph_flows.gaplog import GapLog
from graph_flows.reasoners.offline import OfflineReasoner
from tests.conftest import EXAMPLES, folder

BUDGET = "acme:wiki/finance/q3-budget-2026"
BOB = frozenset({"public", "user:bob@acme.io", "group:acme:finance"})
QUESTION = "What is the Engineering operating budget for Q3 2026?"


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    from connectors.database import make_engine, sqlite_url
    from connectors.knowledge.chunks import ChunkVectors
    from connectors.knowledge.embedder import HashEmbedder

    root = tmp_path_factory.mktemp("access")
    store = KnowledgeStore(
        make_engine(sqlite_url(root / "store")), ChunkVectors(HashEmbedder(), path=root / "chroma")
    )
    sync_source(store, folder(EXAMPLES))
    return store


class Recorder:
    """A check that answers from a table (default: open) and records what it was asked."""

    def __init__(self, verdicts: Mapping[str, str]) -> None:
        self.verdicts = dict(verdicts)
        self.asked: list[list[str]] = []

    def __call__(self, doc_ids: Sequence[str]) -> dict[str, str]:
        self.asked.append(list(doc_ids))
        return {d: self.verdicts.get(d, OPEN) for d in doc_ids}


def _flow(store: KnowledgeStore) -> tuple[Investigator, GapLog]:
    engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
    gaps = GapLog(engine)
    settings = FlowConfig()
    flow = build_flow(store, OfflineReasoner(), settings, checkpointer=InMemorySaver(), gap_log=gaps)
    return Investigator(flow=flow, flow_settings=settings), gaps


def _shows(answer: dict[str, Any], doc_id: str, title: str) -> bool:
    blob = json.dumps({k: answer.get(k) for k in ("text", "sources", "sentences", "related", "conflicts")})
    return doc_id in blob or title in blob or doc_id in answer.get("cited_docs", [])


def _ask(store: KnowledgeStore, check: Callable[..., Any] | None, thread: str) -> tuple[dict, GapLog]:
    investigator, gaps = _flow(store)
    out = investigator.ask(thread, QUESTION, asker="bob@acme.io", principals=BOB, access=check)
    return out, gaps


def test_without_a_check_the_synced_acl_decides(acme: KnowledgeStore) -> None:
    out, _ = _ask(acme, None, "T:C:none")
    assert _shows(out["answer"], BUDGET, "Q3 2026 Budget")  # else the table below proves nothing
    assert "access" not in out["trace"][-1]


@pytest.mark.parametrize(
    ("verdict", "shown", "unconfirmed"),
    [(OPEN, True, 0), (SYNCED, True, 0), (GONE, False, 0), (UNCONFIRMED, False, 1), ("garbage", False, 0)],
    ids=["open", "synced", "gone", "unconfirmed", "unknown-verdict"],
)
def test_a_document_the_asker_can_no_longer_open_leaves_the_answer(
    acme: KnowledgeStore, verdict: str, shown: bool, unconfirmed: int
) -> None:
    check = Recorder({BUDGET: verdict})
    out, gaps = _ask(acme, check, f"T:C:{verdict}")
    answer = out["answer"]
    assert _shows(answer, BUDGET, "Q3 2026 Budget") is shown
    assert answer.get("unconfirmed", 0) == unconfirmed
    assert any(BUDGET in asked for asked in check.asked)
    everything = {d for asked in check.asked for d in asked}
    assert {s["doc_id"] for s in answer["sources"]} <= everything  # nothing shown went unchecked
    access = out["trace"][-1]["access"]
    assert access["compositions"] == (1 if shown else 2)
    if not shown:  # the asker's own trace and the gap log do not name it either
        steps = [s for s in out["trace"] if s.get("node") == "retrieve"]
        assert all(BUDGET not in s.get("reading_ids", []) for s in steps)
        assert all("Q3 2026 Budget" not in s.get("reading", []) for s in steps)
        assert all(BUDGET not in json.dumps(e.closest) for e in gaps.entries())


def test_every_document_refused_leaves_a_not_found_answer_checked_at_most_four_times(
    acme: KnowledgeStore,
) -> None:
    class Nothing(Recorder):
        def __call__(self, doc_ids: Sequence[str]) -> dict[str, str]:
            super().__call__(doc_ids)
            return {d: GONE for d in doc_ids}

    check = Nothing({})
    out, _ = _ask(acme, check, "T:C:nothing")
    assert out["answer"]["sources"] == [] and not out["answer"]["answered"]
    assert len(check.asked) <= 4 and out["trace"][-1]["access"]["compositions"] <= 4
