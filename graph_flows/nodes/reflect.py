"""reflect: the three fixed questions, validated, then the stop rules (code, not the model's feeling).

The reasoner proposes (established chains, missing gaps, entities, next direction); this node keeps only what
passes the program's checks: evidence ids must exist in this thread for this asker, gaps that name a relation
or explanation must carry clues, and an entity becomes a graph seed only if it occurs in the passage it was
quoted from and denotes a document the asker may see.
"""

from __future__ import annotations

import time
from typing import Literal

from connectors.text import normalise
from graph_flows.config import THRESHOLDS, FlowConfig
from graph_flows.knowledge import KnowledgeReader, StoreLexicon
from graph_flows.nodes.retrieve import normalise_query
from graph_flows.reasoners.base import Reasoner
from graph_flows.state import Direction, Established, Gap, ThreadState

MAX_SEEDS = 4


def stop_reason(
    *,
    rounds_done: int,
    max_rounds: int,
    new_evidence: int,
    all_established: bool,
    fast_path: bool,
    elapsed_s: float,
    time_budget_s: float,
    next_step_possible: bool,
) -> str | None:
    """The stop rules, in order. Pure, so a table test pins them."""
    if all_established:
        return "fast_path" if fast_path and rounds_done == 1 else "sufficient"
    if rounds_done >= max_rounds:
        return "round_cap"
    if new_evidence == 0:
        return "no_new_evidence"
    if elapsed_s >= time_budget_s:
        return "time_budget"
    if not next_step_possible:
        return "repeat"
    return None


def choose_direction(
    proposed: Direction, *, has_seeds: bool, has_queries: bool, stale_rounds: int, modes: list[str]
) -> Direction:
    """Graph when there are seeds, text when there are queries; switch after two rounds with no new entities."""
    direction: Direction = proposed
    if stale_rounds >= 2:
        direction = "text" if direction == "graph" else "graph"
    if direction == "graph" and not has_seeds:
        direction = "text"
    if direction == "text" and not has_queries and has_seeds:
        direction = "graph"
    if direction not in modes:
        direction = "text" if "text" in modes else "graph"
    return direction


def reflect(
    state: ThreadState, *, knowledge: KnowledgeReader, reasoner: Reasoner, flow_settings: FlowConfig
) -> dict:
    started = time.perf_counter()
    principals = frozenset(state["principals"])
    lexicon = StoreLexicon(knowledge, principals)
    plan = state["plan"]
    turn_evidence = [
        e for e in state["evidence"] if e["turn"] == state["turn"] or e["relevance"] >= THRESHOLDS.relevant
    ]
    lexicon.prefetch(t for a in plan["aspects"] for t in a["terms"])
    proposal = reasoner.reflect(plan, turn_evidence, new_ids=state["new_evidence"], lexicon=lexicon)

    known = {e["id"]: e for e in turn_evidence}
    rejected: list[str] = []
    relevance = {eid: max(0.0, min(1.0, float(v))) for eid, v in proposal.relevance.items() if eid in known}
    established: Established = {}
    aspect_ids = {a["id"] for a in plan["aspects"]}
    for aspect, chain in proposal.established.items():
        valid = [eid for eid in chain if eid in known]
        if aspect in aspect_ids and valid and len(valid) == len(chain):
            established[aspect] = valid
        else:
            rejected.append(f"established {aspect}: unknown evidence")
    gaps: list[Gap] = []
    for gap in proposal.missing:
        clues = [c for c in gap["clues"] if c in known]
        if gap["kind"] in {"relation", "explanation"} and not clues:
            rejected.append(f"gap without clues: {gap['what'][:80]}")
            continue
        gaps.append({"kind": gap["kind"], "what": gap["what"], "clues": clues})

    used = set(state["used_seeds"])
    read_docs = set(state["read_docs"])
    seeds: list[str] = []
    origins: dict[str, str] = {}
    for cand in proposal.entities:
        source = known.get(cand.evidence_id)
        if source is None or normalise(cand.name) not in normalise(source["text"] + " " + source["title"]):
            rejected.append(f"entity not in its passage: {cand.name[:60]}")
            continue
        docs = lexicon.resolve(cand.name)
        if cand.name in used or not docs or all(d in read_docs for d in docs):
            continue
        seeds.append(cand.name)
        origins[cand.name] = cand.evidence_id
        if len(seeds) >= MAX_SEEDS:
            break
    stale = 0 if seeds else state["rounds_without_new_entities"] + 1
    tried = set(state["tried_queries"])
    queries = [q for q in proposal.queries if normalise_query(q) and normalise_query(q) not in tried]
    direction = choose_direction(
        proposal.direction,
        has_seeds=bool(seeds),
        has_queries=bool(queries),
        stale_rounds=stale,
        modes=state["modes"],
    )
    updated = [{**e, "relevance": relevance.get(e["id"], e["relevance"])} for e in state["evidence"]]
    all_established = len(established) == len(plan["aspects"])
    fast = _fast_path(state, established, updated, flow_settings)
    reason = stop_reason(
        rounds_done=state["round"],
        max_rounds=state["max_rounds"],
        new_evidence=len(state["new_evidence"]),
        all_established=all_established,
        fast_path=fast,
        elapsed_s=time.time() - state["started_at"],
        time_budget_s=flow_settings.time_budget_s,
        next_step_possible=(direction == "graph" and bool(seeds)) or (direction == "text" and bool(queries)),
    )
    entry = {
        "node": "reflect",
        "round": state["round"],
        "established": {a: ids for a, ids in established.items()},
        "missing": [{"kind": g["kind"], "what": g["what"], "clues": g["clues"]} for g in gaps],
        "seeds": seeds,
        "next": direction,
        "queries": queries,
        "rejected": rejected,
        "notes": proposal.notes,
        "stop": reason,
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    path: Literal["fast", "loop"] = "fast" if reason == "fast_path" else "loop"
    return {
        "evidence": updated,
        "established": established,
        "gaps": gaps,
        "seeds": seeds,
        "seed_origins": origins,
        "used_seeds": [*state["used_seeds"], *seeds],
        "direction": direction,
        "next_queries": queries,
        "rounds_without_new_entities": stale,
        "stop_reason": reason,
        "path": path,
        "trace": [*state["trace"], entry],
    }


def _fast_path(
    state: ThreadState, established: Established, evidence: list, flow_settings: FlowConfig
) -> bool:
    """A simple lookup: one aspect, established by one passage that was the top text hit with a strong score."""
    plan = state["plan"]
    if state["round"] != 1 or len(plan["aspects"]) != 1 or plan.get("comparison"):
        return False
    chain = established.get(plan["aspects"][0]["id"], [])
    if len(chain) != 1:
        return False
    by_id = {e["id"]: e for e in evidence}
    top = by_id.get(chain[0])
    return bool(top) and top["relevance"] >= flow_settings.fast_path_score
