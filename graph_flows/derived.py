"""Derived text: wording Sleuth built from documents keeps the ids of the documents it was built from.

A follow-up made whole ("who is the board sponsor of it?" -> "... of FIN-9") carries a name an earlier answer
read in a passage; a theme's label is made of its chunks' words. Such text is stored with those documents' ids
(and with the people whose questions it reuses, so `/sleuth forget` can take it back), and `shown` is the one
rule every view of it applies: the text only to a viewer who may open every one of those documents, otherwise
what the asker typed, or, with nothing typed to show, a count ("a question about 1 document you cannot open").

`derivation` decides what a turn's plan was derived from: the earlier turn it rewrites, the names that turn's
answer stated (each kept with the passage that stated it), and, failing closed, every document that answer
read when the rewrite holds words neither question typed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from connectors.text import normalise
from graph_flows.reading import terms

CanOpen = Callable[[str], bool]  # doc id -> may the viewer open it


@dataclass(frozen=True)
class Derived:
    """A piece of text as stored: the text, the documents it came from, and what the asker typed instead."""

    text: str
    docs: tuple[str, ...] = ()
    typed: str = ""


@dataclass(frozen=True)
class Derivation:
    docs: tuple[str, ...] = ()
    askers: tuple[str, ...] = ()  # whose questions the wording reuses


def shown(derived: Derived, can_open: CanOpen) -> str:
    """The text a viewer may read: the derived text when they may open every document it came from; else
    what the asker typed; else how many documents they cannot open."""
    hidden = [doc for doc in dict.fromkeys(derived.docs) if not can_open(doc)]
    if not hidden:
        return derived.text
    if derived.typed.strip():
        return derived.typed
    return cannot_open(len(hidden))


def cannot_open(count: int) -> str:
    return f"a question about {count} document{'s' if count != 1 else ''} you cannot open"


def derivation(
    typed: str,
    effective: str,
    previous: Mapping[str, Any] | None,
    doc_of: Mapping[str, str],
) -> Derivation:
    """What a turn's wording (`effective`, the question as answered) was built from besides what its asker
    typed. `previous` is the turn it rewrites (a TurnRecord as this asker's history holds it), `doc_of` maps
    the thread's evidence ids to their documents."""
    if previous is None or _said(effective) <= _said(typed):
        return Derivation()
    docs = list(previous.get("derived_from") or [])
    askers = [*(previous.get("derived_askers") or []), str(previous.get("asker") or "")]
    typed_norm, effective_norm = f" {normalise(typed)} ", f" {normalise(effective)} "
    explained = _said(typed) | _said(str(previous.get("question") or ""))
    explained |= _said(str(previous.get("effective_question") or ""))
    for subject in previous.get("subjects") or []:
        name = normalise(subject["name"])
        if name and f" {name} " in effective_norm and f" {name} " not in typed_norm:
            docs += [doc_of[subject["evidence_id"]]] if subject["evidence_id"] in doc_of else []
            explained |= _said(subject["name"])
    if _said(effective) - explained:  # words from nowhere typed: from what that answer read (fail closed)
        docs += [doc_of[e] for e in previous.get("evidence_ids") or [] if e in doc_of]
    return Derivation(docs=_unique(docs), askers=_unique(a for a in askers if a))


def _said(text: str) -> set[str]:
    return set(terms(text)) | {t for t in normalise(text).split() if any(c.isdigit() for c in t)}


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def docs_of(items: Sequence[Any]) -> tuple[str, ...]:
    """Document ids from a stored JSON list (anything else reads as none)."""
    return tuple(str(i) for i in items) if isinstance(items, list | tuple) else ()
