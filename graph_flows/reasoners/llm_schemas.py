"""The shapes the model must reply in, one per step. Unknown fields are rejected (`extra="forbid"`), so a
reply that tries to add an action, a role or a principal fails validation instead of being ignored.

These are the model's *proposal*; the LLM reasoner turns them into the dataclasses of `reasoners.base`, and
the nodes validate those exactly as they validate the offline reasoner's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

AnswerType = Literal["person", "date", "number", "place", "explanation", "yesno", "choice", "thing"]
Direction = Literal["text", "graph"]
EvidenceId = str  # "E3": only ids that were shown to the model count; the program checks


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class AspectOut(_Strict):
    text: str = Field(min_length=1, max_length=300)  # one thing that must be known
    entities: list[str] = Field(default_factory=list, max_length=6)  # names from the question


class PlanOut(_Strict):
    aspects: list[AspectOut] = Field(min_length=1, max_length=4)
    entities: list[str] = Field(default_factory=list, max_length=8)
    answer_type: AnswerType = "thing"
    comparison: bool = False
    direction: Direction = "text"
    queries: list[str] = Field(default_factory=list, max_length=4)
    followup: bool = False  # continues the thread's previous question
    effective_question: str = Field(default="", max_length=400)  # the question made self-contained


class EstablishedOut(_Strict):
    aspect: str  # an aspect id from the plan
    evidence: list[EvidenceId] = Field(min_length=1, max_length=6)  # the chain, in order


class GapOut(_Strict):
    kind: Literal["relation", "explanation", "missing_source"]
    what: str = Field(min_length=1, max_length=300)
    clues: list[EvidenceId] = Field(default_factory=list, max_length=6)
    aspect: str | None = None  # required for missing_source: which aspect no passage covers


class EntityOut(_Strict):
    name: str = Field(min_length=1, max_length=120)  # quoted verbatim from the passage
    evidence_id: EvidenceId


class ReflectOut(_Strict):
    relevance: dict[EvidenceId, float] = Field(default_factory=dict)  # id -> [0, 1]
    established: list[EstablishedOut] = Field(default_factory=list)  # question 1
    missing: list[GapOut] = Field(default_factory=list, max_length=6)  # question 2
    direction: Direction = "text"  # question 3
    entities: list[EntityOut] = Field(default_factory=list, max_length=8)
    queries: list[str] = Field(default_factory=list, max_length=3)


class SentenceOut(_Strict):
    text: str = Field(min_length=1, max_length=600)
    cites: list[EvidenceId] = Field(min_length=1, max_length=4)
    aspect: str | None = None


class ConflictOut(_Strict):
    about: str = Field(min_length=1, max_length=200)
    evidence: list[EvidenceId] = Field(min_length=2, max_length=4)


class ComposeOut(_Strict):
    sentences: list[SentenceOut] = Field(default_factory=list, max_length=12)
    gaps: list[GapOut] = Field(default_factory=list, max_length=6)
    conflicts: list[ConflictOut] = Field(default_factory=list, max_length=4)
    answered: bool = False
