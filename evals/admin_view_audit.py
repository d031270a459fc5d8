"""Admin-view probes for `sleuth audit permissions`: wording derived from a document reaches no admin who
cannot open it, in any view of the gap log or of another person's trace.

Per restricted document, a person who may open it asks for it in words that name neither its key nor its whole
title ("which ticket tracks <its summary>?", "which page says <its first words>?"), then asks three pronoun follow-ups in
the same thread ("who is the board sponsor of it?", ...), which the flow makes whole with the name the answer
stated. Only the follow-ups are logged (to a gap log of their own per follow-up, in memory). Then, for every
person who may not open the document, read as an admin with that person's permissions: `sleuth gaps` (text and
JSON), the dated notes, App Home, `/sleuth gaps`, the weekly digest and the "Show trace" modal of each
follow-up. A view leaks when it holds the document's id, title or sentences, or a name the answer stated from
its passages that no document the reader may open explains. `views` is the bot's own renderers
(`bot.admin_views.AdminViews`), passed in by the CLI: evals never import the bot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

from connectors.knowledge.acl import can_see
from connectors.knowledge.store import KnowledgeStore
from connectors.text import TICKET_KEY
from graph_flows.config import FlowConfig
from graph_flows.flow import Investigator, build_flow
from graph_flows.gaplog import GapLog
from graph_flows.reasoners.base import Reasoner

FOLLOW_UPS = ("who is the board sponsor of it?", "and who owns it?", "what about its budget?")
ASKED_WORDS = 4  # a page is asked for by twice this many words of its own text


class AdminViews(Protocol):
    """The bot's admin views as text, read with one person's permissions (bot.admin_views.AdminViews)."""

    def gap_views(self, gaps: GapLog, principals: frozenset[str]) -> dict[str, str]: ...

    def trace_view(self, question: str, trace: list[dict[str, Any]], principals: frozenset[str]) -> str: ...


class _Doc(Protocol):
    id: str
    title: str
    acl: frozenset[str]
    phrases: tuple[str, ...]


@dataclass(frozen=True)
class FollowUp:
    """One pronoun follow-up in an owner's thread: what was typed, its gap log and its trace."""

    typed: str
    gaps: GapLog
    trace: list[dict[str, Any]]
    derived: bool  # its wording was made whole from the document (the plan says so)


@dataclass(frozen=True)
class Thread:
    doc_id: str
    follow_ups: tuple[FollowUp, ...]
    stated: tuple[str, ...]  # names the first answer stated from the document's passages


def admin_view_probes(
    store: KnowledgeStore,
    reasoner: Reasoner,
    settings: FlowConfig,
    users: Mapping[str, frozenset[str]],
    docs: list[Any],
    views: AdminViews,
    needles: Callable[[Any], list[str]],
) -> Iterator[tuple[str, bool, str, str]]:
    """(path, leaked, viewer, doc id) per probe; `needles(doc)` is what would betray the document."""
    for doc in docs:
        owner = next((u for u, p in sorted(users.items()) if can_see(p, doc.acl)), None)
        readers = [(u, p) for u, p in sorted(users.items()) if not can_see(p, doc.acl)]
        if owner is None or not readers:
            continue
        thread = owner_thread(store, reasoner, settings, owner, users[owner], doc)
        for reader, principals in readers:
            secret = [*needles(doc), *(n for n in thread.stated if not store.resolve([n], principals).get(n))]
            for follow in thread.follow_ups:
                for view, text in views.gap_views(follow.gaps, principals).items():
                    yield f"admin:{view}", _holds(text, secret, follow.typed), reader, doc.id
                shown = views.trace_view(follow.typed, follow.trace, principals)
                yield "admin:trace", _holds(shown, secret, follow.typed), reader, doc.id


def owner_thread(
    store: KnowledgeStore,
    reasoner: Reasoner,
    settings: FlowConfig,
    owner: str,
    principals: frozenset[str],
    doc: _Doc,
) -> Thread:
    """The owner's question and follow-ups, each follow-up logging to a gap log of its own."""
    saver = InMemorySaver()
    first = Investigator(build_flow(store, reasoner, settings, checkpointer=saver), settings)
    thread = f"audit-admin:{owner}:{id(saver):x}"  # a Slack-like id: the views show it
    first.ask(thread, first_question(doc), asker=owner, principals=principals)
    state = first.history(thread)
    origin = {e["id"]: e["doc_id"] for e in state.get("evidence") or []}
    stated = tuple(
        s["name"]
        for turn in state.get("turns") or []
        for s in turn.get("subjects") or []
        if origin.get(s["evidence_id"]) == doc.id and len(s["name"]) >= 3
    )
    follow_ups = []
    for typed in FOLLOW_UPS:
        gaps = GapLog(
            create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
        )
        flow = build_flow(store, reasoner, settings, checkpointer=saver, gap_log=gaps)
        out = Investigator(flow, settings).ask(thread, typed, asker=owner, principals=principals)
        trace = list(out.get("trace") or [])
        derived = any(
            doc.id in (step.get("derived_from") or []) for step in trace if step.get("node") == "plan"
        )
        follow_ups.append(FollowUp(typed, gaps, trace, derived))
    return Thread(doc.id, tuple(follow_ups), stated)


def first_question(doc: _Doc) -> str:
    """A question asking *for* the document, naming neither its key nor its whole title: a ticket by its
    summary ("which ticket tracks late delivery credit from Kestrel?"), a page by words of its own text."""
    key = TICKET_KEY.match(doc.title)
    if key:
        return f"which ticket tracks {doc.title[key.end() :].strip(' :-')}?"
    words = " ".join(doc.phrases[:1]).split()[: ASKED_WORDS * 2]
    return f"which page says {' '.join(words).rstrip('.,;:')}?"


def _holds(text: str, secret: list[str], typed: str) -> bool:
    """Whether the view's text (as the reader reads it) holds anything secret that the reader did not type."""
    return any(n and n not in typed and n in text for n in secret)
