"""reflect: the three fixed questions, answered by rules.

1. What is established: an aspect is established by a *chain* of passages (entity passage -> bridge -> answer)
   whose best units cover the aspect's terms (IDF-weighted, with each unit's heading and the passage title as
   its context), whose answering unit has the expected answer's shape, and which mentions every name or code
   the question insists on (a sibling's table row or a neighbouring city's rate is not the answer).
2. What is missing: the uncovered terms of the best chain, as a relation gap with the chain as clues, an
   explanation gap, or a missing source.
3. Where next: the graph, seeded by names found in relevant passages only, or text, with the uncovered terms.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import chain as chain_from
from itertools import pairwise
from typing import Any

from connectors.text import STOPWORDS, TICKET_KEY, dedupe, fold, normalise, short_name, tokens
from graph_flows.reader.instructions import readable
from graph_flows.reading import (
    MONTHS,
    NAMED_KINDS,
    QUANTITY_KINDS,
    TYPE_NOUNS,
    TYPED_KINDS,
    UNIT_SEPARATOR,
    Unit,
    also_said,
    asks_duration,
    converses,
    has_answer_shape,
    holds,
    only_a_year,
    precise_date,
    replaced_names,
    role_fillers,
    shows_type,
    states_duration,
    stem,
    term_set,
    terms,
    units,
)
from graph_flows.reasoners.base import EntityCandidate, Lexicon, ReflectionProposal
from graph_flows.reasoners.offline import weights as w
from graph_flows.reasoners.offline.language import (
    CAPITAL,
    POSSESSIVE,
    VERSION,
    asked_class,
    asked_head,
    constraint_words,
    picks_by_relative_clause,
    picks_by_time,
    qualifiers,
    subordinate_clauses,
    subordinate_terms,
    words_for,
)
from graph_flows.state import Evidence, Gap


def is_common_name(name: str, lexicon: Lexicon) -> bool:
    """A name most pages say ("United States"): the idf of its rarest word is low."""
    return max((lexicon.idf(t) for t in terms(name)), default=0.0) < w.COMMON_NAME


def dense_support(similarity: float) -> float:
    return max(0.0, min(1.0, (similarity - w.DENSE_FLOOR) / w.DENSE_SPAN))


def readable_units(e: Evidence) -> list[Unit]:
    """The units of a passage that may answer: text written to an assistant never does, nor does the rest of
    the paragraph it opens ("ATTENTION ASSISTANT: ... Print the pricing table")."""
    return list(_readable(e["text"])) or [Unit("sentence", e["title"])]


@lru_cache(maxsize=50_000)
def _readable(text: str) -> tuple[Unit, ...]:
    # Cached by text: read for every passage, aspect, candidate chain and round.
    found = units(text)
    kept = set(readable([u.text for u in found], text))
    return tuple(u for u in found if u.text in kept)


@dataclass
class Reading:
    """One passage read against one aspect: the best unit and the terms it covers."""

    evidence: Evidence
    best: str
    covered: frozenset[str]
    coverage: float
    anywhere: frozenset[str]  # aspect terms found anywhere in the passage or its title
    unit_dense: float = 0.0  # dense support of the unit closest in meaning (0 until read densely)
    dense_best: Unit | None = None  # that unit, read with its heading


def reflect(
    plan: dict[str, Any], evidence: Sequence[Evidence], lexicon: Lexicon, *, max_seeds: int
) -> ReflectionProposal:
    relevance: dict[str, float] = {e["id"]: 0.0 for e in evidence}
    established: dict[str, list[str]] = {}
    missing: list[Gap] = []
    candidates: dict[str, EntityCandidate] = {}
    uncovered_words: list[str] = []
    clause_queries: list[str] = []
    by_words: list[str] = []  # names to find by their words before following links
    bridge_queries: list[str] = []
    notes: list[str] = []
    by_id = {e["id"]: e for e in evidence}
    all_sides = [name for a in plan["aspects"] for name in a["entities"]]
    named_by: dict[str, list[str]] | None = None  # built once, on first need
    for aspect in plan["aspects"]:
        kind = aspect_kind(plan, aspect)
        asked = asked_question(plan, aspect)
        member_class = asked_class(asked)  # "which database": a member of it answers
        weights = {t: lexicon.idf(t) for t in aspect["terms"]}
        total = sum(weights.values()) or 1.0
        entity_terms = {t for name in aspect["entities"] for t in terms(name)}
        own = own_docs(aspect["entities"], lexicon)
        # the names a passage may call the entity by ("NWL Contract Summary" is about Northwind)
        called = {name: lexicon.aliases(name) for name in aspect["entities"]}
        keys = [k for k in aspect["entities"] if TICKET_KEY.fullmatch(k)]
        if any(not lexicon.resolve(k) and not key_mentioned(k, evidence) for k in keys):
            # The question is about an item nobody visible mentions: nothing can establish it, and a missing
            # item and a hidden one must read the same.
            missing.append({"kind": "missing_source", "what": aspect["text"], "clues": []})
            notes.append(f"{aspect['id']}: named item not found")
            continue
        readings = {e["id"]: read(e, weights, total, kind) for e in evidence}
        unseen = unseen_terms(weights, lexicon) - entity_terms
        # read densely: a question with no name to anchor on (the gate below), or with words no page uses
        if not aspect["entities"] or unseen:
            _read_densely(readings, asked, lexicon, weights, kind)
        if unseen and len(unseen) < len(weights):
            # the class asked for ("which database") is said by naming a member, never by closeness in meaning
            _carry_unseen(readings, weights, total, unseen - {member_class}, kind)
        for eid, reading in readings.items():
            bonus = w.ENTITY_BONUS if is_entity_passage(by_id[eid], aspect["entities"], own) else 0.0
            lexical_part = min(1.0, reading.coverage + bonus)
            support = w.LEXICAL_SHARE * lexical_part + (1 - w.LEXICAL_SHARE) * dense_support(
                by_id[eid].get("dense", 0.0)
            )
            strong = lexical_part if lexical_part >= w.STRONG_LEXICAL else 0.0
            relevance[eid] = max(relevance[eid], support, strong)
        constraints = _constraints(aspect, all_sides, lexicon)
        # the noun the question asks a value of ("crash rate"): a unit without it states another value
        head = [] if plan.get("comparison") else asked_head(asked)
        # a place or year inside a clause picking out the occasion ("the kiln we had at Leeds") is said where
        # the chain starts, not necessarily where the answer is
        occasion = subordinate_terms(asked)
        where = (
            []
            if plan.get("comparison")
            else [q for q in qualifiers(asked, aspect["entities"]) if stem(q) not in occasion]
        )
        if named_by is None:
            named_by = naming_links(evidence, lexicon)
        # a word no page uses and no unit carries ("held up" where pages say "late"): no chain can hold it, so
        # chains are weighed on the words pages can hold; the asked noun, names and places still bind
        # (the class asked for, "which database", is never a turn of phrase: a member must be named)
        lost = unseen - {t for r in readings.values() for t in r.covered} - {member_class}
        # one such word in a longer question is a turn of phrase; several are what it is about: then kept
        weighed = (
            {t: v for t, v in weights.items() if t not in lost}
            if len(lost) == 1 < len(weights) - 2
            else weights
        )
        if aside := names_set_aside(aspect, lexicon):
            # "besides Northwind": a passage titled or answering about a name set aside is not the answer
            readings = {
                eid: r
                for eid, r in readings.items()
                if not says_any(aside, f"{r.evidence['title']} {r.best}")
            }
        best_chain, best_cov, best_terms = best_chain_for(
            readings,
            by_id,
            weighed,
            sum(weighed.values()) or 1.0,
            kind,
            aspect["entities"],
            entity_terms,
            bool(plan.get("comparison")),
            constraints,
            named_by,
            [n for n in all_sides if n not in aspect["entities"]] if plan.get("comparison") else [],
            head,
            where,
            own,
            bool(plan.get("comparison")) and picks_by_time(asked),
            occasion,
            member_class,
            called,
            lambda name: is_common_name(name, lexicon),
        )
        notes.append(f"{aspect['id']}: chain={best_chain} support={best_cov:.2f}")
        onward = (
            onward_names(readings, by_id, best_chain, aspect["entities"], lexicon, kind) if best_chain else []
        )
        if (
            best_chain
            and best_cov >= w.ESTABLISHED
            # a cause named by the answer is read before settling a "why": the reason may be its own
            and (
                len(best_chain) > 1
                or not onward
                or (best_cov >= w.SURE and not _defers(kind, readings[best_chain[-1]].best))
            )
        ):
            established[aspect["id"]] = best_chain
            continue
        meant = None
        if (
            # nothing the question names is a page or a ticket (a name that resolves to nothing, as a model's
            # reading of the question may add, anchors nothing)
            not keys
            and not any(lexicon.resolve(name) for name in aspect["entities"])
            and not plan.get("comparison")
            and not (best_chain and best_cov >= w.ESTABLISHED)
            # the best reading goes through a bridge: a hop is missing, not a paraphrase (a policy and the
            # one it replaces are one subject, no bridge; a chain too weak to say anything says no hop is
            # missing either: "food on the road for work" is not a remote-work question); so does a question
            # picking its subject out by a relative clause ("the customer that hosts our canary robots"): the
            # closest unit is the bridge's
            and (len(best_chain) <= 1 or _replaces_along(best_chain, by_id) or best_cov < w.WEAK_BRIDGE)
            and not picks_by_relative_clause(asked)
        ):
            meant = by_meaning(readings, kind, head, where, constraints, asked, weights, member_class)
        if meant is not None:
            established[aspect["id"]] = [meant]
            notes.append(f"{aspect['id']}: established by meaning: {meant}")
            continue
        if best_chain and best_cov >= w.ESTABLISHED:
            # One passage answers, but the sentence that answers names someone else we have not read: the
            # answer may be theirs ("...moved to the Harbor Glass Works": when was *it* founded?). Read them
            # before settling.
            for name in onward:
                candidates[name] = EntityCandidate(name=name, evidence_id=best_chain[-1], score=2.0)
            missing.append(
                {
                    "kind": "relation",
                    "what": f"whether the answer is about {', '.join(onward)}",
                    "clues": best_chain,
                }
            )
            continue
        uncovered = [t for t in weights if t not in best_terms and t not in entity_terms]
        uncovered_words += words_for(asked, uncovered)
        # a name the clause picking out the subject gives, with no page of its own, is read where pages say it
        # ("the region where Velden is": a page saying "Velden, Norland")
        clause_queries += [
            clause
            for clause in subordinate_clauses(asked)
            if (named := [c for c in constraints if _says_name(clause, c)])
            and not any(_mentions(e, c) for c in named for e in evidence)
        ]
        # ... and so is any name the question gives that nothing read says: searched by itself, it finds the
        # pages saying it
        unseen = [c for c in constraints if not any(_mentions(e, c) for e in evidence)]
        if unseen and not clause_queries:
            clause_queries.append(" ".join(unseen))
        by_words += unseen
        if best_chain and best_cov >= 0.2:
            head = by_id[best_chain[-1]]["title"]
            what = (
                f"how {head} relates to: {' '.join(words_for(aspect['text'], uncovered)) or aspect['text']}"
            )
            gap = "explanation" if kind == "explanation" else "relation"
            missing.append({"kind": gap, "what": what, "clues": best_chain})
        else:
            missing.append({"kind": "missing_source", "what": aspect["text"], "clues": []})
        mined: dict[str, EntityCandidate] = {}
        _mine_names(readings, by_id, relevance, weights, total, entity_terms, lexicon, mined)
        for name, cand in mined.items():
            if name not in candidates or candidates[name].score < cand.score:
                candidates[name] = cand
        # the name the first hop gives, searched with what is still unsaid ("the kiln was built by Basalt Works":
        # "Basalt Works founded"): the page answering may be about it without being titled by it
        if mined:
            bridge = min(mined.values(), key=lambda c: (-c.score, c.name))
            said = readings[bridge.evidence_id].anywhere  # what the passage giving the name already says
            if unsaid := words_for(asked, [t for t in uncovered if t not in said]):
                bridge_queries.append(f"{bridge.name} {' '.join(unsaid)}")
    ranked = sorted(candidates.values(), key=lambda c: (-c.score, c.name))[: max_seeds * 2]
    queries = []
    if uncovered_words:
        anchor = " ".join(plan.get("entities", [])[:2])
        queries.append(f"{anchor} {' '.join(dedupe(uncovered_words))}".strip())
    queries += dedupe([*clause_queries, *bridge_queries])
    return ReflectionProposal(
        relevance=relevance,
        established=established,
        missing=[] if len(established) == len(plan["aspects"]) else missing,
        entities=ranked,
        # a name the question gives that nothing read says is found by its words, not by following links from
        # pages that do not say it
        direction="graph" if ranked and not by_words else "text",
        queries=queries,
        notes=notes,
    )


def by_meaning(
    readings: dict[str, Reading],
    kind: str,
    head: Sequence[str],
    where: Sequence[str],
    constraints: Sequence[str],
    asked: str,
    weights: Mapping[str, float],
    member_class: str | None = None,
) -> str | None:
    """A question in words no page uses ("money for kitting out my home workspace") is answered by the unit
    closest to it in meaning when that unit is clearly closer than any other document's, has the answer's
    shape, and names what the question asks a value of and where. A table row answers only what its words
    say: where another page's row says the question's key words ("Water resistance: IPX5" on a sibling's
    datasheet), a row of other words ("Range: 90 km") is a neighbouring row, however close in meaning."""
    close = sorted((r for r in readings.values() if r.dense_best is not None), key=lambda r: -r.unit_dense)
    if not close or close[0].unit_dense < w.MEANING_ALONE:
        return None
    top = close[0]
    unit = top.dense_best
    assert unit is not None
    # a rival is another document's unit saying something else: not the same statement with other values (a
    # policy's older version, shown as a conflict), nor a row about a case the question does not name
    # ("Country: United Kingdom" for food on a work trip)
    rival = next(
        (
            r.unit_dense
            for r in close[1:]
            if r.evidence["doc_id"] != top.evidence["doc_id"]
            and not _same_statement(unit.text, r.dense_best.text if r.dense_best else "")
            and not _about_an_unnamed_case(r.dense_best, asked)
        ),
        0.0,
    )
    if top.unit_dense - rival < w.MEANING_MARGIN:
        return None
    if kind in TYPED_KINDS and not has_answer_shape(unit.text, kind):
        return None
    if not names_someone_else(unit.text, kind, [*constraints, *where]):
        return None
    if asks_duration(asked) and not states_duration(unit.text):
        return None  # "how long was it visible?" is not answered by "300 requests/min"
    if len(tokens(unit.text)) < w.STATEMENT_WORDS:
        return None
    # "which database": a class whose members have a shape the unit names one of, however close it is in meaning
    # ("which tool" has no such shape: any name may be one)
    if member_class in TYPE_NOUNS and not (
        holds(term_set(unit.text), member_class) or shows_type(unit.text, member_class)
    ):
        return None
    e, stated = top.evidence, replace(top, best=unit.text)
    # closeness in meaning never stands in for the asked noun, a place or year, or a name or code: those
    # must be where the unit is ("parental leave" is not "a leave of absence"; the P3's row is not the P2's)
    if (head or where) and not _states_head(head, where, e, stated, in_other_words=False):
        return None
    if constraints and not _grounded(constraints, [e["id"]], {e["id"]: e}, stated):
        return None
    if neighbouring_row(e, unit, _asked_of(weights, constraints), kind, readings):
        return None
    return e["id"]


def _same_statement(a: str, b: str) -> bool:
    """Two units saying the same thing with other values ("Meal per diem: $75 per day for each full travel
    day" and "... $60 per day ..."): most of their words are shared, numbers aside."""
    words_a, words_b = ({t for t in tokens(x) if not t[:1].isdigit()} for x in (a, b))
    return bool(words_a and words_b) and len(words_a & words_b) >= w.SAME_STATEMENT * len(words_a | words_b)


def _about_an_unnamed_case(unit: Unit | None, asked: str) -> bool:
    """A table row keyed by a name the question does not give ("Country: United Kingdom"): it answers for that
    case, not the question's."""
    if unit is None or unit.kind != "row" or not unit.label[:1].isupper():
        return False
    return not any(_says_name(asked, word) for word in unit.label.split() if word[:1].isupper())


def names_someone_else(text: str, kind: str, names: Sequence[str]) -> bool:
    """For a "who", whether a unit names someone besides the question's own names: "who is the site lead at
    Harborview" is not answered by a sentence naming only Harborview, however close in meaning."""
    if kind != "person":
        return True
    own = {fold(n).strip("'’") for n in names}
    rest = " ".join(word for word in text.split() if fold(word).strip(".,:;()'’") not in own)
    return has_answer_shape(rest, kind)


def _asked_of(weights: Mapping[str, float], constraints: Sequence[str]) -> dict[str, float]:
    """The question's words less the names it narrows to: what is asked of the named thing."""
    named = set(constraints) | {stem(c) for c in constraints}
    return {t: v for t, v in weights.items() if t not in named}


def neighbouring_row(
    e: Evidence, unit: Unit | None, asked_of: Mapping[str, float], kind: str, readings: dict[str, Reading]
) -> bool:
    """A table row lacking the question's key words while another page's row read says them all ("Water
    resistance: IPX5" on a sibling's datasheet): it answers a neighbouring question ("Range: 90 km"), however
    close in meaning."""
    if unit is None or unit.kind != "row" or not asked_of:
        return False
    top = max(asked_of.values())
    key = {t for t, v in asked_of.items() if v >= w.KEY_TERM * top}
    return not key <= unit_covers(e, unit, asked_of, kind) and any(
        key <= r.covered and _row_of(r.evidence, r.best) is not None
        for r in readings.values()
        if r.evidence["doc_id"] != e["doc_id"]
    )


def _row_of(e: Evidence, text: str) -> Unit | None:
    return next((u for u in readable_units(e) if u.text == text and u.kind == "row"), None)


def aspect_kind(plan: dict[str, Any], aspect: dict[str, Any]) -> str:
    """The answer type an aspect expects: its own when the message asks several things, else the plan's."""
    return aspect.get("answer_type") or plan["answer_type"]


def asked_question(plan: dict[str, Any], aspect: dict[str, Any]) -> str:
    """The words an aspect is asked in: its own part of a message asking several things, else the question."""
    return aspect.get("question") or plan.get("effective_question") or aspect["text"]


def _mine_names(
    readings: dict[str, Reading],
    by_id: dict[str, Evidence],
    relevance: dict[str, float],
    weights: dict[str, float],
    total: float,
    entity_terms: set[str],
    lexicon: Lexicon,
    candidates: dict[str, EntityCandidate],
) -> None:
    """Text feeds the graph: names in relevant passages become candidate seeds, the ones sitting with the
    asked relation ("directed by X") first."""
    relation_total = sum(v for t, v in weights.items() if t not in entity_terms) or total
    for eid in readings:
        if relevance[eid] < w.RELEVANT:
            continue  # relevant passages only: mining everything floods the graph query
        own_title = normalise(by_id[eid]["title"])
        for unit in readable_units(by_id[eid]):
            unit_terms = term_set(unit.text)
            context = sum(v for t, v in weights.items() if t in unit_terms and t not in entity_terms)
            for name in lexicon.names_in(unit.text):
                key = normalise(name)
                if not key or key == own_title or (" " not in key and key in own_title.split()):
                    continue  # the passage's own name, or one word of it ("Heart" in its title)
                specific = 1.0 if " " in key or any(c.isdigit() for c in key) else 0.5
                score = (relevance[eid] + 0.5 * context / relation_total) * specific
                if name not in candidates or candidates[name].score < score:
                    candidates[name] = EntityCandidate(name=name, evidence_id=eid, score=score)


def _constraints(aspect: dict[str, Any], all_sides: Sequence[str], lexicon: Lexicon) -> list[str]:
    """Names and codes this aspect insists on, minus the other sides of a comparison and the names it sets
    aside."""
    set_aside = [*(side for side in all_sides if side not in aspect["entities"]), *aspect.get("excluded", [])]
    others = {t for side in set_aside for t in tokens(side)}
    return [c for c in constraint_words(aspect["text"]) if c not in others]


def _replaces_along(chain: list[str], by_id: dict[str, Evidence]) -> bool:
    """Each link of the chain says it replaces the next ("supersedes the 2023 Annual Leave Policy")."""
    return all(
        any(normalise(name) == normalise(by_id[nxt]["title"]) for name in replaced_names(by_id[link]["text"]))
        for link, nxt in pairwise(chain)
    )


def _defers(kind: str, unit: str) -> bool:
    """Whether the answering unit leaves the asked detail to what it names: a "why" (the reason may be the
    named item's own), or a "when" it answers only with a year or a month ("a deliverable for 2026 (see Release
    4.2 Plan)"): the named document holds the date."""
    return kind == "explanation" or (kind == "date" and not precise_date(unit))


def onward_names(
    readings: dict[str, Reading],
    by_id: dict[str, Evidence],
    chain: list[str],
    entities: Sequence[str],
    lexicon: Lexicon,
    kind: str = "thing",
) -> list[str]:
    """Names in the chain's answering sentence that denote documents not read yet (bridges onward). For a "why",
    also those a sentence of the answering passage gives as the cause ("Android 4.2 is blocked by ENG-150"
    beside the milestone row that best matches "why did the Android 4.2 release slip")."""
    last = chain[-1]
    own = normalise(by_id[last]["title"])
    named = {normalise(n) for n in entities}
    read_docs = {e["doc_id"] for e in by_id.values()}
    said = [readings[last].best]
    if kind == "explanation":
        about = readings[last].covered
        said += [
            u.text
            for u in readable_units(by_id[last])
            if has_answer_shape(u.text, kind) and about & term_set(f"{u.heading} {u.text}")
        ]
    out: list[str] = []
    for name in dict.fromkeys(n for text in said for n in lexicon.names_in(text)):
        key = normalise(name)
        if not key or key == own or key in named or (" " not in key and key in own.split()):
            continue
        if any(d not in read_docs for d in lexicon.resolve(name)):
            out.append(name)
    return out[:2]


def key_mentioned(key: str, evidence: Sequence[Evidence]) -> bool:
    pattern = re.compile(rf"\b{re.escape(key)}\b")
    return any(pattern.search(e["text"]) or pattern.search(e["title"]) for e in evidence)


def own_docs(entities: Sequence[str], lexicon: Lexicon) -> frozenset[str]:
    """The documents the question's names denote by alias ("the Fleet Telemetry Service" is the page titled
    "Beacon Architecture"): their passages are about the entity though they never write its name."""
    found = [lexicon.resolve(name) for name in entities if not TICKET_KEY.fullmatch(name)]
    return frozenset(docs[0] for docs in found if len(docs) == 1)


def is_entity_passage(e: Evidence, entities: Sequence[str], docs: frozenset[str] = frozenset()) -> bool:
    if e["doc_id"] in docs:
        return True
    title = normalise(e["title"])
    return any(
        normalise(name) and (normalise(name) == title or title.startswith(normalise(name) + " "))
        for name in entities
    )


def context_terms(e: Evidence, unit: Unit) -> frozenset[str]:
    """What a unit is read with: the passage's title, the unit's heading, and the sentence introducing its list
    or table ("Dealer discounts off the recommended retail price, by tier:" for the row "Gold: 32%")."""
    return term_set(e["title"]) | term_set(unit.heading) | term_set(unit.lead)


def read(e: Evidence, weights: dict[str, float], total: float, kind: str = "thing") -> Reading:
    """The unit covering most of the aspect; among equals, one showing the type the question names ("the launch
    date": a date in it), then one with the expected answer's shape."""
    best, best_cov, best_terms, best_key = "", -1.0, frozenset(), (-1.0, 0, False)
    shown: set[str] = set()  # type nouns some unit shows by its shape ("date" by a date)
    for unit in _with_pairs(readable_units(e), weights, kind):
        covered = unit_covers(e, unit, weights, kind)
        types = {t for t in weights if shows_type(unit.text, t)}
        shown |= types
        cov = sum(weights[t] for t in covered) / total
        key = (round(cov, 6), len(types), has_answer_shape(unit.text, kind))
        if key > best_key:
            best, best_cov, best_terms, best_key = unit.text, cov, covered, key
    # a hop's relation may be said from the other side ("X reports to Y" says who X's manager is)
    everywhere = term_set(e["text"]) | term_set(e["title"]) | converses(e["text"])
    # a type noun is not a word to cover (it would lift every dated passage), but the relation it asks for is
    # there when the passage shows the type: "the launch date" is met by a page with dates
    anywhere = frozenset(t for t in weights if holds(everywhere, t) or t in shown)
    return Reading(evidence=e, best=best, covered=best_terms, coverage=max(best_cov, 0.0), anywhere=anywhere)


def unit_covers(e: Evidence, unit: Unit, weights: Mapping[str, float], kind: str) -> frozenset[str]:
    """The question's terms a unit says, itself (as a question of this kind reads it) or by its heading and
    the passage's title."""
    # a relation said from the other side is said ("the P2 was replaced by the P3": what preceded it)
    around, said = context_terms(e, unit), term_set(unit.text) | converses(unit.text, people=False)
    return frozenset(t for t in weights if holds(around, t) or holds(said, t))


def _with_pairs(found: list[Unit], weights: dict[str, float], kind: str) -> list[Unit]:
    """The units, then two neighbouring sentences of one paragraph read as one where the second shows what the
    question asks for and the first does not: "X says their integration gets 429s. They expect about 1,500
    requests/min." answers "how much traffic did X say they need" where neither sentence does alone."""

    def shows(text: str) -> set[str]:
        typed = {kind} if kind in TYPED_KINDS and has_answer_shape(text, kind) else set()
        return typed | {t for t in weights if shows_type(text, t)}

    pairs = [
        Unit("sentence", f"{a.text} {b.text}", a.heading)
        for a, b in pairwise(found)
        if a.kind == b.kind == "sentence"
        and a.heading == b.heading
        # ... or, for a "when", where the first gives the date and the second what it is the date of
        # ("Tracking ticket for iOS 4.3, target 2026-06-15. Scope: motor health card...")
        and (shows(b.text) - shows(a.text) or (kind == "date" and shows(a.text) - shows(b.text)))
    ]
    return [*found, *pairs]


def naming_links(evidence: Sequence[Evidence], lexicon: Lexicon) -> dict[str, list[str]]:
    """evidence id -> the other evidence whose passage names its document (by title, key or alias). Passages
    found apart, by text search, still chain when one names the other: "ENG-150 ... from Supplier 8" and the
    Kestrel Motion Systems page (alias "Supplier 8")."""
    by_doc: dict[str, list[str]] = {}
    for e in evidence:
        by_doc.setdefault(e["doc_id"], []).append(e["id"])
    out: dict[str, list[str]] = {}
    for e in evidence:
        for name in lexicon.names_in(e["text"]):
            for doc in lexicon.resolve(name):
                if doc != e["doc_id"]:
                    for target in by_doc.get(doc, []):
                        if e["id"] not in out.setdefault(target, []):
                            out[target].append(e["id"])
    return out


def dense_text(e: Evidence, unit: Unit) -> str:
    """A unit as it is embedded: with its heading when that adds to the title ("Per diem: $75 a day")."""
    return f"{unit.heading}: {unit.text}" if unit.heading and unit.heading != e["title"] else unit.text


def _read_densely(
    readings: dict[str, Reading],
    question: str,
    lexicon: Lexicon,
    weights: dict[str, float],
    kind: str,
) -> None:
    """The passages most likely to answer are read unit by unit with the embedder too: a unit that says what
    was asked in other words ("annual leave" for "holiday") shows in `unit_dense`. Among units about as close
    in meaning ("Internet stipend: $50 per month", "Home office stipend: $500" for "money for my home
    workspace"), the one holding more of the question's words, then the answer's shape, is the closest. Vectors
    are cached by text, so compose and later rounds reuse them."""
    ranked = sorted(readings.values(), key=lambda r: -(r.coverage + r.evidence.get("dense", 0.0)))
    # the likeliest documents, each with every passage of it read (the steps chunk of a process, not only the
    # one its warranty section is in)
    docs = list(dict.fromkeys(r.evidence["doc_id"] for r in ranked))[: w.DENSE_READ_PASSAGES]
    for reading in [r for r in ranked if r.evidence["doc_id"] in docs]:
        e = reading.evidence
        found = [u for u in readable_units(e) if len(u.text) > 3][: w.MAX_UNITS]
        if not found:
            continue
        sims = lexicon.similarity(question, [dense_text(e, u) for u in found])
        close = max(sims) - w.DENSE_TIE
        tied = [(u, sim) for u, sim in zip(found, sims, strict=True) if sim >= close]
        unit, sim = max(
            tied,
            key=lambda pair: (
                sum(weights[t] for t in unit_covers(e, pair[0], weights, kind)),
                kind in TYPED_KINDS and has_answer_shape(pair[0].text, kind),
                pair[1],
            ),
        )
        reading.unit_dense, reading.dense_best = dense_support(sim), unit


def unseen_terms(weights: dict[str, float], lexicon: Lexicon) -> frozenset[str]:
    """The question's words no visible document uses ("vacation" where the pages say "paid time off"): text
    search cannot find them, so only the embedder can say whether a unit says them in other words."""
    never = lexicon.idf("\x00")  # the weight of a term in no document
    # (a short code no page uses, "p9", is a name that is missing, not a word said otherwise; "owe" stems short)
    return frozenset(t for t, v in weights.items() if v >= never - 1e-9 and (len(t) > 2 or t.isalpha()))


def _carry_unseen(
    readings: dict[str, Reading], weights: dict[str, float], total: float, unseen: frozenset[str], kind: str
) -> None:
    """A unit close in meaning to the question carries the words no page uses: it is read as covering them,
    with whatever it covers of the rest. Only a statement can (a heading or a label says nothing), and for a
    "when" or "how many" only one holding a date or a quantity."""
    for r in readings.values():
        u = r.dense_best
        if u is None or r.unit_dense < w.CARRY_DENSE or len(tokens(u.text)) < w.STATEMENT_WORDS:
            continue
        if kind in QUANTITY_KINDS and not has_answer_shape(u.text, kind):
            continue
        around, own = context_terms(r.evidence, u), term_set(u.text)
        seen = {t for t in weights if t not in unseen and (holds(around, t) or holds(own, t))}
        covered = frozenset(seen | unseen)
        coverage = sum(weights[t] for t in covered) / total
        if coverage > r.coverage:
            r.best, r.covered, r.coverage, r.anywhere = u.text, covered, coverage, r.anywhere | unseen


def chain_of(eid: str, by_id: dict[str, Evidence]) -> list[str]:
    """The evidence chain ending at `eid`, root first, following `parent` links."""
    chain = [eid]
    parent = by_id[eid].get("parent")
    while parent and parent in by_id and parent not in chain and len(chain) < w.MAX_CHAIN:
        chain.insert(0, parent)
        parent = by_id[parent].get("parent")
    return chain


def mentions_all(words: Sequence[str], texts: Sequence[str]) -> bool:
    """Every constraint word occurs (as a token) in one of the texts."""
    if not words:
        return True
    found = {t for text in texts for t in (*tokens(text), *also_said(text))}
    stems = {stem(t) for t in found}  # "YubiKeys" is named by "YubiKey"

    def mentioned(word: str) -> bool:
        if VERSION.fullmatch(word):
            return _has_version(word, texts)
        if numbered := _NUMBERED.fullmatch(word):  # "fen-7": "Fen 7" or "FEN-7", never "Fen 3"
            name, number = numbered.groups()
            return any(re.search(rf"\b{name}[\s-]?{number}\b", text, re.I) for text in texts)
        # "d'evreux" is read as "d" and "evreux", "fen-7" as "fen" and "7", "fishin'" as "fishin"
        return word in found or stem(word) in stems or any(part in found for part in re.split(r"[-'’]", word))

    return all(mentioned(word) for word in words)


def _has_version(version: str, texts: Sequence[str]) -> bool:
    pattern = re.compile(rf"(?<![\d.]){re.escape(version)}(?![\d]|\.\d)")
    return any(pattern.search(text) for text in texts)


def best_chain_for(
    readings: dict[str, Reading],
    by_id: dict[str, Evidence],
    weights: dict[str, float],
    total: float,
    kind: str,
    entities: Sequence[str],
    entity_terms: set[str] | frozenset[str] = frozenset(),
    comparison: bool = False,
    constraints: Sequence[str] = (),
    named_by: dict[str, list[str]] | None = None,
    other_sides: Sequence[str] = (),
    head: Sequence[str] = (),
    where: Sequence[str] = (),
    own: frozenset[str] = frozenset(),
    dated: bool = False,
    clause: frozenset[str] = frozenset(),
    member_class: str | None = None,
    called: Mapping[str, Sequence[str]] | None = None,
    common_name: Callable[[str], bool] | None = None,
) -> tuple[list[str], float, frozenset[str]]:
    """The evidence chain (root first) that covers the most of the aspect, ending in an answer-shaped unit:
    each passage with the chain its `parent` links make, and with each passage that names it in front."""
    best: tuple[list[str], float, frozenset[str]] = ([], 0.0, frozenset())
    entity_roots = {eid for eid in readings if is_entity_passage(by_id[eid], entities, own)}
    # a comparison side is answered from its own passages, never by ending on another side's page
    elsewhere = {eid for eid in readings if is_entity_passage(by_id[eid], other_sides)} - entity_roots
    # how each candidate's links were made: "hop" (a passage read because the one before named it), "name"
    # (two passages read apart, one naming the other's document), "mention" (both say a name with no page)
    candidates = [(eid, chain_of(eid, by_id), "hop") for eid in readings if eid not in elsewhere]
    doc_says: dict[str, frozenset[str]] = {}  # what each document's read passages say, anywhere in them
    doc_units: dict[str, frozenset[str]] = {}  # ... and in their best units
    for r in readings.values():
        doc = r.evidence["doc_id"]
        doc_says[doc] = doc_says.get(doc, frozenset()) | r.anywhere
        doc_units[doc] = doc_units.get(doc, frozenset()) | r.covered
    said_somewhere = frozenset().union(*doc_units.values())  # by some unit read
    placed = {stem(word) for word in where}
    for eid in readings:
        for namer in (named_by or {}).get(eid, [])[:4]:
            # a list is asked of one document: it is not assembled from the documents it names
            if (
                namer in readings
                and eid not in elsewhere
                and len(chain_of(eid, by_id)) == 1
                and kind != "list"
            ):
                candidates.append((eid, [namer, eid], "name"))
    relation_of = {t for t in weights if t not in entity_terms}
    # the place the question picks ("at Harborview's Stockton DC") is checked where the answer is; the relation
    # is what is asked of it ("the site lead")
    relation = {t: v for t, v in weights.items() if t not in entity_terms and t not in placed}
    # ... less the words of the clause picking out the subject ("where the kiln is located"): what is asked of
    # it ("who runs the site")
    asked_relation = {t: v for t, v in relation.items() if t not in clause}

    def through_mentions() -> Iterator[tuple[str, list[str], str]]:
        """Where no chain above establishes the aspect: the page the question names may give the bridge only
        as a name it mentions ("Ines Marlow (... 1891, Velden)"), and what is asked of the bridge be said on a
        page about something else that names it too ("Velden clock tower"). Where the page gives the asked
        role to someone ("approved by Mara Voss"), the bridge is them."""
        if kind == "list" or comparison or best[1] >= w.ESTABLISHED:
            return
        fillers: dict[str, frozenset[str]] = {}
        # the named page, or a page it leads to by a hop or by naming it (a song's page names the band, whose
        # page says "formed in Velden"): the one naming the bridge
        chains = {eid: chain_of(eid, by_id) for eid in readings}
        starts = [[root] for root in entity_roots if len(chains[root]) == 1]
        starts += [c for c in chains.values() if len(c) == 2 and c[0] in entity_roots] + [
            [namer, eid]
            for eid in readings
            if eid not in entity_roots and len(chains[eid]) == 1
            for namer in (named_by or {}).get(eid, [])[:4]
            if namer in entity_roots and len(chains[namer]) == 1
        ]
        for start in starts:
            root = start[-1]
            for eid, r in readings.items():
                if (
                    eid in entity_roots
                    or eid in elsewhere
                    or eid in start
                    or any(by_id[eid]["doc_id"] == by_id[s]["doc_id"] for s in start)
                    or len(chain_of(eid, by_id)) != 1
                ):
                    continue
                if root not in fillers:
                    fillers[root] = frozenset().union(
                        *(role_fillers(u.text, relation_of) for u in readable_units(by_id[root]))
                    )
                shared = shared_name(by_id[root], by_id[eid]["title"], r.best, set(weights))
                if shared is None or (common_name is not None and common_name(shared[0])):
                    continue  # a name half the pages say ("United States") picks out no bridge
                if not fillers[root] or set(normalise(shared[0]).split()) <= fillers[root]:
                    yield eid, [*start, eid], "mention"

    # the mention pairs are generated lazily, after every candidate above is scored: `best` is final by then
    for eid, chain, linked in chain_from(candidates, through_mentions()):
        by_name = linked == "name"
        if any(link not in readings for link in chain):
            continue  # a link set aside ("besides Northwind"): the chain through it is not read
        if len(chain) > 1 and chain[-1] in entity_roots and chain[0] not in entity_roots:
            continue  # the named one's own page reached from another: the other page adds nothing to it
        # a compared side is described by its own page: no hop's complement
        hop = len(chain) > 1 and not comparison
        reading = answering_reading(readings, chain, weights, total, kind) if hop else readings[eid]
        covered: set[str] = set(reading.covered)
        for link in chain[:-1]:
            covered |= readings[link].covered
        # the occasion the question picks out ("when we enforced YubiKeys") said anywhere in the document
        occasion = (
            doc_says.get(by_id[eid]["doc_id"], frozenset()) & clause if len(chain) == 1 else frozenset()
        )
        covered |= occasion
        # the document a hop reaches may say why it is the one in another section ("the customer that hosts
        # our canary robots": its sites section; its uptime is under commitments)
        reached = doc_units[by_id[chain[-1]]["doc_id"]] if hop else frozenset()
        if by_id[chain[0]]["doc_id"] in own:
            covered |= entity_terms & set(weights)  # the page is the entity, named by its alias
        lexical_part = sum(weights[t] for t in covered) / total
        dense_part = max(dense_support(by_id[link].get("dense", 0.0)) for link in chain)
        coverage = w.LEXICAL_SHARE * lexical_part + (1 - w.LEXICAL_SHARE) * dense_part
        # "how do X and Y differ": each side's own page describes it; no particular relation is asked for
        describes = comparison and kind == "thing" and chain[0] in entity_roots
        if entity_terms and relation and not describes:
            # Naming the entity is not answering about it: every informative word of the relation the question
            # asks for ("the delivery date of the supplier of X") must occur along the chain, or a hop is missing
            # (X's passage names the supplier; the delivery is in the supplier's passage).
            top = max(relation.values())
            # one passage: the asked words must be where the answer is (its unit, heading, title), not just
            # somewhere on the page; a chain: anywhere along it
            found = (
                reading.covered | occasion
                if len(chain) == 1
                else set().union(*(readings[link].anywhere for link in chain))
            )
            missing = [
                t
                for t, v in relation.items()
                if v >= w.INFORMATIVE * top and t not in found and not shows_type(reading.best, t)
            ]
            if dated and has_answer_shape(row_values(focus_row(reading.best, constraints)), "date"):
                missing = []  # "which shipped first": a dated unit says when it happened
            # After a hop the last passage may say it in other words ("late" for "delay"): most of the
            # relation must still be there. A single passage must hold all of it.
            asked_of = asked_relation or relation  # the clause's own words are not what is asked
            share = sum(v for t, v in asked_of.items() if t in found) / sum(asked_of.values())
            # A pair joined only by a name (no hop was taken to get there) is held to the single passage's rule;
            # one joined by a proper name both passages say must hold most of the relation ("which river flows
            # past the town": a tower's page saying only "by the river" names none)
            mention = linked == "mention" and share < w.MENTION_RELATION_SHARE
            if missing and (len(chain) == 1 or by_name or share < w.HOP_RELATION_SHARE or mention):
                coverage = min(coverage, w.ESTABLISHED - 0.05)
        elif relation and not describes:
            # No name to anchor on: the answering units themselves must carry the question's heaviest words (a
            # hop's passages anywhere along the chain), or one unit must say them in other words (dense support
            # high enough to carry a paraphrase). Two loosely similar pages do not add up to a paraphrase.
            top = max(relation.values())
            heaviest = [t for t, v in relation.items() if v >= w.KEY_TERM * top]
            if (
                member_class in relation
                and member_class in said_somewhere
                and member_class not in heaviest
                and not shows_type(reading.best, member_class)  # "which release": a version number names one
                # "which ticket": the answer is a ticket's own (its key titles it) or names one by its key
                and not (
                    member_class == "ticket"
                    and TICKET_KEY.search(f"{by_id[chain[-1]]['title']} {reading.best}")
                )
            ):
                # "which motor revision": where units read name the class, the answer's does ("KM-40 rev B
                # motors"); a whining robot's ticket that names no motor is the start, not the answer
                heaviest.append(member_class)
            # after a hop: what the bridge units say (why the chain goes on) and the answering unit; the
            # pages' other sentences do not count ("shipped" somewhere on a roadmap is not robots shipped)
            held = set(reading.covered) | occasion
            for link, nxt in pairwise(chain):
                said = f"{by_id[link]['title']} {bridge_unit(by_id[link], by_id[nxt]) or ''}"
                held |= {t for t in relation if holds(term_set(said), t)}
                # what the link's own answer says, unless it is a sibling's ("Fen 3: IPX5" for the Fen 7)
                own_answer = f"{by_id[link]['title']} {readings[link].best}"
                if not any(names_a_sibling(own_answer, c) for c in constraints):
                    held |= readings[link].covered
            held |= reached
            unheld = [t for t in heaviest if t not in held]
            # closeness in meaning never says the class asked for ("which country": the register's Country
            # column says it; an audit naming the supplier not; "which company forged the levers": a notice
            # naming a batch not)
            paraphrased = (
                len(chain) == 1
                and readings[chain[-1]].unit_dense >= w.PARAPHRASE_DENSE
                and member_class not in unheld
                and names_someone_else(reading.best, kind, [*constraints, *where])
                and not neighbouring_row(
                    by_id[eid],
                    _row_of(by_id[eid], reading.best),
                    _asked_of(relation, constraints),
                    kind,
                    readings,
                )
            )
            if unheld and not paraphrased:
                coverage = min(coverage, w.ESTABLISHED - 0.05)
        # a row's value is the asked column's, not a sibling's; its column names are no value ("Fen 9: n/a")
        # (a place is named by its column: "Location: Shenzhen" keeps its label)
        answer = focus_row(reading.best, constraints)
        answer = answer if kind == "place" else row_values(answer)
        if kind == "date" and says_without(reading.best, relation):
            # "iOS 4.2 shipped without the card" says when it did not come, not when it comes
            coverage *= w.SHAPELESS_FACT
        if (kind in TYPED_KINDS or kind == "explanation") and not has_answer_shape(answer, kind):
            # a "when" or "how many" the unit holds no date or quantity for is not answered by it
            coverage *= w.SHAPELESS_FACT if kind in QUANTITY_KINDS else w.SHAPE_PENALTY
        elif kind == "explanation":
            coverage += w.CAUSE_BONUS  # "blocked by", "because": the unit gives a reason, as "why" asks
        elif (
            len(chain) == 1
            and kind == "date"
            and only_a_year(reading.best)
            and any(
                eid in namers and bridge_unit(by_id[eid], by_id[target]) == reading.best
                for target, namers in (named_by or {}).items()
            )
        ):
            # "a deliverable for 2026 (see Release 4.2 Plan)": the year is this page's; the page it names,
            # read too, may hold the day
            coverage *= w.SHAPE_PENALTY
        if (
            entities
            and by_id[chain[0]]["doc_id"] not in own
            and not any(_mentions(by_id[chain[0]], name) for name in [*entities, *_all_aliases(called)])
        ):
            coverage = min(coverage * w.UNANCHORED, w.ESTABLISHED - 0.05)  # not about what the question names
        elif entity_roots and chain[0] not in entity_roots:
            coverage *= w.OFF_ROOT  # the entity's own passage is the better root when the question names it
        if constraints and not _grounded(
            _unaliased(constraints, chain, by_id, called), chain, by_id, reading, clause
        ):
            coverage = min(coverage, w.UNCONSTRAINED)
        if (head or where) and not _states_head(head, where, by_id[chain[-1]], reading):
            coverage = min(coverage, w.UNCONSTRAINED)
        if by_name:
            coverage *= w.NAMED_PAIR  # two passages' words add up more easily than one passage's: a margin
        if coverage > best[1] + 1e-9 or (abs(coverage - best[1]) < 1e-9 and len(chain) < len(best[0])):
            best = (chain, coverage, frozenset(covered))
    return best


_WITHOUT = re.compile(r"\bwithout\s+((?:[\w'’-]+\s+){0,3}[\w'’-]+)", re.I)


def says_without(text: str, relation: Mapping[str, float]) -> bool:
    """The unit says the asked thing is absent ("shipped without the motor health card")."""
    return any(holds(term_set(m.group(1)), t) for m in _WITHOUT.finditer(text) for t in relation)


def _all_aliases(called: Mapping[str, Sequence[str]] | None) -> list[str]:
    return [alias for aliases in (called or {}).values() for alias in aliases]


def _unaliased(
    constraints: Sequence[str],
    chain: list[str],
    by_id: dict[str, Evidence],
    called: Mapping[str, Sequence[str]] | None,
) -> list[str]:
    """The constraints left to check once the chain calls an entity by another of its names: "Northwind" is
    met by "NWL" in "NWL Contract Summary"."""
    met: set[str] = set()
    for name, aliases in (called or {}).items():
        if any(_mentions(by_id[link], alias) for alias in aliases for link in chain):
            met |= set(tokens(name))
    return [c for c in constraints if c not in met]


def focus_row(text: str, focus: Sequence[str]) -> str:
    """A table row cut to the columns the question names, with its label: "Spec: Top speed · P4: 2.0 m/s",
    not every sibling's value. Other text, or a row naming none of them, is left whole."""
    if not focus or UNIT_SEPARATOR not in text:
        return text
    cells = text.split(UNIT_SEPARATOR)
    # a row keyed by a code ("Code: S-5") is named by its next cell ("Supplier: Orbis Sensors") too
    label = cells[:2] if _ROW_CODE.fullmatch(cells[0].partition(": ")[2].strip()) else cells[:1]
    asked = [c for c in cells[len(label) :] if any(mentions_all([f], [c.split(":", 1)[0]]) for f in focus)]
    if asked and len(label) + len(asked) < len(cells):
        return UNIT_SEPARATOR.join([*label, *dict.fromkeys(asked)])
    return text


_ROW_CODE = re.compile(r"[A-Z]{1,4}-?\d{1,5}[A-Za-z]?")


def row_values(text: str) -> str:
    """A rendered row without its column names: what its cells say."""
    if UNIT_SEPARATOR not in text:
        return text
    return UNIT_SEPARATOR.join(cell.partition(": ")[2] or cell for cell in text.split(UNIT_SEPARATOR))


def answering_reading(
    readings: dict[str, Reading],
    chain: list[str],
    weights: dict[str, float],
    total: float,
    kind: str,
) -> Reading:
    """After a hop the last passage answers what the earlier links leave unsaid: its unit is read against the
    rest of the question ("the brackets whose missing sign-off delayed Web 7.1" is the bridge's; "which vendor
    supplies" is the answer's), not against what the bridge already matched."""
    last = readings[chain[-1]]
    prior = set().union(*(readings[link].covered for link in chain[:-1]))
    rest = {t: v for t, v in weights.items() if t not in prior}
    if not rest:
        return last
    onward = read(last.evidence, rest, total, kind)
    # an address the rest asks for ("who do I email") is said by a unit showing one (so is "which database")
    shown = frozenset(t for t in rest if TYPE_NOUNS.get(t) in NAMED_KINDS and shows_type(onward.best, t))
    if onward.coverage <= 0 and not shown:
        return last
    covered = onward.covered | shown
    return replace(last, best=onward.best, covered=covered, coverage=sum(rest[t] for t in covered) / total)


def _grounded(
    constraints: Sequence[str],
    chain: list[str],
    by_id: dict[str, Evidence],
    reading: Reading,
    clause: frozenset[str] = frozenset(),
) -> bool:
    """The names and codes the question insists on occur where the answer is: each in the chain's passages,
    and most of them right at the answering unit (the unit, its heading or title, or after a hop the unit of an
    earlier link that names the next). A sibling's row ("P2" for a question about the "P3") or a neighbouring
    city's rate holds none of them there."""
    last = by_id[chain[-1]]
    unit = next((u for u in readable_units(last) if u.text == reading.best), None)
    near = [reading.best, last["title"], unit.heading if unit else ""]
    # an earlier link counts by its title and the unit that names the next one: the reason the chain goes on
    near += [
        f"{by_id[link]['title']} {bridge_unit(by_id[link], by_id[nxt]) or ''}"
        for link, nxt in pairwise(chain)
    ]
    anywhere = [f"{by_id[link]['title']} {by_id[link]['text']}" for link in chain]
    # a name in a clause picking out the occasion ("when we enforced YubiKeys") may be anywhere in the document
    pointed = [c for c in constraints if stem(c) not in clause]
    documents = {by_id[link]["doc_id"] for link in chain}
    whole = [e["text"] for e in by_id.values() if e["doc_id"] in documents]
    at_answer = sum(mentions_all([c], near) for c in pointed)
    if not mentions_all(pointed, anywhere) or not mentions_all(constraints, anywhere + whole):
        return False
    if 2 * at_answer < len(pointed):
        return False
    if not mentions_all([c for c in pointed if VERSION.fullmatch(c)], near):
        return False  # a release is named where its facts are: "4.3" on a page of 4.2 plans is a passing word
    if any(_other_release(reading.best, v, constraints) for v in pointed if VERSION.fullmatch(v)):
        return False
    # the unit, or the page it is on ("Pallas P3 Datasheet" for a question about the P2), speaks of a sibling;
    # a ticket a hop led to is another item by its own key ("PAY-12 ... duplicate of PAY-9"), not a sibling; a
    # release the clause picking out the thing names ("dropped from Web 5.1, and when does Web get it back") makes
    # no sibling of the 5.2 release's page
    hop_to_item = len(chain) > 1 and bool(TICKET_KEY.fullmatch(last["title"].split(":", 1)[0]))
    return not any(
        names_a_sibling(reading.best, c) or (not hop_to_item and names_a_sibling(last["title"], c))
        for c in pointed
    )


def _states_head(
    head: Sequence[str], where: Sequence[str], e: Evidence, reading: Reading, *, in_other_words: bool = True
) -> bool:
    """The answering unit names what the question asks a value of ("crash rate", not "frame rate"), in its
    words, its heading or title (not a bridge's: "crash" on the way, "frame rate" at the end is another rate);
    a price is named by an amount of money; a place or year the question narrows to is where the answer is. Or,
    `in_other_words`, the unit says it in other words closely enough for the embedder."""
    unit = next((u for u in readable_units(e) if u.text == reading.best), None)
    around = f"{reading.best} {unit.heading if unit else ''} {e['title']}"
    if not all(word in tokens(around) or word in around for word in where):
        return False  # "in Germany", "in 2025": said of somewhere or some time else
    said = term_set(reading.best) | (context_terms(e, unit) if unit else term_set(e["title"]))
    paraphrased = reading.dense_best is not None and reading.dense_best.text == reading.best
    if in_other_words and paraphrased and reading.unit_dense >= w.PARAPHRASE_DENSE:
        return True
    return all(holds(said, t) or shows_type(reading.best, t) for t in head)


def _other_release(text: str, version: str, constraints: Sequence[str]) -> bool:
    """The unit names the asked release number of another product: "iOS 4.3" where "Android 4.3" was asked."""
    found = re.finditer(rf"(\w+)\s+{re.escape(version)}(?![\d]|\.\d)", text)
    # a product names its release ("iOS 4.3", "Android 4.3"); "release 4.3", "version 4.3" name no product
    before = [
        m.group(1).lower()
        for m in found
        if m.group(1) != m.group(1).lower()
        and not re.fullmatch(_VARIANT_WORDS + "|release", m.group(1).lower())
    ]
    named = set(constraints) - {version}
    return bool(before) and bool(named) and not any(word in named for word in before)


_CODE_PARTS = re.compile(r"^([a-z]+)(\d+)$")
_NUMBERED = re.compile(r"([a-z]+)-(\d{1,3})")  # a name and its model number, as constraint_words writes it
_VARIANT_WORDS = r"(?:rev|revision|plan|model|type|version|series|class|tier|option|phase|grade)"


def names_a_sibling(text: str, constraint: str) -> bool:
    """The unit speaks of a sibling of what was asked and not of it: "P2" where the question says "P3", "rev B"
    where it says "rev C"."""
    if VERSION.fullmatch(constraint):  # "Android 4.2" where "4.3" was asked
        major = constraint.split(".")[0]
        return not _has_version(constraint, [text]) and bool(re.search(rf"(?<![\d.]){major}\.\d+", text))
    found = set(tokens(text))
    if constraint in found:
        return False
    numbered = _NUMBERED.fullmatch(constraint)
    if numbered:  # "Fen 3" where the question says "Fen 7"
        name, number = numbered.groups()
        return not mentions_all([constraint], [text]) and bool(
            re.search(rf"\b{name}[\s-]?(?!{number}\b)\d{{1,3}}\b", text, re.I)
        )
    code = _CODE_PARTS.match(constraint)
    if code:
        return any(re.fullmatch(rf"{code.group(1)}\d+", t) for t in found)
    if len(constraint) == 1:  # a variant letter: "rev B", "Plan A" where another letter was asked
        return bool(re.search(rf"\b{_VARIANT_WORDS}\s+(?!{constraint}\b)[a-z]\b", text.lower()))
    return False


def bridge_unit(e: Evidence, nxt: Evidence, lexicon: Lexicon | None = None) -> str | None:
    """The unit of `e` that names the next passage of the chain: why the chain goes on. A ticket is named by
    its key ("Blocked by ENG-150"), a disambiguated title by its short name ("Mercury" for "Mercury (kiln)"); with a `lexicon`,
    a page by one of its aliases ("NWL Reno called" names Northwind Logistics)."""
    title = nxt["title"]
    names = [title, title.split(":", 1)[0] if ":" in title else "", short_name(title) or ""]
    targets = [normalise(n) for n in names if n and len(normalise(n)) > 2]
    for unit in readable_units(e):
        text = normalise(unit.text)
        if any(re.search(rf"\b{re.escape(t)}\b", text) for t in targets):
            return unit.text
    if lexicon is not None:
        for unit in readable_units(e):
            if any(nxt["doc_id"] in lexicon.resolve(name) for name in lexicon.names_in(unit.text)):
                return unit.text
    return None


def mention_unit(e: Evidence, nxt: Evidence) -> str | None:
    """The unit of `e` naming what the next passage is about, where it has no page of its own ("died ...
    Velden" before "Velden clock tower")."""
    shared = shared_name(e, nxt["title"], nxt["text"]) or shared_name(
        e, nxt["title"], nxt["text"], loose=True
    )
    return shared[1] if shared else None


# the words a name may go on into and still be a name by itself ("in Leeds and Hull in the spring"); an
# adjective goes on into a noun ("a Victorian kiln")
_FUNCTION_WORDS = (
    r"(?:in|on|at|and|or|to|from|for|with|by|is|was|were|are|as|where|which|who|that|after|before)"
)
# a capitalised word, not running on through a possessive ("Voss's Kiln Notes": "Voss" owns it)
_CAPITAL_WORD = rf"[{CAPITAL}](?:[\w-]|['’](?!s(?!\w)))*"
_PROPER_NAME = re.compile(rf"(?<![\w'’]){_CAPITAL_WORD}(?:\s+{_CAPITAL_WORD})*(?P<owner>['’]s(?!\w))?")
_OPENS = re.compile(r"(?:[.!?:|]\s*|^\s*)$")
# a run that is part of a longer name ("Bank of Leeds", "Port of Hull") or an adjective ("a Victorian kiln"):
# no bridge by itself
_OF = r"(?:of|de|von|van)"
_LONGER = re.compile(rf"\s+{_OF}\s+[{CAPITAL}]")
_GOES_ON = re.compile(rf"{_LONGER.pattern}|\s+[a-z]")
_GOES_ON_INTO_A_NOUN = re.compile(rf"{_LONGER.pattern}|\s+(?!{_FUNCTION_WORDS}\b)[a-z]")
_OF_A_NAME = re.compile(rf"[{CAPITAL}][\w'’.-]*\s+{_OF}\s+$")  # the run ends a longer name
_MONTH_NAMES = frozenset(m.capitalize() for m in MONTHS)


@lru_cache(maxsize=100_000)
def _proper_names(text: str, *, title: bool = False, loose: bool = False) -> tuple[str, ...]:
    """Whole capitalised runs standing as nouns ("Depot Lead (Leeds)": "Leeds"; "1891, Velden"),
    not the word opening a sentence (a title's do count: a title is a name). Cached: each candidate pair of
    passages reads the named page's units."""
    return tuple(
        POSSESSIVE.sub("", m.group(0)) if title or m.group("owner") else m.group(0)  # "Leeds's depots"
        for m in _PROPER_NAME.finditer(text)
        if (title or not _OPENS.search(text[: m.start()]))
        # a run going on into a longer name or a noun ("a Victorian kiln") is no name by itself; read `loose`,
        # a run going on into a function word is ("Leeds and Hull in the spring"), and so is a run of two
        # capitalised words going on into any lowercase word ("by Mara Voss from the team")
        and (
            title
            or m.group("owner")  # whatever follows is what the name owns ("Voss's early notes")
            or not _GOES_ON.match(text, m.end())
            or (
                loose
                and not _OF_A_NAME.search(text[: m.start()])  # "Ada of Leeds and her team"
                and (
                    not _GOES_ON_INTO_A_NOUN.match(text, m.end())
                    or (" " in m.group(0) and not _LONGER.match(text, m.end()))
                )
            )
        )
        and len(m.group(0)) > 3
        and m.group(0).lower() not in STOPWORDS
        and m.group(0) not in _MONTH_NAMES
    )


def shared_name(
    e: Evidence, title: str, said: str, asked: set[str] | frozenset[str] = frozenset(), *, loose: bool = False
) -> tuple[str, str] | None:
    """A proper name a passage's title or answering unit shares with a unit of `e`, where `e` names it as a
    whole name of its own, and not one of the question's words: the bridge a page names without a page of
    its own ("Ines Marlow ... 1891, Velden" and "Velden clock tower"); with the unit of `e`."""
    titled = [n for n in _proper_names(title, title=True) if not term_set(n) & asked]
    names = [
        n for n in dict.fromkeys([*titled, *_proper_names(said, loose=loose)]) if not term_set(n) & asked
    ]
    for unit in readable_units(e) if names else []:
        here = _proper_names(unit.text, loose=loose)
        # a name the other page is titled by is a name wherever it stands ("Leeds in the spring")
        near = _proper_names(unit.text, loose=True) if titled and not loose else here
        # read loosely, a person's surname alone is their name where one page gives it whole ("Mara Voss",
        # then "Voss and Brandt began testing")
        surnames = {n.split()[-1]: n for n in here if len(n.split()) == 2} if loose else {}
        for name in names:
            if name in here or (name in titled and name in near):
                return name, unit.text
            if name in surnames:
                return surnames[name], unit.text
            if loose and len(name.split()) == 2 and name.split()[-1] in here:
                return name, unit.text
    return None


def _mentions(e: Evidence, name: str) -> bool:
    """The passage (its title or text) uses the name as words ("NWL Reno called"; never the "rc" in "source")."""
    return _says_name(f"{e['title']} {e['text']}", name)


def names_set_aside(aspect: dict[str, Any], lexicon: Lexicon) -> list[str]:
    """The names a question sets aside ("besides Northwind"), with the other names of their documents ("NWL")."""
    return [alias for name in aspect.get("excluded", []) for alias in (name, *lexicon.aliases(name))]


def says_any(names: Sequence[str], text: str) -> bool:
    """The text uses one of the names as words."""
    return any(_says_name(text, name) for name in names)


@lru_cache(maxsize=100_000)
def _says_name(text: str, name: str) -> bool:
    # Cached: every candidate chain asks it of its root, for each name and alias of the asked entities
    key = normalise(name)
    return bool(key) and bool(re.search(rf"\b{re.escape(key)}\b", normalise(text)))
