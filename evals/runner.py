"""Runs bench sets through modes and scores them: a `Record` per (set, mode), a `QuestionResult` per question.

Progress is reported through a `Tracker` (the CLI draws rich bars with it); nothing here prints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from connectors.base import PUBLIC
from connectors.knowledge.embedding import Embedder
from evals.index import IndexStats, open_index
from evals.loaders import MISSING_PREFIX, BenchSet, Question
from evals.memory import process_peak_mb
from evals.metrics import (
    all_recall_at,
    answer_in_text,
    is_yes_no,
    mean,
    percentile,
    posted_text,
    recall_at,
)
from evals.modes import ModeRunner, Outcome
from graph_flows.reasoners.base import Reasoner

log = logging.getLogger(__name__)

Advance = Callable[[int], None]
BENCH_PRINCIPALS = frozenset({PUBLIC})  # bench corpora are public
Tracker = Callable[[str, int | None], Advance]  # (label, total or None) -> advance(n)


def no_tracker(_label: str, _total: int | None) -> Advance:
    return lambda _n: None


@dataclass
class Record:
    """The scores of one mode on one set; the first twelve fields are the `--json` contract."""

    set: str
    mode: str
    n: int
    r2: float
    r5: float
    ar5: float
    answer_in_evidence: float
    rounds: float
    p50_ms: float
    p95_ms: float
    index_pps: float
    peak_rss_mb: float
    embedder: str = ""
    answer_n: int = 0  # questions that count for answer_in_evidence (yes/no answers do not)
    gold_missing: int = 0  # gold passages absent from the corpus (they count as misses)
    errors: int = 0  # questions whose run raised (scored as misses)
    index_cached: bool = False
    index_peak_rss_mb: float = 0.0
    answer_in_answer: float | None = None  # loop modes: the gold answer in the posted answer text
    cited_recall: float = 0.0  # share of gold passages among the cited ones
    decline_rate: float | None = None  # loop modes: share of questions answered with "not found"
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class QuestionResult:
    set: str
    mode: str
    id: str
    question: str
    gold: list[str]
    ranked: list[str]
    cited: list[str]
    r2: float
    r5: float
    answer_in_evidence: bool | None  # None: a yes/no answer, not scored
    rounds: int
    ms: float
    answered: bool | None = None
    stop_reason: str | None = None
    error: str | None = None
    answer_in_answer: bool | None = None  # None: a single-shot mode (no answer) or a yes/no answer
    cited_recall: float = 0.0
    answer_text: str = ""
    confidence: float | None = None  # the answer's stated confidence (for reliability tables)


@dataclass
class SetRun:
    records: list[Record]
    questions: list[QuestionResult]
    index: IndexStats


def run_set(
    bench: BenchSet,
    modes: Sequence[str],
    embedder: Embedder,
    data_dir: Path,
    *,
    tracker: Tracker = no_tracker,
    llm_reasoner: Callable[[], Reasoner] | None = None,
) -> SetRun:
    index_progress = tracker(f"index {bench.name}", len(bench.passages))
    store, stats = open_index(bench, embedder, data_dir, progress=index_progress)
    if stats.cached:
        index_progress(len(bench.passages))
    runner = ModeRunner(store, llm_reasoner=llm_reasoner)
    records: list[Record] = []
    results: list[QuestionResult] = []
    for mode in modes:
        advance = tracker(f"{bench.name} · {mode}", len(bench.questions))
        mode_results = []
        for question in bench.questions:
            mode_results.append(_run_question(runner, bench, mode, question))
            advance(1)
        records.append(score(bench, mode, mode_results, stats, embedder.name))
        results += mode_results
    return SetRun(records=records, questions=results, index=stats)


def _run_question(runner: ModeRunner, bench: BenchSet, mode: str, question: Question) -> QuestionResult:
    thread = f"bench:{bench.name}:{mode}:{question.id}"
    error = None
    try:
        outcome = runner.run(mode, question.question, principals=BENCH_PRINCIPALS, thread=thread)
    except Exception as exc:  # a bench is an outer boundary: one broken question must not lose the run
        log.exception(
            "bench question failed", extra={"set": bench.name, "mode": mode, "question": question.id}
        )
        outcome, error = Outcome(ranked=[], cited=[], rounds=0, ms=0.0), f"{exc.__class__.__name__}: {exc}"
    yes_no = is_yes_no(question.answers)
    scored = None if yes_no else _answer_in(bench, question.answers, outcome.cited)
    posted = posted_text(outcome.answer) if outcome.answer is not None else None
    in_answer = None if yes_no or posted is None else answer_in_text(question.answers, posted)
    return QuestionResult(
        set=bench.name,
        mode=mode,
        id=question.id,
        question=question.question,
        gold=list(question.gold),
        ranked=outcome.ranked,
        cited=outcome.cited,
        r2=recall_at(outcome.ranked, question.gold, 2),
        r5=recall_at(outcome.ranked, question.gold, 5),
        answer_in_evidence=scored,
        rounds=outcome.rounds,
        ms=round(outcome.ms, 1),
        answered=outcome.answered,
        stop_reason=outcome.stop_reason,
        error=error,
        answer_in_answer=in_answer,
        cited_recall=recall_at(outcome.cited, question.gold, max(1, len(outcome.cited))),
        answer_text=posted or "",
        confidence=outcome.answer.get("confidence") if outcome.answer is not None else None,
    )


def _answer_in(bench: BenchSet, answers: Sequence[str], cited: Sequence[str]) -> bool:
    text = "\n".join(f"{p.title}\n{p.text}" for p in (bench.by_id.get(d) for d in cited) if p is not None)
    return answer_in_text(answers, text)


def score(
    bench: BenchSet, mode: str, results: Sequence[QuestionResult], stats: IndexStats, embedder: str
) -> Record:
    gold = {q.id: q.gold for q in bench.questions}
    latencies = [r.ms for r in results if r.error is None]
    answer_scored = [r.answer_in_evidence for r in results if r.answer_in_evidence is not None]
    extra: dict[str, Any] = {}
    in_answer = [float(r.answer_in_answer) for r in results if r.answer_in_answer is not None]
    answered = [r.answered for r in results if r.answered is not None]
    if answered:
        extra["answered"] = round(mean([float(a) for a in answered]), 4)
        stops: dict[str, int] = {}
        for r in results:
            stops[str(r.stop_reason)] = stops.get(str(r.stop_reason), 0) + 1
        extra["stop_reasons"] = dict(sorted(stops.items()))
    return Record(
        set=bench.name,
        mode=mode,
        n=len(results),
        r2=round(mean([r.r2 for r in results]), 4),
        r5=round(mean([r.r5 for r in results]), 4),
        ar5=round(mean([all_recall_at(r.ranked, gold[r.id], 5) for r in results]), 4),
        answer_in_evidence=round(mean([float(a) for a in answer_scored]), 4),
        rounds=round(mean([float(r.rounds) for r in results]), 3),
        p50_ms=round(percentile(latencies, 50), 1),
        p95_ms=round(percentile(latencies, 95), 1),
        index_pps=stats.passages_per_s,
        peak_rss_mb=round(max(process_peak_mb(), 0.0 if stats.cached else stats.peak_rss_mb), 1),
        embedder=embedder,
        answer_n=len(answer_scored),
        gold_missing=sum(g.startswith(MISSING_PREFIX) for r in results for g in r.gold),
        errors=sum(r.error is not None for r in results),
        index_cached=stats.cached,
        index_peak_rss_mb=stats.peak_rss_mb,
        answer_in_answer=round(mean(in_answer), 4) if in_answer else None,
        cited_recall=round(mean([r.cited_recall for r in results]), 4),
        decline_rate=round(1 - mean([float(a) for a in answered]), 4) if answered else None,
        extra=extra,
    )
