"""`sleuth audit permissions`: a leak matrix over users x restricted documents x paths, run against the
current store, so an admin can check Sleuth against their own data.

A probe asks, as one user, for one document that user may not open, through one path, and checks that
nothing of that document comes back: not its id, not its title, not its text. Paths: lexical, dense and
hybrid search (by title, by aliases, by its own sentences), direct reads (each chunk, the document record),
alias resolution, graph neighbours and personalised PageRank from its visible neighbours, the full
investigation (evidence, sources, ranked passages, answer text, trace), a follow-up in a thread where an
authorised user asked first, the gap log, themes (evals.theme_audit), every admin view of the gap log and
of another person's trace after pronoun follow-ups (evals.admin_view_audit; `admin_views` is the bot's own
renderers, passed in by the CLI), and the live access check on documents the user may open but the source now
refuses (evals.live_check_audit).

The audit never writes to the real gap log: its investigations run on a flow of their own (same store, same
reasoner, threads in memory) that logs gaps to a private in-memory gap log, which the gap-log probe reads.

Three probes look at what the asker path alone does not show:
- `status`: when an authorised colleague asks in a channel, every progress line the channel sees (the thread
  status, or the placeholder it falls back to) is checked for the document (`status_text` is the bot's own
  renderer, passed in by the CLI; evals never import the bot).
- `drift:*`: for each user and each restricted document they may open, the document's ACL is narrowed the way
  permission sync writes a source change (the user's principals removed), every retrieval path is asked again
  as that user, and the ACL is restored. The store is touched for that moment only, always narrower.
- `link:forwarded`: for each ordered pair of people, a link started by one in Slack and completed at the
  provider by the other must be refused (and one completed by the same person accepted); `link_check` is the
  bot's own rule, passed in by the CLI.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from connectors.knowledge.acl import can_see
from connectors.knowledge.store import KnowledgeStore, RestrictedDocument
from evals.admin_view_audit import AdminViews, admin_view_probes
from evals.live_check_audit import live_check_probes
from evals.theme_audit import theme_probes
from graph_flows.flow import Investigator, build_flow
from graph_flows.gaplog import GapLog
from graph_flows.reading import sentences
from graph_flows.reasoners.base import Reasoner


class Runtime(Protocol):
    """What the audit needs of the running system (the bot's Runtime provides it)."""

    @property
    def store(self) -> KnowledgeStore: ...

    @property
    def investigator(self) -> Investigator: ...

    @property
    def reasoner(self) -> Reasoner: ...


StatusText = Callable[..., str | None]  # bot.render.progress_text(step, nameable=...)
LinkCheck = Callable[[str, str, bool], bool]  # (Slack email, provider email, verified) -> would link
PUBLIC_ONLY = frozenset({"public"})


@dataclass
class AuditReport:
    probes: int = 0
    leaks: list[dict[str, str]] = field(default_factory=list)
    by_path: dict[str, int] = field(default_factory=dict)
    gap_entries: int = 0  # entries the probes' own gap log holds (the gap-log probe read something)

    def record(self, path: str, leaked: bool, **context: str) -> None:
        self.probes += 1
        self.by_path[path] = self.by_path.get(path, 0) + 1
        if leaked:
            self.leaks.append({"path": path, **context})


@dataclass(frozen=True)
class _Doc:
    id: str
    title: str
    acl: frozenset[str]
    names: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    phrases: tuple[str, ...]  # distinctive sentences of its text


def audit_permissions(
    rt: Runtime,
    users: dict[str, frozenset[str]],
    *,
    max_probes: int | None = None,
    seed: int = 7,
    progress: Callable[[int], None] | None = None,
    status_text: StatusText | None = None,
    link_check: LinkCheck | None = None,
    admin_views: AdminViews | None = None,
) -> AuditReport:
    """Runs every probe for every (user, document the user may not see). `users` maps an asker id (email) to
    the principals Sleuth resolves for them."""
    report = AuditReport()
    flow, gaps = _private_flow(rt)
    docs = _restricted_docs(rt.store)
    rng = random.Random(seed)

    def record(path: str, leaked: bool, **context: str) -> bool:
        report.record(path, leaked, **context)
        if progress:
            progress(1)
        return bool(max_probes and report.probes >= max_probes)

    for user, principals in sorted(users.items()):
        hidden = [d for d in docs if not can_see(principals, d.acl)]
        allowed_users = {u: p for u, p in users.items()}
        for doc in hidden:
            for path, leaked in _probes(
                rt.store, flow, gaps, user, principals, doc, allowed_users, rng, status_text
            ):
                if record(path, leaked, user=user, doc=doc.id):
                    return _finish(report, gaps)
    for user, principals in sorted(users.items()):
        for doc in (d for d in docs if can_see(principals, d.acl)):
            for path, leaked in _drift_probes(rt.store, principals, doc):
                if record(path, leaked, user=user, doc=doc.id):
                    return _finish(report, gaps)
    for path, leaked, user, doc_id in live_check_probes(flow, rt.store, users, docs):
        if record(path, leaked, user=user, doc=doc_id):
            return _finish(report, gaps)
    if users:  # a public document made private at the source: the widest principal set must lose it too
        widest, principals = max(sorted(users.items()), key=lambda item: len(item[1]))
        for doc in _public_docs(rt.store):
            for path, leaked in _drift_probes(rt.store, principals, doc, narrowed=frozenset()):
                if record(path.replace("drift:", "drift-private:"), leaked, user=widest, doc=doc.id):
                    return _finish(report, gaps)
    if admin_views is not None:
        settings = rt.investigator.flow_settings
        found = admin_view_probes(
            rt.store, rt.reasoner, settings, users, docs, admin_views, lambda doc: _needles(doc, "")
        )
        for path, leaked, reader, doc_id in found:
            if record(path, leaked, user=reader, doc=doc_id):
                return _finish(report, gaps)
    if link_check is not None:
        for path, leaked, starter, finisher in _link_probes(sorted(users), link_check):
            if record(path, leaked, user=starter, doc=f"link completed by {finisher}"):
                return _finish(report, gaps)
    return _finish(report, gaps)


def _finish(report: AuditReport, gaps: GapLog) -> AuditReport:
    report.gap_entries = len(gaps.entries())
    return report


def _private_flow(rt: Runtime) -> tuple[Investigator, GapLog]:
    """An investigator like the bot's, but with threads in memory and a gap log nobody else reads."""
    engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
    gaps = GapLog(engine)
    settings = rt.investigator.flow_settings
    flow = build_flow(rt.store, rt.reasoner, settings, checkpointer=InMemorySaver(), gap_log=gaps)
    return Investigator(flow=flow, flow_settings=settings), gaps


def _probes(
    store: KnowledgeStore,
    investigator: Investigator,
    gaps: GapLog,
    user: str,
    principals: frozenset[str],
    doc: _Doc,
    users: dict[str, frozenset[str]],
    rng: random.Random,
    status_text: StatusText | None = None,
) -> Iterator[tuple[str, bool]]:
    queries = [doc.title, *doc.names[:3], *doc.phrases[:3]]
    for query in queries:
        for mode in ("bm25", "dense", "hybrid"):
            hits = store.search_text(query, principals, 20, mode=mode)
            yield f"search:{mode}", any(h.doc_id == doc.id for h in hits)
    for chunk_id in doc.chunk_ids:
        yield "read", store.read(chunk_id, principals) is not None
    yield "chunks_of", bool(store.chunks_of(doc.id, principals))
    yield "document", store.document(doc.id, principals) is not None
    resolved = store.resolve([doc.title, *doc.names, doc.id], principals)
    yield "aliases", any(doc.id in ids for ids in resolved.values())
    neighbours = store.linked_document_ids(doc.id)[:5]
    if neighbours:
        yield "graph:neighbors", any(n.doc_id == doc.id for n in store.neighbors(neighbours, principals))
        yield "graph:expand", any(d == doc.id for d, _ in store.expand(neighbours, principals, 50))
    question = rng.choice(
        [
            f"What does {doc.title} say?",
            f"Tell me about {doc.title}",
            doc.phrases[0] if doc.phrases else doc.title,
        ]
    )
    thread = f"audit:{user}:{doc.id}"
    out = investigator.ask(thread, question, asker=user, principals=principals)
    yield "flow:evidence", any(e["doc_id"] == doc.id for e in out.get("evidence") or [])
    yield "flow:answer", _mentions(out.get("answer"), doc, question)
    yield "flow:trace", _mentions(out.get("trace"), doc, question)
    owner = next((u for u, p in sorted(users.items()) if can_see(p, doc.acl)), None)
    if owner is not None:
        shared = f"audit-followup:{owner}:{user}:{doc.id}"
        steps: list[dict[str, Any]] = []
        investigator.ask(shared, question, asker=owner, principals=users[owner], progress=steps.append)
        if status_text is not None:  # the owner asked in a channel `user` is in: what did the channel see?
            public = _public_check(store)
            for step in steps:
                line = status_text(step, nameable=public) or ""
                yield "status", any(n in line for n in _status_needles(doc, question, status_text))
        follow = investigator.ask(
            shared, "and what else should I know about it?", asker=user, principals=principals
        )
        yield "followup:evidence", any(e["doc_id"] == doc.id for e in follow.get("evidence") or [])
        yield "followup:answer", _mentions(follow.get("answer"), doc, question)
        yield "followup:trace", _mentions(follow.get("trace"), doc, question)
    yield from theme_probes(
        store, investigator, user, principals, doc, lambda value, asked="": _mentions(value, doc, asked)
    )
    yield "gaps", _gap_log_mentions(gaps, user, doc, question)


def _public_check(store: KnowledgeStore) -> Callable[[str], bool]:
    """What a channel-wide line may name: documents everyone may open."""
    return lambda doc_id: store.document(doc_id, PUBLIC_ONLY) is not None


def _status_needles(doc: _Doc, question: str, status_text: StatusText) -> list[str]:
    """What would betray the document in a status line: its usual needles, and the name the status renderer
    itself gives it ("FIN-9" for "FIN-9: Late delivery ...")."""
    step = {"node": "retrieve", "round": 1, "reading": [doc.title], "reading_ids": [doc.id]}
    shown = (status_text(step) or "").removeprefix("Round 1: reading ").removesuffix("…")
    return [n for n in [*_needles(doc, question), shown] if len(n) > 3 and n not in question]


def _drift_probes(
    store: KnowledgeStore, principals: frozenset[str], doc: _Doc, narrowed: frozenset[str] | None = None
) -> Iterator[tuple[str, bool]]:
    """The document's access is withdrawn from this user at the source (by default: their principals leave
    its ACL); permission sync writes the narrower ACL; nothing of it may reach them any more. The original ACL
    is put back afterwards."""
    narrowed = frozenset(doc.acl - principals) if narrowed is None else narrowed
    store.set_acls({doc.id: narrowed})
    try:
        for query in [doc.title, *doc.names[:2], *doc.phrases[:2]]:
            for mode in ("bm25", "dense", "hybrid"):
                hits = store.search_text(query, principals, 20, mode=mode)
                yield f"drift:search:{mode}", any(h.doc_id == doc.id for h in hits)
        for chunk_id in doc.chunk_ids:
            yield "drift:read", store.read(chunk_id, principals) is not None
        yield "drift:document", store.document(doc.id, principals) is not None
        resolved = store.resolve([doc.title, *doc.names, doc.id], principals)
        yield "drift:aliases", any(doc.id in ids for ids in resolved.values())
        neighbours = store.linked_document_ids(doc.id)[:5]
        if neighbours:
            found = any(n.doc_id == doc.id for n in store.neighbors(neighbours, principals))
            yield (
                "drift:graph",
                found or any(d == doc.id for d, _ in store.expand(neighbours, principals, 50)),
            )
    finally:
        store.set_acls({doc.id: doc.acl})


def _link_probes(people: list[str], link_check: LinkCheck) -> Iterator[tuple[str, bool, str, str]]:
    """A forwarded `/sleuth link` URL: started by `starter`, completed at the provider by `finisher`."""
    for starter in people:
        for finisher in people:
            if finisher != starter:
                yield "link:forwarded", link_check(starter, finisher, True), starter, finisher
        yield "link:unverified", link_check(starter, starter, False), starter, starter
        yield "link:own", not link_check(starter, starter, True), starter, starter  # refusing all is no fix


def _needles(doc: _Doc, question: str) -> list[str]:
    """What would betray the document: its id, its title, its sentences; minus what the asker typed."""
    needles = [doc.id, *(p for p in doc.phrases[:3] if len(p) > 25)]
    if len(doc.title) > 12:
        needles.append(doc.title)
    return [n for n in needles if n not in question]


def _mentions(value: Any, doc: _Doc, question: str) -> bool:
    blob = json.dumps(value, default=str, ensure_ascii=False).replace(json.dumps(question)[1:-1], "")
    return any(n in blob for n in _needles(doc, question))


def _gap_log_mentions(gaps: GapLog, user: str, doc: _Doc, question: str) -> bool:
    """The gap log as this user sees it (their own entries) must not carry the document. What an entry's
    asker typed (its question, here the audit's own probes such as the theme path's) is theirs, not a leak."""
    entries = gaps.entries(viewer=user)
    text = "\n".join(f"{e.what} {e.question}".replace(e.question, "") for e in entries).replace(question, "")
    return any(n in text for n in _needles(doc, question))


def _restricted_docs(store: KnowledgeStore) -> list[_Doc]:
    return _as_probed(store.restricted_documents())


def _public_docs(store: KnowledgeStore) -> list[_Doc]:
    return _as_probed(store.public_documents())


def _as_probed(found: list[RestrictedDocument]) -> list[_Doc]:
    out = []
    for doc in found:
        phrases = [s for _, t in doc.chunks for s in sentences(t) if len(s) > 30][:5]
        out.append(
            _Doc(
                id=doc.id,
                title=doc.title,
                acl=doc.acl,
                names=doc.names,
                chunk_ids=tuple(cid for cid, _ in doc.chunks),
                phrases=tuple(phrases),
            )
        )
    return out
