"""Builds the investigation graph and runs turns on it, checkpointed per Slack thread.

    plan -> retrieve -> reflect --(no stop reason)--> retrieve
                               \\--(stop reason)-----> answer -> END
    plan -(broad question, themes)-> broad_retrieve -> broad_reflect -> broad_retrieve | broad_answer -> END

The router (graph_flows.router) decides per question in plan and writes its decision to the trace.

thread_id = "{team}:{channel}:{thread_ts}". Read top to bottom: nodes, edges, router, compile.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from graph_flows.access import AccessCheck, confirmed, live_access
from graph_flows.broad import (
    ThemeReader,
    broad_answer,
    broad_reflect,
    broad_retrieve,
    route_after_broad_reflect,
)
from graph_flows.config import FlowConfig
from graph_flows.gaplog import GapLog
from graph_flows.knowledge import KnowledgeReader
from graph_flows.nodes.answer import DRAFT_KEY, DraftSink, answer
from graph_flows.nodes.plan import plan
from graph_flows.nodes.reflect import reflect
from graph_flows.nodes.retrieve import retrieve
from graph_flows.reasoners.base import Reasoner
from graph_flows.scope import ScopedKnowledge, source_scope
from graph_flows.state import ThreadState, TurnInput, TurnOutput


def route_after_reflect(state: ThreadState) -> Literal["retrieve", "answer"]:
    return "answer" if state["stop_reason"] else "retrieve"


def route_after_plan(state: ThreadState) -> Literal["retrieve", "broad_retrieve"]:
    return "broad_retrieve" if state.get("route") == "broad" else "retrieve"


def build_flow(
    knowledge: KnowledgeReader,
    reasoner: Reasoner,
    flow_settings: FlowConfig,
    *,
    checkpointer: BaseCheckpointSaver | None,
    gap_log: GapLog | None = None,
    themes: ThemeReader | None = None,
) -> Any:
    """`themes` defaults to the store's theme layer when it has one (`knowledge.themes`). Every read goes
    through `ScopedKnowledge`, which applies a turn's source scope (`Investigator.ask(scope=...)`)."""
    if themes is None and flow_settings.themes:
        themes = getattr(knowledge, "themes", None)
    scoped = ScopedKnowledge(knowledge)
    knowledge = scoped
    if themes is not None:
        themes = scoped.scoped_themes(themes)
    graph = StateGraph(ThreadState, input_schema=TurnInput, output_schema=TurnOutput)
    graph.add_node(
        "plan",
        partial(plan, knowledge=knowledge, reasoner=reasoner, flow_settings=flow_settings, themes=themes),
    )
    graph.add_node("retrieve", partial(retrieve, knowledge=knowledge, flow_settings=flow_settings))
    graph.add_node(
        "reflect", partial(reflect, knowledge=knowledge, reasoner=reasoner, flow_settings=flow_settings)
    )
    graph.add_node("answer", partial(answer, knowledge=knowledge, reasoner=reasoner, gap_log=gap_log))
    if themes is not None:
        graph.add_node(
            "broad_retrieve",
            partial(broad_retrieve, knowledge=knowledge, themes=themes, flow_settings=flow_settings),
        )
        graph.add_node("broad_reflect", partial(broad_reflect, flow_settings=flow_settings))
        graph.add_node(
            "broad_answer", confirmed(partial(broad_answer, knowledge=knowledge, reasoner=reasoner))
        )
    graph.add_edge(START, "plan")
    if themes is None:
        graph.add_edge("plan", "retrieve")
    else:
        graph.add_conditional_edges("plan", route_after_plan, ["retrieve", "broad_retrieve"])
        graph.add_edge("broad_retrieve", "broad_reflect")
        graph.add_conditional_edges(
            "broad_reflect", route_after_broad_reflect, ["broad_retrieve", "broad_answer"]
        )
        graph.add_edge("broad_answer", END)
    graph.add_edge("retrieve", "reflect")
    graph.add_conditional_edges("reflect", route_after_reflect, ["retrieve", "answer"])
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer)


def sqlite_checkpointer(path: Path) -> SqliteSaver:
    """A SqliteSaver on its own file; one connection shared across threads (SqliteSaver serialises access)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    return SqliteSaver(conn)


def postgres_checkpointer(url: str, *, pool_size: int = 8) -> BaseCheckpointSaver:
    """A PostgresSaver on a small connection pool (worker threads checkpoint side by side); `setup` creates or
    migrates its tables. `url` is the database's SQLAlchemy URL (`postgresql+psycopg://...`)."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    conninfo = re.sub(r"^postgres(?:ql)?(?:\+\w+)?://", "postgresql://", url)
    options = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    pool = ConnectionPool(conninfo, min_size=1, max_size=pool_size, kwargs=options, open=True)
    saver = PostgresSaver(pool)  # type: ignore[arg-type]
    # `serve` and its workers start side by side on one database: its migrations run once, under a lock (two
    # concurrent `setup`s insert the same migration row and one process dies)
    with psycopg.connect(conninfo, autocommit=True) as conn:  # not the pool's: setup takes one of those
        # polled, not waited on: a waiting query holds a snapshot, and the migrations' CREATE INDEX
        # CONCURRENTLY waits for every snapshot, so a blocking wait would deadlock
        deadline = time.monotonic() + CHECKPOINT_SETUP_WAIT_S
        while not conn.execute("SELECT pg_try_advisory_lock(%s)", (CHECKPOINT_SETUP_LOCK,)).fetchone()[0]:
            if time.monotonic() > deadline:
                raise TimeoutError("another process has been migrating the checkpoint tables for too long")
            time.sleep(0.1)
        try:
            saver.setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (CHECKPOINT_SETUP_LOCK,))
    return saver


CHECKPOINT_SETUP_LOCK = 0x51E07C4B  # any fixed key: the advisory lock the checkpointer's migrations take
CHECKPOINT_SETUP_WAIT_S = 120.0


def thread_id(team: str, channel: str, thread_ts: str) -> str:
    return f"{team}:{channel}:{thread_ts}"


Progress = Callable[[dict[str, Any]], None]


@dataclass
class Investigator:
    """Runs one question turn on a thread. The caller resolves principals; the flow only carries them."""

    flow: Any
    flow_settings: FlowConfig

    def ask(
        self,
        thread: str,
        question: str,
        *,
        asker: str,
        principals: frozenset[str],
        max_rounds: int | None = None,
        modes: list[str] | None = None,
        progress: Progress | None = None,
        access: AccessCheck | None = None,
        scope: list[str] | None = None,
        draft: DraftSink | None = None,
    ) -> TurnOutput:
        """`access`: the live check of what the answer shows, as this asker (`graph_flows.access`); `scope`:
        the sources (or parts of them) this turn may read, on top of the principals (`graph_flows.scope`);
        `draft`: handed the answer's grounded sentences while a model writes them (`nodes.answer.Drafts`)."""
        with live_access(access), source_scope(scope):
            return self._ask(thread, question, asker, principals, max_rounds, modes, progress, draft)

    def _ask(
        self,
        thread: str,
        question: str,
        asker: str,
        principals: frozenset[str],
        max_rounds: int | None,
        modes: list[str] | None,
        progress: Progress | None,
        draft: DraftSink | None = None,
    ) -> TurnOutput:
        payload: TurnInput = {
            "thread_id": thread,
            "question": question,
            "asker": asker,
            "principals": sorted(principals),
            "max_rounds": max_rounds or self.flow_settings.max_rounds,
            "modes": modes or ["text", "graph"],
        }
        configurable: dict[str, Any] = {"thread_id": thread}
        if draft is not None:
            configurable[DRAFT_KEY] = draft
        config = {"configurable": configurable, "recursion_limit": self.flow_settings.recursion_limit}
        if progress is None:
            return self.flow.invoke(payload, config=config)
        final: dict[str, Any] = {}
        for mode, chunk in self.flow.stream(payload, config=config, stream_mode=["updates", "values"]):
            if mode == "values":
                final = chunk
                continue
            for delta in chunk.values():
                trace = delta.get("trace") if isinstance(delta, dict) else None
                if trace:
                    progress(trace[-1])
        return {k: final[k] for k in TurnOutput.__annotations__ if k in final}  # type: ignore[return-value]

    def history(self, thread: str) -> dict[str, Any]:
        config = {"configurable": {"thread_id": thread}}
        return dict(self.flow.get_state(config).values)
