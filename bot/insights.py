"""What users told Sleuth, as one viewer may read it: not-helpful answers, helpful rates, recurring gaps and
questions that hit the round cap. Shared by `sleuth feedback|gaps`, App Home, `/sleuth gaps` and the digest.

Everything is filtered by the viewer: a cited document the viewer cannot open is counted ("1 source you cannot
open"), never named; wording derived from a document (a follow-up made whole with a name an answer stated) is
shown only to a viewer who may open it, else as typed (`graph_flows.derived.shown`, the one rule every view
applies); question text is shown only to admins and to the person who asked; who asked, only to admins. A
non-admin sees only their own feedback and their own gaps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.askers import AskerDirectory
from bot.feedback import FeedbackLog
from bot.jobs import EDIT, JobQueue
from graph_flows.gaplog import GapEntry, GapLog
from graph_flows.reading import terms

if TYPE_CHECKING:
    from connectors.knowledge.store import KnowledgeStore

TitleOf = Callable[[str], str | None]  # doc id -> its title when the viewer may open it, else None
NOT_HELPFUL = "bad"


@dataclass(frozen=True)
class Viewer:
    user: str  # Slack user id ("" for the CLI, which reads as an admin)
    admin: bool
    title_of: TitleOf
    labels: frozenset[str] = frozenset()  # how the gap log names this person (email, "slack:<id>")

    def can_open(self, doc_id: str) -> bool:
        return self.title_of(doc_id) is not None


@dataclass(frozen=True)
class Cited:
    """Documents as the viewer may see them: (title, source) of the openable ones, a count of the rest."""

    shown: list[tuple[str, str]] = field(default_factory=list)
    hidden: int = 0


@dataclass(frozen=True)
class FeedbackItem:
    trace_id: str
    at: datetime
    value: str
    question: str | None  # None: the viewer is neither an admin nor the asker
    asker: str | None  # Slack user id; admins only
    cited: Cited
    edited: bool  # the question was edited since: the feedback stays on the answer it judged


@dataclass(frozen=True)
class Rate:
    key: str  # ISO week ("2026-W49") or source name
    helpful: int
    not_helpful: int

    @property
    def rate(self) -> float:
        total = self.helpful + self.not_helpful
        return self.helpful / total if total else 0.0


@dataclass(frozen=True)
class GapReport:
    label: str  # the gap in the words of its most typical question
    count: int
    askers: list[str] | None  # admins only
    first: datetime
    last: datetime
    kinds: list[str]
    closest: Cited
    trace_id: str | None = None  # the latest of its questions asked in Slack, for "Show trace"


@dataclass(frozen=True)
class CappedQuestion:
    trace_id: str
    question: str | None
    cited: Cited


def cited(docs: Iterable[tuple[str, str]], title_of: TitleOf) -> Cited:
    """(doc id, source) pairs as the viewer may see them; duplicates counted once."""
    shown, hidden = [], 0
    for doc_id, source in dict.fromkeys(docs):
        title = title_of(doc_id)
        if title is None:
            hidden += 1
        else:
            shown.append((title, source))
    return Cited(shown, hidden)


def feedback_items(
    feedback: FeedbackLog,
    jobs: JobQueue,
    viewer: Viewer,
    *,
    since: float | None,
    value: str | None = NOT_HELPFUL,
) -> list[FeedbackItem]:
    """Verdicts newest first (`value` None: both kinds); a non-admin gets only the ones they gave."""
    items = []
    for row in feedback.latest(since=since, user=None if viewer.admin else viewer.user):
        if value is not None and row.value != value:
            continue
        job = jobs.by_trace(row.trace_id)
        result = (job.result if job else None) or {}
        mine = job is not None and job.user == viewer.user
        later = jobs.for_message(job.team, job.channel, job.message_ts or "") if job else []
        items.append(
            FeedbackItem(
                trace_id=row.trace_id,
                at=datetime.fromtimestamp(row.at, UTC),
                value=row.value,
                question=(job.text if job else None) if viewer.admin or mine else None,
                asker=(job.user if job else None) if viewer.admin else None,
                cited=cited(_sources(result), viewer.title_of),
                edited=any(j.kind == EDIT and j.id > job.id for j in later) if job else False,
            )
        )
    return items


def helpful_rates(
    feedback: FeedbackLog, jobs: JobQueue, viewer: Viewer, *, since: float | None
) -> tuple[list[Rate], list[Rate]]:
    """Helpful rate per ISO week (newest first) and per source the judged answers cited (worst first)."""
    weeks: dict[str, Counter[str]] = {}
    sources: dict[str, Counter[str]] = {}
    for row in feedback.latest(since=since, user=None if viewer.admin else viewer.user):
        year, week, _ = datetime.fromtimestamp(row.at, UTC).isocalendar()
        weeks.setdefault(f"{year}-W{week:02d}", Counter())[row.value] += 1
        job = jobs.by_trace(row.trace_id)
        for source in dict.fromkeys(s for _, s in _sources((job.result if job else None) or {})):
            sources.setdefault(source, Counter())[row.value] += 1
    by_week = [Rate(k, c["good"], c["bad"]) for k, c in sorted(weeks.items(), reverse=True)]
    by_source = sorted(
        (Rate(k, c["good"], c["bad"]) for k, c in sources.items()), key=lambda r: (r.rate, r.key)
    )
    return by_week, by_source


def recurring_gaps(
    gaps: GapLog, viewer: Viewer, *, since: datetime | None, top: int = 10, jobs: JobQueue | None = None
) -> list[GapReport]:
    """Recurring gaps (admins: everyone's; others: their own), with where the closest passages came from and,
    given the job queue, the trace of the latest question asked in Slack."""
    if viewer.admin:
        groups = gaps.summary(since=since, top=top)
    else:
        mine = [
            g for label in sorted(viewer.labels) for g in gaps.summary(since=since, top=top, viewer=label)
        ]
        groups = sorted(mine, key=lambda g: -g.count)[:top]
    return [
        GapReport(
            label=g.label(viewer.can_open),
            count=g.count,
            askers=g.askers if viewer.admin else None,
            first=g.first,
            last=g.last,
            kinds=g.kinds,
            closest=cited(g.closest(), viewer.title_of),
            trace_id=_latest_trace(g.entries, jobs) if jobs is not None else None,
        )
        for g in groups
    ]


def _latest_trace(entries: list[GapEntry], jobs: JobQueue) -> str | None:
    for entry in sorted(entries, key=lambda e: e.at, reverse=True):
        asked = [
            j for j in jobs.of_thread(entry.thread) if " ".join(j.text.split()) == entry.question and j.result
        ]
        if asked:
            return asked[-1].trace_id
    return None


def capped_questions(jobs: JobQueue, viewer: Viewer, *, since: float, top: int = 10) -> list[CappedQuestion]:
    """Answers that stopped at the round cap (the investigation ran out of rounds): admins see all."""
    out = []
    for job in jobs.answered_since(since):
        answer = (job.result or {}).get("answer") or {}
        if answer.get("stop_reason") != "round_cap" or not (viewer.admin or job.user == viewer.user):
            continue
        out.append(CappedQuestion(job.trace_id, job.text, cited(_sources(job.result or {}), viewer.title_of)))
    return out[:top]


def _sources(result: dict[str, Any]) -> list[tuple[str, str]]:
    answer = result.get("answer") or {}
    return [(s["doc_id"], s["source"]) for s in answer.get("sources") or []]


def store_titles(store: KnowledgeStore, principals: frozenset[str]) -> TitleOf:
    """Titles as these principals see them: None for a document they may not open (or that is gone)."""

    def title_of(doc_id: str) -> str | None:
        doc = store.document(doc_id, principals)
        return doc.title if doc is not None else None

    return title_of


def slack_viewer(
    store: KnowledgeStore, askers: AskerDirectory, admins: Iterable[str], team: str, user: str
) -> Viewer:
    """A Slack user as a viewer: their own permissions (resolved like an asker's), admin or not."""
    asker = askers.resolve(team, user, notes=False)
    return Viewer(
        user=user,
        admin=user in set(admins),
        title_of=store_titles(store, asker.principals),
        labels=frozenset({asker.label, f"slack:{user}"}),
    )


def trace_reader(
    store: KnowledgeStore, principals: frozenset[str], question: str
) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """An admin reading someone else's trace: which names they may not see (`trace_hidden`) and which
    documents they may open (for the derived wording, `graph_flows.derived.shown`)."""
    return trace_hidden(
        store, principals, question
    ), lambda doc_id: store.document(doc_id, principals) is not None


def trace_hidden(store: KnowledgeStore, principals: frozenset[str], question: str) -> Callable[[str], bool]:
    """For an admin reading someone else's trace: a name, title or query is hidden unless it names a document
    the admin may open or is made only of the question's own words."""
    asked = set(terms(question))

    def hidden(text: str) -> bool:
        if set(terms(text)) <= asked:
            return False
        return not store.resolve([text], principals).get(text)

    return hidden
