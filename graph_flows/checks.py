"""The answer checks the program does, whatever reasoner composed the answer: citations must point at evidence
read in this thread by this asker (others are dropped), conflicting statements of one fact are reported side by
side with their dates, and confidence is computed from coverage and support, not claimed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import Any

from connectors.text import comment_body, normalise, tokens
from graph_flows.reader.instructions import addresses_assistant
from graph_flows.reading import (
    MONTHS,
    corrected,
    holds,
    says_it_replaces,
    sentences,
    stem,
    term_set,
    value_kind,
    values,
)
from graph_flows.reasoners.base import ComposedSentence
from graph_flows.state import Evidence

CONFLICT_OVERLAP = 0.6  # share of content terms two sentences must have to be about the same fact
CONFLICT_SHARED = 3  # and at least this many terms in common
SUCCESSOR_OVERLAP = 0.3  # a policy and the one that replaces it: the same rule reworded shares less
SUCCESSOR_SHARED = 2
ASKED_SHARE = 0.75  # or both statements hold this share of the question's words: the asked fact, twice


def verify_citations(
    composed: Sequence[ComposedSentence], evidence: dict[str, Evidence]
) -> tuple[list[ComposedSentence], list[dict[str, Any]]]:
    """Keeps sentences whose every citation is known evidence (and that cite at least one) and that are not
    written to an assistant: whichever reasoner composed it, a page's instruction is never stated."""
    kept: list[ComposedSentence] = []
    dropped: list[dict[str, Any]] = []
    for sentence in composed:
        bad = [c for c in sentence.cites if c not in evidence]
        if not sentence.cites or bad:
            dropped.append({"sentence": sentence.text[:120], "bad_citations": bad or ["none"]})
            continue
        if addresses_assistant(sentence.text):
            dropped.append({"sentence": sentence.text[:120], "written_to_an_assistant": True})
            continue
        kept.append(sentence)
    return kept, dropped


def find_conflicts(
    cited: Sequence[ComposedSentence],
    pool: Sequence[Evidence],
    asked: Iterable[str] = (),
    chains: Iterable[Sequence[str]] = (),
) -> list[dict[str, Any]]:
    """Statements of the same fact with different values (amounts, numbers, dates) in different documents.

    Each conflict lists its sides newest first (by updated date, then version) so the answer can say which is
    likely current; nothing is resolved by searching until one side wins. Documents cited for different
    aspects (the two sides of a comparison) describe different things: their values never conflict.
    """
    conflicts: list[dict[str, Any]] = []
    by_key: dict[tuple[str, str, str], tuple[tuple[bool, int], dict[str, Any]]] = {}
    asked_terms = frozenset(t for t in asked if not any(ch.isdigit() for ch in t))

    def states_the_asked(title: str, text: str) -> bool:
        """The question's own words are where the value is: its title and sentence (a spec row, a comment)."""
        if "\n" in text:
            return False  # a list states many facts, none of them the asked one alone
        held = term_set(f"{title} {text}")
        return bool(asked_terms) and sum(holds(held, t) for t in asked_terms) >= ASKED_SHARE * len(
            asked_terms
        )

    by_id = {e["id"]: e for e in pool}
    successors = successor_of(pool)
    # the links of one chain state different facts (a film's director, then the director's birth): never one
    # fact twice; but a page naming the page it replaces is no hop to another fact (it restates the old one's)
    linked = [
        docs
        for chain in chains
        for hop in _hops(chain, by_id)
        if not _replaces(docs := {by_id[eid]["doc_id"] for eid in hop}, successors)
    ]
    stated = {by_id[c]["doc_id"] for s in cited for c in s.cites if c in by_id}
    aspects_of: dict[str, set[str]] = {}
    for s in cited:
        for c in s.cites:
            if c in by_id and s.aspect:
                aspects_of.setdefault(by_id[c]["doc_id"], set()).add(s.aspect)
    seen_pairs: set[tuple[str, str]] = set()
    for sentence in cited:
        own = by_id.get(sentence.cites[0]) if sentence.cites else None
        if own is None or len({by_id[c]["doc_id"] for c in sentence.cites if c in by_id}) > 1:
            continue  # a line setting documents side by side states none of their facts alone
        own_terms = _fact_terms(sentence.text)
        own_values = values(comment_body(sentence.text))
        if not own_values or len(own_terms) < 2:
            continue
        for other in pool:
            if other["doc_id"] == own["doc_id"] or any(
                {own["doc_id"], other["doc_id"]} <= docs for docs in linked
            ):
                continue
            theirs = aspects_of.get(other["doc_id"])
            if theirs and sentence.aspect and sentence.aspect not in theirs:
                continue
            # one document replacing the other: the same rule, reworded, is still the same fact
            related = (
                successors.get(own["doc_id"]) == other["doc_id"]
                or successors.get(other["doc_id"]) == own["doc_id"]
            )
            need, shared_min = (
                (SUCCESSOR_OVERLAP, SUCCESSOR_SHARED) if related else (CONFLICT_OVERLAP, CONFLICT_SHARED)
            )
            found = _contradiction(
                sentence.text, own_terms, own_values, own, other, (need, shared_min), states_the_asked
            )
            if found is None:
                continue
            candidate, shared, own_said, other_said = found
            pair = tuple(sorted((own["doc_id"], other["doc_id"])))
            if pair in seen_pairs:
                continue
            seen_pairs.add(pair)  # type: ignore[arg-type]
            sides = sorted(
                [_side(own, sentence.text, own_said), _side(other, candidate, other_said)],
                key=lambda s: (s["updated_at"], _version_key(s["version"])),
                reverse=True,
            )
            for side in sides:
                replaced_by = successors.get(by_id[side["evidence_id"]]["doc_id"])
                if replaced_by in {own["doc_id"], other["doc_id"]}:
                    side["outdated"] = True
                    sides = [s for s in sides if s is not side] + [side]  # the replaced side goes last
                    break
            older = (by_id[sides[-1]["evidence_id"]]["doc_id"], sides[-1]["value"])
            shown = next(
                (
                    known
                    for known in conflicts
                    if any(
                        (by_id[s["evidence_id"]]["doc_id"], s["value"]) == older for s in known["sides"][1:]
                    )
                ),
                None,
            )
            conflict = {"about": _words_of(sentence.text, shared), "sides": sides}
            # one statement against one other value is one disagreement, shown by a statement of that value
            # the answer cites, else by the closest one
            key = (own["id"], sentence.text, _side(other, candidate, other_said)["value"])
            rank = (other["doc_id"] in stated, len(conflict["about"].split()))
            if key in by_key:
                twin_rank, twin = by_key[key]
                if rank > twin_rank and twin in conflicts:
                    conflicts[conflicts.index(twin)] = conflict
                    by_key[key] = (rank, conflict)
                continue
            by_key[key] = (rank, conflict)
            if shown is None:
                conflicts.append(conflict)
            elif _shows_better(sides, shown["sides"], stated, by_id):
                # that older statement is shown once, against the newest statement that contradicts it (of
                # those giving that value, one the answer itself cites)
                conflicts[conflicts.index(shown)] = conflict
    return conflicts


def _contradiction(
    text: str,
    own_terms: frozenset[str],
    own_values: set[str],
    own: Evidence,
    other: Evidence,
    bar: tuple[float, int],
    states_the_asked: Callable[[str, str], bool],
) -> tuple[str, frozenset[str], set[str], set[str]] | None:
    """The statement of `other` that states the fact `text` states with another value, the best-matching one
    (a table's "Audit logs" row, not the first row that shares "logs" and "retention"): (statement, shared
    terms, own values, its values), or None."""
    need, shared_min = bar  # share and count of terms two statements have in common to be about one fact
    fixed = corrected(text)
    best: tuple[tuple[bool, float, int], tuple[str, frozenset[str], set[str], set[str]]] | None = None
    for candidate in sentences(other["text"]):
        other_terms = _fact_terms(candidate)
        shared = own_terms & other_terms
        overlap = len(shared) / max(1, min(len(own_terms), len(other_terms)))
        other_values = values(comment_body(candidate))
        kinds = {value_kind(v) for v in own_values} & {value_kind(v) for v in other_values}
        # "95 km, not the 110 km on the datasheet": a statement correcting the very value the other states,
        # either way round ("now 14 weeks, not 10 weeks" under a page that says 10 weeks)
        corrects = bool(fixed & other_values or corrected(candidate) & own_values) and len(shared) >= 1
        same_fact = (
            (overlap >= need and len(shared) >= shared_min)
            or corrects
            or (states_the_asked(own["title"], text) and states_the_asked(other["title"], candidate))
        )
        if not same_fact or not kinds:
            continue
        # the same value stated twice agrees, unless one says it is wrong ("8.5 hours, not 10 hours")
        own_said, other_said = own_values - fixed, other_values - corrected(candidate)
        if other_values & own_values and not (own_said and other_said and not own_said & other_said):
            continue
        if about_siblings(f"{own['title']} {text}", f"{other['title']} {candidate}"):
            continue  # the P2's payload and the P3's are two facts, not one fact twice
        key = (corrects, overlap, len(shared))
        if best is None or key > best[0]:
            best = (key, (candidate, shared, own_said, other_said))
    return best[1] if best else None


def _newest_key(sides: Sequence[dict[str, Any]]) -> tuple[str, tuple[int, str]]:
    return (sides[0]["updated_at"], _version_key(sides[0]["version"]))


def _replaces(docs: set[str], successors: dict[str, str]) -> bool:
    """Whether one of two documents says it replaces the other."""
    return len(docs) == 2 and any(successors.get(d) in docs for d in docs)


def _shows_better(
    sides: Sequence[dict[str, Any]],
    shown: Sequence[dict[str, Any]],
    stated: set[str],
    by_id: dict[str, Evidence],
) -> bool:
    """Whether a conflict's newest side claims the older statement better than the shown one's: the newer
    statement wins; but two newer statements of one value are one claim, and the one the answer cites is the
    one to show it against (not a newer passage the answer never cites)."""

    def cited(side: dict[str, Any]) -> bool:
        e = by_id.get(side["evidence_id"])
        return e is not None and e["doc_id"] in stated

    if sides[0]["value"] == shown[0]["value"] and cited(sides[0]) != cited(shown[0]):
        return cited(sides[0])
    return _newest_key(sides) > _newest_key(shown)


def successor_of(pool: Sequence[Evidence]) -> dict[str, str]:
    """old doc id -> the doc id of the passage that says it replaces it ("This policy supersedes the 2024 Travel
    Expense Policy"): the older one is outdated whatever the dates say."""
    titles = {normalise(e["title"]): e["doc_id"] for e in pool if len(normalise(e["title"])) > 3}
    out: dict[str, str] = {}
    for e in pool:
        for sentence in sentences(e["text"]):
            if not says_it_replaces(sentence):
                continue
            said = normalise(sentence)
            for title, doc in titles.items():
                if doc != e["doc_id"] and re.search(rf"\b{re.escape(title)}\b", said):
                    out.setdefault(doc, e["doc_id"])
    return out


def confidence(
    *, aspects: int, established: int, support: Sequence[float], conflicts: int, cited: int
) -> float:
    """Coverage times support, lowered by unresolved conflicts. 0 when nothing is cited."""
    if aspects == 0 or cited == 0:
        return 0.0
    coverage = established / aspects
    mean_support = sum(support) / len(support) if support else 0.0
    score = coverage * (0.45 + 0.55 * mean_support) * (0.85 if conflicts else 1.0)
    return round(max(0.0, min(1.0, score)), 2)


def _words_of(text: str, stems: frozenset[str]) -> str:
    """The words of a sentence whose stems two sources share, as written: what the disagreement is about."""
    words: list[str] = []
    for token in tokens(text):
        if stem(token) in stems and token not in words:
            words.append(token)
    return " ".join(words[:6])


# A model's name: a code ("P3", "X100") or a capitalised word and a small number ("Fen 7"), not a date.
_MODEL_NAME = re.compile(r"\b([A-Za-z]{1,3})(\d{1,4})\b|\b([A-Z][a-z]{2,})\s(\d{1,3})\b(?![.,:/]\d)")


def model_names(text: str) -> set[tuple[str, str]]:
    """(family, number) of each model name in a text: "Pallas P3" -> ("p", "3"), "Fen 7 Cargo" -> ("fen", "7")."""
    out = set()
    for m in _MODEL_NAME.finditer(text):
        family, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if family.lower() not in MONTHS:
            out.add((family.lower(), number))
    return out


def about_siblings(a: str, b: str) -> bool:
    """Whether two texts speak of different members of one family of models: "Pallas P2 ... 300 kg" and "P3:
    600 kg" share no model but the family, so their values are two facts, not one fact stated twice. Texts that
    share a model may be about the same thing."""
    names_a, names_b = model_names(a), model_names(b)
    return not names_a & names_b and bool({f for f, _ in names_a} & {f for f, _ in names_b})


def _fact_terms(text: str) -> frozenset[str]:
    return frozenset(t for t in term_set(text) if not any(ch.isdigit() for ch in t))


def _side(e: Evidence, sentence: str, found: set[str]) -> dict[str, Any]:
    return {
        "evidence_id": e["id"],
        "title": e["title"],
        "updated_at": e["updated_at"][:10],
        "version": e["version"],
        "value": ", ".join(sorted(found)),
        "sentence": sentence,
    }


def _version_key(version: str) -> tuple[int, str]:
    return (int(version), "") if version.isdigit() else (0, version)


def _hops(chain: Sequence[str], by_id: dict[str, Evidence]) -> list[tuple[str, str]]:
    """The links of a chain that are hops: the next passage was reached from this one or is named by it. A
    model may list independent passages stating one fact as its "chain"; those are sides, not links."""
    out = []
    for a, b in pairwise(chain):
        if a in by_id and b in by_id:
            first, then = by_id[a], by_id[b]
            named = normalise(then["title"]) in normalise(first["text"]) or then.get("parent") == a
            if named or first.get("parent") == b:
                out.append((a, b))
    return out
