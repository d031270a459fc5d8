"""The retrieval modes a bench compares, all reading one knowledge store with the same principals.

- `bm25`, `dense`, `hybrid`: one `search_text` call with the question.
- `naive-hop`: a reference with one graph hop and no reflection: each of the top BM25 passages, followed by
  the passages whose titles it mentions (its outgoing `mentions` edges in the store's graph).
- `loop-text`, `loop-graph`: the real Investigator (offline reasoner), text only or text and graph.

Each yields the distinct passages it would hand to the answer step, best first, and the passages its answer
cites. Single-shot modes have no answer step: they "cite" their first `CITED_TOP_K` passages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from connectors.knowledge.store import KnowledgeStore
from evals.metrics import distinct
from graph_flows.config import FlowConfig
from graph_flows.flow import Investigator, build_flow
from graph_flows.reasoners.base import Reasoner
from graph_flows.reasoners.offline import OfflineReasoner

SINGLE_SHOT = ("bm25", "dense", "hybrid")
LOOP_MODES = {"loop-text": ["text"], "loop-graph": ["text", "graph"], "llm": ["text", "graph"]}
MODES = (*SINGLE_SHOT, "naive-hop", *LOOP_MODES)
MODEL_MODES = ("llm",)  # need SLEUTH_LLM_MODEL; without it they are left out, and the bench says so
SEARCH_K = 20  # chunks fetched by a single-shot search (distinct passages are taken from them)
RANKED_KEEP = 20  # passages kept per question for scoring and the per-question report
CITED_TOP_K = 5
HOP_SEEDS = 5  # BM25 passages a naive hop starts from
HOP_PER_SEED = 2  # mentioned passages added after each seed
BENCH_ASKER = "bench@sleuth.local"
BENCH_TIME_BUDGET_S = 300.0


@dataclass(frozen=True)
class Outcome:
    ranked: list[str]  # distinct doc ids, best first
    cited: list[str]
    rounds: int
    ms: float
    answered: bool | None = None  # loop modes only
    stop_reason: str | None = None
    gaps: int = 0
    seen: tuple[str, ...] = ()  # every doc id the run surfaced: ranked, evidence read, sources
    answer: dict[str, Any] | None = None  # the flow's answer record (loop modes only)
    llm: dict[str, Any] | None = None  # model modes: calls, tokens, retries, fallbacks of this question


def build_investigator(
    store: KnowledgeStore, flow_settings: FlowConfig | None = None, *, reasoner: Reasoner | None = None
) -> Investigator:
    """The Investigator as the bot builds it, minus what a bench must not keep: the gap log, and threads on
    disk. Threads live in memory (a real LangGraph checkpointer), so a follow-up reads its thread's earlier
    turns as in Slack. The bench's time budget is generous so a loaded machine changes the latency columns,
    not the answers."""
    settings = flow_settings or FlowConfig(time_budget_s=BENCH_TIME_BUDGET_S)
    flow = build_flow(
        store,
        reasoner or OfflineReasoner(gate=settings.reader_gate),
        settings,
        checkpointer=InMemorySaver(),
        gap_log=None,
    )
    return Investigator(flow=flow, flow_settings=settings)


class ModeRunner:
    """Runs one question in one mode. The Investigator is built on first use (single-shot needs none)."""

    def __init__(
        self,
        store: KnowledgeStore,
        *,
        flow_settings: FlowConfig | None = None,
        llm_reasoner: Callable[[], Reasoner] | None = None,
    ) -> None:
        self.store = store
        self._flow_settings = flow_settings
        self._llm_reasoner = llm_reasoner
        self._investigator: Investigator | None = None
        self._llm_investigator: Investigator | None = None
        self._llm: Reasoner | None = None  # the model mode's reasoner, once built

    @property
    def investigator(self) -> Investigator:
        if self._investigator is None:
            self._investigator = build_investigator(self.store, self._flow_settings)
        return self._investigator

    @property
    def llm_investigator(self) -> Investigator:
        """The same flow with the LLM reasoner of the configured model (the caller builds it from settings)."""
        if self._llm_investigator is None:
            if self._llm_reasoner is None:
                raise ValueError("the llm mode needs a model: set SLEUTH_LLM_MODEL (and _BASE_URL)")
            self._llm = self._llm_reasoner()
            self._llm_investigator = build_investigator(self.store, self._flow_settings, reasoner=self._llm)
        return self._llm_investigator

    def run(
        self, mode: str, question: str, *, principals: frozenset[str], thread: str, asker: str = BENCH_ASKER
    ) -> Outcome:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
        if mode not in (*SINGLE_SHOT, "naive-hop"):  # built once, outside the first question's clock
            investigator = self.llm_investigator if mode in MODEL_MODES else self.investigator
        started = time.perf_counter()
        if mode in SINGLE_SHOT:
            ranked = self._search(question, mode, principals)
            return _outcome(ranked, ranked[:CITED_TOP_K], 1, started)
        if mode == "naive-hop":
            ranked = self._naive_hop(question, principals)
            return _outcome(ranked, ranked[:CITED_TOP_K], 1, started)
        out = investigator.ask(
            thread, question, asker=asker, principals=principals, modes=list(LOOP_MODES[mode])
        )
        answer: dict[str, Any] = out.get("answer") or {}
        ms = (time.perf_counter() - started) * 1000
        evidence = [e.get("doc_id", "") for e in out.get("evidence") or []]
        sources = [s.get("doc_id", "") for s in answer.get("sources") or []]
        return Outcome(
            ranked=distinct(answer.get("ranked_docs", []))[:RANKED_KEEP],
            cited=distinct(answer.get("cited_docs", [])),
            rounds=int(answer.get("rounds", out.get("round", 0)) or 0),
            ms=ms,
            answered=bool(answer.get("answered")),
            stop_reason=answer.get("stop_reason"),
            gaps=len(answer.get("gaps") or []),
            seen=tuple(distinct([*answer.get("ranked_docs", []), *evidence, *sources])),
            answer=answer,
            llm=self._usage(mode, ms),
        )

    def _usage(self, mode: str, ms: float) -> dict[str, Any] | None:
        latest = getattr(self._llm, "latest_usage", None)
        if mode not in MODEL_MODES or latest is None:
            return None
        usage: dict[str, Any] = latest()
        budget = getattr(getattr(self._llm, "limits", None), "question_budget_s", None)
        if budget is not None:
            usage["over_deadline_s"] = round(max(0.0, ms / 1000 - float(budget)), 2)
        return usage

    def _search(self, question: str, mode: str, principals: frozenset[str]) -> list[str]:
        hits = self.store.search_text(question, principals, k=SEARCH_K, mode=mode)
        return distinct(h.doc_id for h in hits)[:RANKED_KEEP]

    def _naive_hop(self, question: str, principals: frozenset[str]) -> list[str]:
        seeds = self._search(question, "bm25", principals)
        order: list[str] = []
        for seed in seeds[:HOP_SEEDS]:
            order.append(seed)
            mentioned = [
                n.doc_id
                for n in self.store.neighbors([seed], principals, types={"mentions"})
                if n.outgoing and n.doc_id not in order
            ]
            order += mentioned[:HOP_PER_SEED]
        order += seeds[HOP_SEEDS:]
        return distinct(order)[:RANKED_KEEP]


def _outcome(ranked: list[str], cited: list[str], rounds: int, started: float) -> Outcome:
    ms = (time.perf_counter() - started) * 1000
    return Outcome(ranked=ranked, cited=cited, rounds=rounds, ms=ms, seen=tuple(ranked))
