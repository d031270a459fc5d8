"""The thread state: plain JSON types only, checkpointed per Slack thread.

Every key is overwritten by the node that owns it (nodes return whole new values, never mutate), so there are
no accumulating reducers to grow across turns: `plan` resets the per-turn keys at the start of each turn, and
the only keys that outlive a turn are `turns` (the thread's history) and `evidence` (re-checked against the
current asker's principals by `plan` before any reuse).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Direction = Literal["text", "graph"]
# The turn's plan as the state holds it (aspects, entities, answer_type, comparison, followup_of, direction).
Established = dict[str, list[str]]  # aspect id -> the evidence ids that support it (a chain, in order)


# The store's Hit as plain JSON (graph state is checkpointed, so it holds no store objects), plus where it
# was found.
class Evidence(TypedDict):
    id: str  # "E3": stable within the thread; what [n] citations point at
    chunk_id: str
    doc_id: str
    title: str
    url: str
    source: str
    kind: str
    text: str  # the passage as read
    updated_at: str
    version: str
    turn: int
    round: int
    via: str  # "text", "entity", "graph:<edge type>", "expand"
    parent: str | None  # the evidence whose passage led here (graph rounds): the chain a claim rests on
    score: float  # retrieval score (fused), for ranking
    dense: float  # cosine similarity of the passage to the turn's question
    relevance: float  # the reasoner's judgement in [0, 1] (0 until reflected on)


class Aspect(TypedDict):
    id: str  # "a1"
    text: str
    terms: list[str]
    entities: list[str]
    # one of several questions in one message ("which ticket..., and when..."): its own expected answer
    # type and wording; absent, the plan's
    answer_type: NotRequired[str]
    question: NotRequired[str]
    # names the question sets aside ("besides Northwind, ..."): the answer is about someone else
    excluded: NotRequired[list[str]]


class Gap(TypedDict):
    kind: Literal["relation", "explanation", "missing_source"]
    what: str
    clues: list[str]  # evidence ids
    derived_from: NotRequired[list[str]]  # documents its wording came from (a theme's label: its documents)


class Plan(TypedDict, total=False):
    """What plan decided for the turn (a reasoner's PlanProposal as JSON): the nodes read only these keys."""

    aspects: list[Aspect]
    entities: list[str]
    answer_type: str  # person, date, number, money, place, explanation, yesno, choice, list, thing
    comparison: bool
    direction: Direction
    queries: list[str]
    followup_of: int | None
    effective_question: str  # the question as a whole, a follow-up's edit applied
    notes: list[str]
    llm_run: str  # the LLM reasoner's ledger key for this question
    # the documents and the earlier askers the wording (effective question, aspects) came from besides what
    # this asker typed (graph_flows.derived): a follow-up made whole with a name an answer stated
    derived_from: list[str]
    derived_askers: list[str]


class Conflict(TypedDict):
    about: str  # the words the two statements share: what they disagree on
    sides: list[dict[str, Any]]  # evidence_id, title, updated_at, version, value, sentence, n, outdated?


class AnswerLine(TypedDict):
    text: str
    cites: list[int]  # source numbers
    aspect: str | None


class Answer(TypedDict, total=False):
    """The answer node's record: what the Slack and terminal renderers and the benchmark read."""

    answered: bool
    text: str  # the sentences with [n] markers (or the "not found" text with the closest passages)
    sentences: list[AnswerLine]
    related: list[dict[str, Any]]  # the closest passages when nothing answers
    sources: list[
        dict[str, Any]
    ]  # n, evidence_id, doc_id, title, url, source, kind, updated_at, version, snippet
    gaps: list[dict[str, Any]]  # a Gap with its clue numbers
    conflicts: list[Conflict]
    confidence: float
    ranked_docs: list[str]
    cited_docs: list[str]
    stop_reason: str | None
    path: str
    rounds: int
    reasoner: str
    calibration: dict[str, Any]  # the learned reader's verdict: probability, threshold, features, withheld
    fallbacks: list[dict[str, str]]  # steps the model failed and the offline reasoner took: step, kind


class TraceEntry(TypedDict, total=False):
    """One step of the trace: which node, and what it saw and decided (node-specific keys besides)."""

    node: str  # plan, retrieve, reflect, answer
    turn: int
    round: int
    notes: list[str]
    ms: float


class Subject(TypedDict):
    """A name the answer stated, with the passage that stated it: what "it" or "they" in a follow-up may
    mean. Kept with its evidence so a later asker who cannot open that passage never inherits the name."""

    name: str
    evidence_id: str


class TurnRecord(TypedDict):
    turn: int
    question: str
    asker: str
    evidence_ids: list[str]
    gaps: list[Gap]
    answered: bool
    effective_question: NotRequired[str]  # the question as answered (a follow-up made whole)
    subjects: NotRequired[list[Subject]]
    derived_from: NotRequired[list[str]]  # what the effective question was built from (graph_flows.derived)
    derived_askers: NotRequired[list[str]]


class TurnInput(TypedDict, total=False):
    """What the caller passes for a new turn. `principals` are resolved by the caller from the asker's
    identity; nothing a reasoner or retrieved text says can change them."""

    thread_id: str
    question: str
    asker: str
    principals: list[str]
    max_rounds: int
    modes: list[str]  # retrieval directions allowed this turn: ["text", "graph"] by default


class ThreadState(TypedDict, total=False):
    thread_id: str
    question: str
    asker: str
    principals: list[str]
    max_rounds: int
    modes: list[str]
    turn: int
    turns: list[TurnRecord]
    # per turn
    started_at: float
    plan: Plan  # aspects, entities, answer_type, comparison, followup_of, first direction
    round: int
    direction: Direction
    tried_queries: list[str]
    next_queries: list[str]
    evidence: list[Evidence]
    new_evidence: list[str]  # ids found by the last retrieve
    read_docs: list[str]
    seeds: list[str]
    seed_origins: dict[str, str]  # seed name -> the evidence id it was quoted from
    used_seeds: list[str]
    established: Established
    gaps: list[Gap]
    rounds_without_new_entities: int
    stop_reason: str | None
    path: str  # "fast", "loop" or "broad"
    route: str  # "pointed" or "broad" (graph_flows.router), decided by plan
    broad: dict[str, Any]  # the broad path's themes read, covered and uncovered (graph_flows.broad)
    answer: Answer
    trace: list[TraceEntry]


class TurnOutput(TypedDict, total=False):
    thread_id: str
    question: str
    asker: str
    turn: int
    answer: Answer
    evidence: list[Evidence]
    gaps: list[Gap]
    stop_reason: str | None
    path: str
    round: int
    trace: list[TraceEntry]


PER_TURN_RESET: dict[str, Any] = {
    "round": 0,
    "tried_queries": [],
    "next_queries": [],
    "new_evidence": [],
    "read_docs": [],
    "seeds": [],
    "seed_origins": {},
    "used_seeds": [],
    "established": {},
    "gaps": [],
    "rounds_without_new_entities": 0,
    "stop_reason": None,
    "path": "loop",
    "route": "pointed",
    "broad": {},
    "answer": {},
    "trace": [],
}
