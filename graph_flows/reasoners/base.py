"""The Reasoner protocol: plan, reflect, compose. The offline rule reasoner and the LLM reasoner both return
these proposals; the nodes validate them the same way (ids exist, entities occur in their passage, clues
point at evidence) and keep what passes. The reasoner proposes; the program decides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from graph_flows.state import Aspect, Direction, Established, Evidence, Gap, Plan, TurnRecord


class Lexicon(Protocol):
    """Read-only language help bound to the asker's principals (names come only from visible documents)."""

    def names_in(self, text: str) -> list[str]:
        """Known names (titles, keys, aliases of visible documents) occurring in `text`, longest first."""
        ...

    def idf(self, term: str) -> float:
        """Inverse document frequency of a stemmed term; unseen terms weigh the most."""
        ...

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        """Dense similarity of the query to each text (cosine)."""
        ...

    def resolve(self, name: str) -> list[str]:
        """The visible documents a name (title, key, alias) denotes."""
        ...

    def aliases(self, name: str) -> list[str]:
        """The other names (title, aliases) of the visible documents a name denotes ("NWL" for Northwind)."""
        ...


@dataclass
class PlanProposal:
    aspects: list[Aspect]
    entities: list[str]
    answer_type: str
    comparison: bool = False
    direction: Direction = "text"
    queries: list[str] = field(default_factory=list)
    followup_of: int | None = None
    effective_question: str = ""
    notes: list[str] = field(default_factory=list)
    scope: str = ""  # "broad" (a theme-level question) or "pointed"; "" leaves it to graph_flows.router


@dataclass
class EntityCandidate:
    name: str
    evidence_id: str  # the passage it was quoted from
    score: float = 0.0


@dataclass
class ReflectionProposal:
    relevance: dict[str, float]  # evidence id -> [0, 1]
    established: Established
    missing: list[Gap]
    entities: list[EntityCandidate]
    direction: Direction
    queries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class ComposedSentence:
    text: str
    cites: list[str]  # evidence ids
    aspect: str | None = None


@dataclass
class Composition:
    sentences: list[ComposedSentence]  # claims that answer the question, each cited
    answered: bool
    related: list[ComposedSentence] = field(default_factory=list)  # the closest passages when nothing answers
    notes: list[str] = field(default_factory=list)
    confidence: float | None = None  # calibrated P(right) where the reader judged the proposal
    verdict: dict[str, Any] | None = None  # the reader's judgement: probability, threshold, features
    # where a follow-up's "it" or "they" looks for what this answer named: the program's own composition of the
    # same passages where a second reader wrote one (`llm_merge`), so a follow-up reads the same whichever
    # reasoner answered the turn before; None: the answer's own sentences
    referents: list[ComposedSentence] | None = None


class Reasoner(Protocol):
    name: str

    def plan(self, question: str, *, history: Sequence[TurnRecord], lexicon: Lexicon) -> PlanProposal: ...

    def reflect(
        self, plan: Plan, evidence: Sequence[Evidence], *, new_ids: Sequence[str], lexicon: Lexicon
    ) -> ReflectionProposal: ...

    def compose(
        self,
        plan: Plan,
        evidence: Sequence[Evidence],
        established: Established,
        *,
        lexicon: Lexicon,
        on_sentences: Callable[[list[ComposedSentence]], None] | None = None,
    ) -> Composition:
        """`on_sentences`: where a reasoner that writes over time hands on its grounded sentences so far."""
        ...


class ReasonerError(Exception):
    """Tree: ReasonerError > BadModelOutput."""


class BadModelOutput(ReasonerError):
    pass
