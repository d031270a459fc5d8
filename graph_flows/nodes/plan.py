"""plan: starts a turn. Resets per-turn state, re-checks the thread's evidence against *this* asker, and asks
the reasoner what must be known (aspects, entities, answer type, first direction)."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from graph_flows.broad import ThemeReader
from graph_flows.config import FlowConfig
from graph_flows.derived import derivation
from graph_flows.knowledge import KnowledgeReader, StoreLexicon
from graph_flows.reasoners.base import Reasoner
from graph_flows.router import choose_route
from graph_flows.state import PER_TURN_RESET, ThreadState


def plan(
    state: ThreadState,
    *,
    knowledge: KnowledgeReader,
    reasoner: Reasoner,
    flow_settings: FlowConfig,
    themes: ThemeReader | None = None,
) -> dict:
    started = time.perf_counter()
    principals = frozenset(state["principals"])
    kept = [e for e in state.get("evidence", []) if knowledge.read(e["chunk_id"], principals) is not None]
    kept_ids = {e["id"] for e in kept}
    # Earlier turns as this asker may see them: evidence they cannot open is gone, and so is every gap whose
    # wording rests on it (a relation gap names the passage it came from).
    # A follow-up made whole ("where are Corvo Leather based") may carry a name an earlier answer read in a
    # passage this asker cannot open: such a turn keeps only the words its asker typed.
    hidden_turns = {e["turn"] for e in state.get("evidence", []) if e["id"] not in kept_ids}
    history = [
        {
            **t,
            "evidence_ids": [i for i in t["evidence_ids"] if i in kept_ids],
            "gaps": [g for g in t["gaps"] if set(g["clues"]) <= kept_ids],
            "subjects": [x for x in t.get("subjects", []) if x["evidence_id"] in kept_ids],
            "effective_question": (
                t.get("effective_question", t["question"])
                if not any(turn <= t["turn"] for turn in hidden_turns)
                else t["question"]
            ),
        }
        for t in state.get("turns", [])
    ]
    lexicon = StoreLexicon(knowledge, principals)
    proposal = reasoner.plan(state["question"], history=history, lexicon=lexicon)
    plan_dict: dict[str, Any] = asdict(proposal)
    previous = next((t for t in history if t["turn"] == proposal.followup_of), None)
    derived = derivation(
        state["question"],
        proposal.effective_question or state["question"],
        previous,
        {e["id"]: e["doc_id"] for e in kept},
    )
    plan_dict["derived_from"], plan_dict["derived_askers"] = list(derived.docs), list(derived.askers)
    modes = state.get("modes") or ["text", "graph"]
    turn = state.get("turn", 0) + 1
    route, why = choose_route(state["question"], plan_dict, themes_available=themes is not None)
    if route == "broad" and not themes.views(principals):
        route, why = "pointed", "no themes"
    entry = {
        "node": "plan",
        "turn": turn,
        "reasoner": reasoner.name,
        "aspects": [a["text"] for a in proposal.aspects],
        "derived_from": list(derived.docs),  # the aspects' wording came from these documents too
        "derived_askers": list(derived.askers),
        "entities": proposal.entities,
        "answer_type": proposal.answer_type,
        "comparison": proposal.comparison,
        "followup_of": proposal.followup_of,
        "notes": proposal.notes,
        "route": route,
        "route_why": why,
        "reused_evidence": len(kept),
        "dropped_evidence": len(state.get("evidence", [])) - len(kept),
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return {
        **PER_TURN_RESET,
        "turn": turn,
        "turns": history,
        "started_at": time.time(),
        "plan": plan_dict,
        "modes": modes,
        "max_rounds": state.get("max_rounds") or flow_settings.max_rounds,
        "direction": "text",
        "route": route,
        "evidence": kept,
        "next_queries": list(proposal.queries),
        "trace": [entry],
    }
