"""The live access check: before an answer is posted, every document it shows is asked of its source with the
asker's own account, and the answer is composed again without those they can no longer open.

Permission sync rewrites ACLs on a schedule, so between two syncs a revoked permission would still let the
asker's answer show the document. The bot hands the flow an `AccessCheck` for the asker (it holds their linked
tokens; the flow never sees them); the answer nodes call `confirm_shown`, which composes, asks the check about
the documents the answer shows, and composes again from the evidence of the others until everything shown is
confirmed. Verdicts:

    open         the source says the asker may open it now
    synced       the source has no per-user check (a folder): its synced ACL stands
    gone         the source refuses it (403/404): dropped without a word ("not found" = "not yours")
    unconfirmed  the check could not complete (timeout, 5xx, no linked account): dropped and counted, so the
                 answer says "couldn't confirm access to 1 source: not shown"

Without a check set for the turn (the CLI, the audit's own flow, tests) nothing changes.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from connectors.live_access import GONE, OPEN, SYNCED, UNCONFIRMED
from graph_flows.state import ThreadState

log = logging.getLogger(__name__)

__all__ = [
    "GONE",
    "OPEN",
    "SYNCED",
    "UNCONFIRMED",
    "AccessCheck",
    "confirm_shown",
    "live_access",
    "showable",
]
SHOWABLE = frozenset({OPEN, SYNCED})
MAX_COMPOSITIONS = 4  # the last one reads only confirmed documents, so it needs no further check


class AccessCheck(Protocol):
    """Verdicts for document ids, asked of their sources as one asker; ids it leaves out count as unconfirmed."""

    def __call__(self, doc_ids: Sequence[str]) -> Mapping[str, str]: ...


_CHECK: contextvars.ContextVar[AccessCheck | None] = contextvars.ContextVar(
    "sleuth_live_access", default=None
)


@contextmanager
def live_access(check: AccessCheck | None) -> Iterator[None]:
    """The check the answer nodes of this turn use (LangGraph runs nodes in copies of the caller's context)."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


Compose = Callable[[ThreadState], dict[str, Any]]


def confirm_shown(state: ThreadState, compose: Compose) -> tuple[dict[str, Any], ThreadState]:
    """The answer node's output for `state`, composed again without every shown document the asker may not
    open now; and the state it was composed from (the gap log reads its evidence)."""
    check = _CHECK.get()
    out = compose(state)
    if check is None:
        return out, state
    verdicts: dict[str, str] = {}
    used, compositions = state, 1
    while True:
        shown = shown_docs(out["answer"])
        _ask(check, shown, verdicts)
        refused = {d for d, v in verdicts.items() if v not in SHOWABLE}
        if not refused.intersection(shown):
            break
        compositions += 1
        if compositions < MAX_COMPOSITIONS:
            used = without_docs(state, lambda d, out_=frozenset(refused): d not in out_)
        else:  # the last try: only what was confirmed, so what it shows needs no further check
            confirmed = frozenset(d for d, v in verdicts.items() if v in SHOWABLE)
            used = without_docs(state, confirmed.__contains__)
        out = compose(used)
        if compositions >= MAX_COMPOSITIONS:
            break
    return _noted(out, verdicts, compositions), used


def showable(doc_ids: Sequence[str], verdicts: dict[str, str]) -> bool:
    """Whether a draft may show these documents now: no check set for the turn, or every one confirmed
    (`verdicts` is the caller's cache, so each document is asked about once)."""
    check = _CHECK.get()
    if check is None:
        return True
    _ask(check, doc_ids, verdicts)
    return all(verdicts[d] in SHOWABLE for d in doc_ids)


def _ask(check: AccessCheck, doc_ids: Sequence[str], verdicts: dict[str, str]) -> None:
    """The check's verdict on each document not in `verdicts` yet, added there (one call for all of them)."""
    todo = [d for d in dict.fromkeys(doc_ids) if d not in verdicts]
    if todo:
        said = check(todo)
        verdicts.update({d: said.get(d, UNCONFIRMED) for d in todo})


def confirmed(node: Compose) -> Compose:
    """An answer node whose output went through `confirm_shown` (the theme path's; `answer` calls it itself)."""

    def confirmed_node(state: ThreadState) -> dict[str, Any]:
        return confirm_shown(state, node)[0]

    return confirmed_node


def _noted(out: dict[str, Any], verdicts: Mapping[str, str], compositions: int) -> dict[str, Any]:
    """The answer says how many sources it could not confirm; the trace counts the check (never names)."""
    answer = dict(out["answer"])
    gone = sum(v == GONE for v in verdicts.values())
    unconfirmed = sum(v == UNCONFIRMED for v in verdicts.values())
    if unconfirmed:
        answer["unconfirmed"] = unconfirmed
    confirmed = {d for d, v in verdicts.items() if v in SHOWABLE}
    summary = {
        "checked": len(verdicts),
        "gone": gone,
        "unconfirmed": unconfirmed,
        "compositions": compositions,
    }
    trace = [_scrubbed(step, confirmed) for step in out.get("trace", [])]
    if trace and trace[-1].get("node") == "answer":
        trace[-1] = {**trace[-1], "access": summary}
    log.info("access checked", extra=summary)
    return {**out, "answer": answer, "trace": trace}


def shown_docs(answer: Mapping[str, Any]) -> list[str]:
    """Every document an answer shows: its numbered sources (cited sentences, conflict sides, gap clues and the
    closest passages all cite through them)."""
    return list(dict.fromkeys(str(s["doc_id"]) for s in answer.get("sources") or []))


def without_docs(state: ThreadState, keep: Callable[[str], bool]) -> ThreadState:
    """The state as if retrieval had never found the documents `keep` refuses: their evidence gone, an aspect
    whose chain ran through one of them no longer established, gap clues from them dropped."""
    evidence = [e for e in state["evidence"] if keep(e["doc_id"])]
    kept = {e["id"] for e in evidence}
    established = {
        aspect: chain for aspect, chain in state["established"].items() if all(eid in kept for eid in chain)
    }
    gaps = [{**g, "clues": [c for c in g["clues"] if c in kept]} for g in state["gaps"]]
    return {**state, "evidence": evidence, "established": established, "gaps": gaps}  # type: ignore[typeddict-item]


def _scrubbed(step: Mapping[str, Any], confirmed: set[str]) -> dict[str, Any]:
    """A trace step naming only documents the check confirmed (the asker's own trace is shown to them; a
    document read but not shown was never asked about, so it is not named either)."""
    ids, titles = step.get("reading_ids"), step.get("reading")
    if not isinstance(ids, list) or not isinstance(titles, list):
        return dict(step)
    pairs = [(i, t) for i, t in zip(ids, titles, strict=False) if i in confirmed]
    return {**step, "reading_ids": [i for i, _ in pairs], "reading": [t for _, t in pairs]}
