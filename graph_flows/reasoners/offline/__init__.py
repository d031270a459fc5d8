"""The offline rule reasoner: the embedded default and every benchmark's baseline. No model, no network.

plan.py reads the question as a frame (entities, answer type, comparison sides, follow-up edits), reflect.py
answers the three fixed questions with chains of passages, compose.py writes the answer from units that fit
the question (a sentence, a table row with its header, a list block, one line per compared side).
language.py holds the question-reading helpers and weights.py every number they decide with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from graph_flows.reader.decide import decide
from graph_flows.reasoners.base import (
    ComposedSentence,
    Composition,
    Lexicon,
    PlanProposal,
    ReflectionProposal,
)
from graph_flows.reasoners.offline import compose, plan, reflect
from graph_flows.state import Established, Evidence, Plan, TurnRecord


class OfflineReasoner:
    name = "offline"

    def __init__(self, *, max_seeds: int = 4, gate: bool = False, choose: bool = True) -> None:
        self.max_seeds = max_seeds
        self.gate = gate  # True: withhold proposals below the calibrated threshold
        self.choose = choose  # False: state the composer's proposal, only recording the reader's verdicts

    def plan(self, question: str, *, history: Sequence[TurnRecord], lexicon: Lexicon) -> PlanProposal:
        return plan.plan(question, history, lexicon)

    def reflect(
        self, plan: Plan, evidence: Sequence[Evidence], *, new_ids: Sequence[str], lexicon: Lexicon
    ) -> ReflectionProposal:
        return reflect.reflect(plan, evidence, lexicon, max_seeds=self.max_seeds)

    def compose(
        self,
        plan: Plan,
        evidence: Sequence[Evidence],
        established: Established,
        *,
        lexicon: Lexicon,
        on_sentences: Callable[[list[ComposedSentence]], None] | None = None,
    ) -> Composition:
        """Composed at once: nothing to hand on while writing (`on_sentences` is unused)."""
        proposal = compose.compose(plan, evidence, established, lexicon)
        return decide(plan, evidence, proposal, established, lexicon, gate=self.gate, choose=self.choose)


__all__ = ["OfflineReasoner"]
