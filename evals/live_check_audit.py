"""Permission-audit probes of the live access check (`graph_flows.access`): for each user and each restricted
document they may open per the last sync, the source is made to say they no longer may (`gone`), or not to
answer (`unconfirmed`), and the investigation is asked about the document as that user. Nothing of it may reach
the answer (its text, sources, sentences, closest passages, conflicts), the asker's own trace, or a follow-up
in the same thread; an unconfirmed document must be counted in the answer when it was going to be shown.
A sentence of the document that another document the answer shows says too is that document's, not a leak.

The check stands in for the source here (the operator's sources are not asked: the audit must not depend on
their tokens); tests/integration/connectors/test_live_access.py asks real ones over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from connectors.knowledge.acl import can_see
from graph_flows.access import GONE, OPEN, UNCONFIRMED, AccessCheck
from graph_flows.flow import Investigator

SHOWN_KEYS = ("text", "sources", "sentences", "related", "conflicts", "cited_docs")
FOLLOW_UP = "and what else should I know about it?"


class ProbedDoc(Protocol):
    """What the audit knows of a restricted document (evals.audit._Doc)."""

    id: str
    title: str
    acl: frozenset[str]
    phrases: tuple[str, ...]


class Texts(Protocol):
    """The store's read side the probes need: a document's chunks as one principal set may read them."""

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[Any]: ...


Probe = tuple[str, bool, str, str]  # path, leaked, user, document id


def refusing(doc_id: str, verdict: str) -> AccessCheck:
    """The source's answer once access to `doc_id` is gone (or unanswerable); everything else still opens."""

    def check(doc_ids: Sequence[str]) -> Mapping[str, str]:
        return {d: verdict if d == doc_id else OPEN for d in doc_ids}

    return check


def live_check_probes(
    investigator: Investigator,
    store: Texts,
    users: Mapping[str, frozenset[str]],
    docs: Sequence[ProbedDoc],
    *,
    check_for: Callable[[str, str], AccessCheck | None] = refusing,
) -> Iterator[Probe]:
    """`check_for(doc id, verdict)`: the check a revoked document meets (the audit's test passes one that
    checks nothing, the behaviour before the live check, and expects leaks)."""
    for user, principals in sorted(users.items()):
        for doc in (d for d in docs if can_see(principals, d.acl)):
            question = f"What does {doc.title} say?"
            for verdict in (GONE, UNCONFIRMED):
                thread = f"audit-live:{verdict}:{user}:{doc.id}"
                check = check_for(doc.id, verdict)
                out = investigator.ask(thread, question, asker=user, principals=principals, access=check)
                answer = out.get("answer") or {}
                leaked = _shows(store, principals, answer, doc, question)
                yield f"live:{verdict}:answer", leaked, user, doc.id
                yield f"live:{verdict}:trace", _in_readings(out.get("trace") or [], doc.id), user, doc.id
                if verdict == UNCONFIRMED:
                    said = int(answer.get("unconfirmed") or 0) > 0
                    yield "live:unconfirmed:told", not said and _checked(out), user, doc.id
                follow = investigator.ask(thread, FOLLOW_UP, asker=user, principals=principals, access=check)
                typed = f"{question}\n{FOLLOW_UP}"  # the thread's questions: the asker typed the title
                leaked = _shows(store, principals, follow.get("answer") or {}, doc, typed)
                yield f"live:{verdict}:followup", leaked, user, doc.id


def _shows(
    store: Texts, principals: frozenset[str], answer: Mapping[str, Any], doc: ProbedDoc, typed: str
) -> bool:
    """The answer names the document, or says what only it says: its title or a sentence of it that neither
    the asker typed nor another document the answer shows (and the asker may open) says too."""
    shown = json.dumps({k: answer.get(k) for k in SHOWN_KEYS}, ensure_ascii=False)
    if doc.id in shown:
        return True
    others = " ".join(
        h.text
        for s in answer.get("sources") or []
        if s["doc_id"] != doc.id
        for h in store.chunks_of(s["doc_id"], principals)
    )
    needles = [doc.title, *(p for p in doc.phrases[:3] if len(p) > 25)]
    return any(n in shown for n in needles if len(n) > 12 and n not in typed and n not in others)


def _in_readings(trace: list[dict[str, Any]], doc_id: str) -> bool:
    """The asker's own trace names what each round read: a refused document must not be among them."""
    return any(doc_id in (step.get("reading_ids") or []) for step in trace)


def _checked(out: Mapping[str, Any]) -> bool:
    """The check refused something this answer was going to show (else there is nothing to tell)."""
    trace = out.get("trace") or []
    access = trace[-1].get("access") if trace else None
    return bool(access and access.get("unconfirmed"))
