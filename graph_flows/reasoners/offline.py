"""The offline rule reasoner: the embedded default and every benchmark's baseline. No model, no network.

- plan: entities (known names, ticket keys, quoted phrases), comparison sides (one aspect per side), the
  expected answer type, follow-ups read against the thread's previous question.
- reflect: the three fixed questions. (1) What is established: an aspect is established by a *chain* of passages
  (entity passage -> bridge -> answer) whose best sentences cover the aspect's terms, weighted by IDF, and whose
  last sentence has the expected answer's shape. (2) What is missing: the uncovered terms of the best chain,
  as a relation gap with the chain as clues, or an explanation gap, or a missing source. (3) Where next: the
  graph, seeded by names found in relevant passages only, or text, with the uncovered terms.
- compose: extractive; the supporting sentence of each chain link, each with its citation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from connectors.text import STOPWORDS, TICKET_KEY, normalise, short_name, tokens
from graph_flows.reading import answer_type, has_answer_shape, sentences, stem, term_set, terms
from graph_flows.reasoners.base import (
    ComposedSentence,
    Composition,
    EntityCandidate,
    Lexicon,
    PlanProposal,
    ReflectionProposal,
)
from graph_flows.state import Aspect, Evidence, Gap, TurnRecord

_FOLLOWUP_START = re.compile(
    r"^(and|also|what about|how about|same for|and for|and in|and the|what of|then)\b", re.I
)
_PRONOUN = re.compile(r"\b(it|its|that|this|they|them|those|these|he|she|his|her)\b", re.I)
_COMPARISON = re.compile(r"\b(or|vs\.?|versus|between|compare[sd]?|comparison|both|differ\w*|same)\b", re.I)
_QUOTED = re.compile(r"[\"“]([^\"”]{3,80})[\"”]")
_CAPITALISED = re.compile(r"(?<!^)(?<![.?!]\s)\b([A-Z][\w'-]*(?:\s+(?:of|the|and|de|von|van|[A-Z][\w'-]*))*)")

RELEVANT = 0.3  # support at which a passage counts as relevant to an aspect
ESTABLISHED = 0.55  # support at which a chain establishes an aspect
LEXICAL_SHARE = 0.6  # support = 0.6 * IDF-weighted term coverage + 0.4 * dense similarity (rescaled)
DENSE_FLOOR, DENSE_SPAN = 0.2, 0.45  # MiniLM cosine: ~0.2 unrelated, ~0.65 and above on topic


RELATION_WEIGHT = 0.5  # the gate applies when a relation term weighs at least half the rarest name term
HOP_RELATION_SHARE = 0.0  # after a hop, the chain must still hold this share of the relation's weight
INFORMATIVE = 0.5  # relation words weighing at least half the heaviest one must all be covered
SURE = 0.8  # support at which one passage settles an aspect even if its answer names someone else
RELATED_MIN = 0.45
MAX_SENTENCES = 16  # sentences of one passage read densely (a chunk holds about ten)  # a closest-passage sentence must score at least this to be shown


def dense_support(similarity: float) -> float:
    return max(0.0, min(1.0, (similarity - DENSE_FLOOR) / DENSE_SPAN))


MAX_CHAIN = 4


@dataclass
class _Reading:
    """One passage read against one aspect: the best sentence and the terms it covers."""

    evidence: Evidence
    best: str
    covered: frozenset[str]
    coverage: float
    anywhere: frozenset[str]  # aspect terms found anywhere in the passage or its title


class OfflineReasoner:
    name = "offline"

    def __init__(self, *, max_seeds: int = 4) -> None:
        self.max_seeds = max_seeds

    # ------------------------------------------------------------------ plan
    def plan(self, question: str, *, history: Sequence[TurnRecord], lexicon: Lexicon) -> PlanProposal:
        q = " ".join(question.split())
        effective, followup_of = q, None
        if history and _is_followup(q, lexicon):
            previous = history[-1]
            effective = f"{q} {_carry_over(previous['question'], q, lexicon)}"
            followup_of = previous["turn"]
        keys = TICKET_KEY.findall(effective)
        quoted = _QUOTED.findall(q)
        names = lexicon.names_in(effective)
        entities = _dedupe([*keys, *quoted, *names])
        kind = answer_type(q)
        if kind == "thing" and followup_of is not None and history:
            kind = answer_type(history[-1]["question"])
        sides = _comparison_sides(q, entities)
        aspects: list[Aspect]
        if sides:
            side_terms = {t for side in sides for t in terms(side)}
            operators = set(terms(" ".join(_COMPARISON.findall(q))))  # "differ", "compare": how, not what
            relation = [t for t in terms(effective) if t not in side_terms and t not in operators]
            aspects = [
                {
                    "id": f"a{i + 1}",
                    "text": f"{side} {' '.join(_words_for(effective, relation))}".strip(),
                    "terms": _dedupe([*terms(side), *relation]),
                    "entities": [side],
                }
                for i, side in enumerate(sides)
            ]
        else:
            aspects = [
                {"id": "a1", "text": effective, "terms": _dedupe(terms(effective)), "entities": entities}
            ]
        queries = [effective] + ([a["text"] for a in aspects] if sides else [])
        return PlanProposal(
            aspects=aspects,
            entities=entities,
            answer_type=kind,
            comparison=bool(sides),
            direction="text",
            queries=queries,
            followup_of=followup_of,
            effective_question=effective,
        )

    # ------------------------------------------------------------------ reflect
    def reflect(
        self, plan: dict[str, Any], evidence: Sequence[Evidence], *, new_ids: Sequence[str], lexicon: Lexicon
    ) -> ReflectionProposal:
        relevance: dict[str, float] = {e["id"]: 0.0 for e in evidence}
        established: dict[str, list[str]] = {}
        missing: list[Gap] = []
        candidates: dict[str, EntityCandidate] = {}
        uncovered_words: list[str] = []
        notes: list[str] = []
        by_id = {e["id"]: e for e in evidence}
        for aspect in plan["aspects"]:
            weights = {t: lexicon.idf(t) for t in aspect["terms"]}
            total = sum(weights.values()) or 1.0
            entity_terms = {t for name in aspect["entities"] for t in terms(name)}
            keys = [k for k in aspect["entities"] if TICKET_KEY.fullmatch(k)]
            if any(not lexicon.resolve(k) and not _key_mentioned(k, evidence) for k in keys):
                # The question is about an item nobody visible mentions: nothing can establish it, and a
                # missing item and a hidden one must read the same.
                missing.append({"kind": "missing_source", "what": aspect["text"], "clues": []})
                notes.append(f"{aspect['id']}: named item not found")
                continue
            readings = {e["id"]: _read(e, weights, total) for e in evidence}
            for eid, reading in readings.items():
                bonus = 0.25 if _is_entity_passage(by_id[eid], aspect["entities"]) else 0.0
                lexical_part = min(1.0, reading.coverage + bonus)
                support = LEXICAL_SHARE * lexical_part + (1 - LEXICAL_SHARE) * dense_support(
                    by_id[eid].get("dense", 0.0)
                )
                relevance[eid] = max(relevance[eid], support, lexical_part if lexical_part >= 0.6 else 0.0)
            best_chain, best_cov, best_terms = _best_chain(
                readings,
                by_id,
                weights,
                total,
                plan["answer_type"],
                aspect["entities"],
                entity_terms,
                bool(plan.get("comparison")),
            )
            notes.append(f"{aspect['id']}: chain={best_chain} support={best_cov:.2f}")
            onward = (
                _onward_names(readings, by_id, best_chain, aspect["entities"], lexicon) if best_chain else []
            )
            if (
                best_chain
                and best_cov >= ESTABLISHED
                and (len(best_chain) > 1 or best_cov >= SURE or not onward)
            ):
                established[aspect["id"]] = best_chain
                continue
            if best_chain and best_cov >= ESTABLISHED:
                # One passage answers, but the sentence that answers names someone else we have not read: the
                # answer may be theirs ("...resigned to lobby for the Boston Beer Company": when was *it*
                # founded?). Read them before settling.
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
            uncovered_words += _words_for(plan.get("effective_question", aspect["text"]), uncovered)
            if best_chain and best_cov >= 0.2:
                head = by_id[best_chain[-1]]["title"]
                what = f"how {head} relates to: {' '.join(_words_for(aspect['text'], uncovered)) or aspect['text']}"
                kind = "explanation" if plan["answer_type"] == "explanation" else "relation"
                missing.append({"kind": kind, "what": what, "clues": best_chain})
            else:
                missing.append({"kind": "missing_source", "what": aspect["text"], "clues": []})
            for eid in readings:
                if relevance[eid] < RELEVANT:
                    continue  # text feeds the graph from relevant passages only
                own_title = normalise(by_id[eid]["title"])
                relation_total = sum(w for t, w in weights.items() if t not in entity_terms) or total
                for sentence in sentences(by_id[eid]["text"]):
                    sentence_terms = term_set(sentence)
                    # the name that sits with the asked relation ("directed by X") is the bridge
                    context = sum(
                        w for t, w in weights.items() if t in sentence_terms and t not in entity_terms
                    )
                    for name in lexicon.names_in(sentence):
                        key = normalise(name)
                        if not key or key == own_title or (" " not in key and key in own_title.split()):
                            continue  # the passage's own name, or one word of it ("Heart" in its title)
                        specific = 1.0 if " " in key or any(c.isdigit() for c in key) else 0.5
                        score = (relevance[eid] + 0.5 * context / relation_total) * specific
                        if name not in candidates or candidates[name].score < score:
                            candidates[name] = EntityCandidate(name=name, evidence_id=eid, score=score)
        ranked = sorted(candidates.values(), key=lambda c: (-c.score, c.name))[: self.max_seeds * 2]
        direction = "graph" if ranked else "text"
        queries = []
        if uncovered_words:
            anchor = " ".join(plan.get("entities", [])[:2])
            queries.append(f"{anchor} {' '.join(_dedupe(uncovered_words))}".strip())
        return ReflectionProposal(
            relevance=relevance,
            established=established,
            missing=[] if len(established) == len(plan["aspects"]) else missing,
            entities=ranked,
            direction=direction,
            queries=queries,
            notes=notes,
        )

    # ------------------------------------------------------------------ compose
    def compose(
        self,
        plan: dict[str, Any],
        evidence: Sequence[Evidence],
        established: dict[str, list[str]],
        *,
        lexicon: Lexicon,
    ) -> Composition:
        by_id = {e["id"]: e for e in evidence}
        question = plan.get("effective_question", "")
        out: list[ComposedSentence] = []
        seen: set[str] = set()
        for aspect in plan["aspects"]:
            chain = established.get(aspect["id"], [])
            weights = {t: lexicon.idf(t) for t in aspect["terms"]}
            for i, eid in enumerate(chain):
                e = by_id.get(eid)
                if e is None:
                    continue
                nxt = by_id.get(chain[i + 1]) if i + 1 < len(chain) else None
                bridge = _bridge_sentence(e, nxt) if nxt else None
                # a bridge sentence is found by name; only the answering passage needs the dense read
                picked = (
                    [bridge]
                    if bridge
                    else _best_sentences(e, weights, plan["answer_type"], question, lexicon)
                )
                for sentence in [p for p in picked if p][: 2 if nxt is None else 1]:
                    key = normalise(sentence)
                    if key and key not in seen:
                        seen.add(key)
                        out.append(ComposedSentence(text=sentence, cites=[eid], aspect=aspect["id"]))
        related: list[ComposedSentence] = []
        unknown_item = any(
            TICKET_KEY.fullmatch(k) and not lexicon.resolve(k) and not _key_mentioned(k, evidence)
            for k in plan.get("entities", [])
        )
        if not out and not unknown_item:
            weights = {t: lexicon.idf(t) for a in plan["aspects"] for t in a["terms"]}
            ranked = sorted(evidence, key=lambda e: -e.get("relevance", 0.0))[:3]
            scored = [
                (*_best_sentence(e, weights, plan["answer_type"], question, lexicon), e)
                for e in ranked
                if e.get("relevance", 0.0) >= RELEVANT
            ]
            for sentence, score, e in sorted(scored, key=lambda item: -item[1])[:3]:
                if score >= RELATED_MIN and normalise(sentence) not in seen:
                    seen.add(normalise(sentence))
                    related.append(ComposedSentence(text=sentence, cites=[e["id"]]))
        return Composition(sentences=out, answered=bool(out), related=related)


# ---------------------------------------------------------------------- helpers
def _is_followup(question: str, lexicon: Lexicon) -> bool:
    if _FOLLOWUP_START.search(question):
        return True
    content = terms(question)
    if len(content) <= 2:
        return True
    return bool(_PRONOUN.search(question)) and not lexicon.names_in(question) and len(content) <= 5


def _carry_over(previous: str, followup: str, lexicon: Lexicon) -> str:
    """The previous question as the follow-up changes it: "What is on the iOS release checklist?" followed by
    "and for the Android app?" becomes "What is on the Android Release Checklist?" when that title exists.
    A name of the previous question is swapped for a visible name that differs by one word the follow-up
    brings; without such a name the previous question is carried over unchanged."""
    fresh = [t for t in tokens(followup) if t not in set(tokens(previous)) and t not in STOPWORDS]
    for name in lexicon.names_in(previous):
        words = tokens(name)
        for i in range(len(words)):
            for word in fresh:
                candidate = " ".join([*words[:i], word, *words[i + 1 :]])
                if lexicon.resolve(candidate):
                    replaced = re.sub(re.escape(name), candidate, previous, flags=re.IGNORECASE)
                    return re.sub(rf"\b{re.escape(words[i])}\b", word, replaced, flags=re.IGNORECASE)
    return previous


_JOINER = re.compile(
    r"^\W*(?:\w+\s+){0,2}?(?:or|and|vs\.?|versus|&|compared (?:to|with)|differs? from|than)\W*(?:the\s+)?$",
    re.I,
)


def _comparison_sides(question: str, entities: list[str]) -> list[str]:
    """Two or more named things joined by "or", "and", "vs" ("X or Y", "between X and Y", "both X and Y"),
    in a question that compares: each becomes an aspect. A name that merely contains a comma ("Leland, North
    Carolina") or an "or" elsewhere in the sentence is not a comparison."""
    if not _COMPARISON.search(question):
        return []
    spans = _name_spans(question, entities)
    if len(spans) < 2:
        spans = _name_spans(
            question, [m.strip() for m in _CAPITALISED.findall(question) if len(m.strip()) > 2]
        )
    sides: list[str] = []
    for (_s1, e1, n1), (s2, _e2, n2) in pairwise(spans):
        if _JOINER.match(question[e1:s2]):
            sides += [n for n in (n1, n2) if n not in sides]
    return sides[:4] if len(sides) >= 2 else []


def _name_spans(question: str, names: Sequence[str]) -> list[tuple[int, int, str]]:
    """Where each name occurs in the question (case-insensitive), in order, without overlaps."""
    spans: list[tuple[int, int, str]] = []
    for name in sorted(set(names), key=len, reverse=True):
        m = re.search(re.escape(name), question, re.I)
        if m and not any(m.start() < e and s < m.end() for s, e, _ in spans):
            spans.append((m.start(), m.end(), name))
    return sorted(spans)


def _onward_names(
    readings: dict[str, _Reading],
    by_id: dict[str, Evidence],
    chain: list[str],
    entities: Sequence[str],
    lexicon: Lexicon,
) -> list[str]:
    """Names in the chain's answering sentence that denote documents not read yet (bridges onward)."""
    last = chain[-1]
    own = normalise(by_id[last]["title"])
    named = {normalise(n) for n in entities}
    read = {e["doc_id"] for e in by_id.values()}
    out: list[str] = []
    for name in lexicon.names_in(readings[last].best):
        key = normalise(name)
        if not key or key == own or key in named or (" " not in key and key in own.split()):
            continue
        if any(d not in read for d in lexicon.resolve(name)):
            out.append(name)
    return out[:2]


def _key_mentioned(key: str, evidence: Sequence[Evidence]) -> bool:
    pattern = re.compile(rf"\b{re.escape(key)}\b")
    return any(pattern.search(e["text"]) or pattern.search(e["title"]) for e in evidence)


def _is_entity_passage(e: Evidence, entities: Sequence[str]) -> bool:
    title = normalise(e["title"])
    return any(
        normalise(name) and (normalise(name) == title or title.startswith(normalise(name) + " "))
        for name in entities
    )


def _read(e: Evidence, weights: dict[str, float], total: float) -> _Reading:
    title_terms = term_set(e["title"])
    best, best_cov, best_terms = "", -1.0, frozenset()
    for sentence in sentences(e["text"]) or [e["title"]]:
        covered = frozenset(t for t in weights if t in title_terms or t in term_set(sentence))
        cov = sum(weights[t] for t in covered) / total
        if cov > best_cov:
            best, best_cov, best_terms = sentence, cov, covered
    everywhere = term_set(e["text"]) | title_terms
    anywhere = frozenset(t for t in weights if t in everywhere)
    return _Reading(evidence=e, best=best, covered=best_terms, coverage=max(best_cov, 0.0), anywhere=anywhere)


def _best_chain(
    readings: dict[str, _Reading],
    by_id: dict[str, Evidence],
    weights: dict[str, float],
    total: float,
    kind: str,
    entities: Sequence[str],
    entity_terms: set[str] | frozenset[str] = frozenset(),
    comparison: bool = False,
) -> tuple[list[str], float, frozenset[str]]:
    """The evidence chain (root first) that covers the most of the aspect, ending in an answer-shaped sentence."""
    best: tuple[list[str], float, frozenset[str]] = ([], 0.0, frozenset())
    entity_roots = {eid for eid in readings if _is_entity_passage(by_id[eid], entities)}
    for eid, reading in readings.items():
        chain = [eid]
        parent = by_id[eid].get("parent")
        while parent and parent in by_id and parent not in chain and len(chain) < MAX_CHAIN:
            chain.insert(0, parent)
            parent = by_id[parent].get("parent")
        covered: set[str] = set()
        for link in chain:
            covered |= readings[link].covered
        lexical_part = sum(weights[t] for t in covered) / total
        dense_part = max(dense_support(by_id[link].get("dense", 0.0)) for link in chain)
        coverage = LEXICAL_SHARE * lexical_part + (1 - LEXICAL_SHARE) * dense_part
        relation = {t: w for t, w in weights.items() if t not in entity_terms}
        # "how do X and Y differ": each side's own page describes it; no particular relation is asked for
        describes = comparison and kind == "thing" and chain[0] in entity_roots
        if entity_terms and relation and not describes:
            # Naming the entity is not answering about it: every informative word of the relation the question
            # asks for ("place of death of the performer of X") must occur along the chain, or a hop is missing
            # (X's passage names the performer; the death is in the performer's passage).
            top = max(relation.values())
            found = set().union(*(readings[link].anywhere for link in chain))
            missing = [t for t, w in relation.items() if w >= INFORMATIVE * top and t not in found]
            # After a hop the last passage may say it in other words ("married" for "spouse"): most of the
            # relation must still be there. A single passage must hold all of it.
            share = sum(w for t, w in relation.items() if t in found) / sum(relation.values())
            if missing and (len(chain) == 1 or share < HOP_RELATION_SHARE):
                coverage = min(coverage, ESTABLISHED - 0.05)
        if kind in {"date", "number", "person", "place", "explanation"} and not has_answer_shape(
            reading.best, kind
        ):
            coverage *= 0.7
        if entities and not any(_mentions(by_id[chain[0]], name) for name in entities):
            coverage = min(coverage * 0.8, ESTABLISHED - 0.05)  # not anchored to what the question names
        elif entity_roots and chain[0] not in entity_roots:
            coverage *= 0.7  # the entity's own passage is the better root when the question names it
        if coverage > best[1] + 1e-9 or (abs(coverage - best[1]) < 1e-9 and len(chain) < len(best[0])):
            best = (chain, coverage, frozenset(covered))
    return best


def _mentions(e: Evidence, name: str) -> bool:
    key = normalise(name)
    return bool(key) and (key in normalise(e["title"]) or key in normalise(e["text"]))


def _bridge_sentence(e: Evidence, nxt: Evidence) -> str | None:
    """The sentence of `e` that names the next passage of the chain: why the chain goes on. A ticket is named by
    its key ("Blocked by ENG-150"), a disambiguated title by its short name ("Henry King")."""
    title = nxt["title"]
    names = [title, title.split(":", 1)[0] if ":" in title else "", short_name(title) or ""]
    targets = [normalise(n) for n in names if n and len(normalise(n)) > 2]
    for sentence in sentences(e["text"]):
        text = normalise(sentence)
        if any(re.search(rf"\b{re.escape(t)}\b", text) for t in targets):
            return sentence
    return None


def _best_sentences(
    e: Evidence, weights: dict[str, float], kind: str, question: str, lexicon: Lexicon
) -> list[str]:
    """The best sentence, and the runner-up when it scores nearly as well (questions often ask two things)."""
    ranked = _scored_sentences(e, weights, kind, question, lexicon)
    return [s for score, s in ranked[:2] if score >= 0.75 * ranked[0][0]]


def _best_sentence(
    e: Evidence, weights: dict[str, float], kind: str, question: str, lexicon: Lexicon
) -> tuple[str, float]:
    score, sentence = _scored_sentences(e, weights, kind, question, lexicon)[0]
    return sentence, score


def _scored_sentences(
    e: Evidence, weights: dict[str, float], kind: str, question: str, lexicon: Lexicon
) -> list[tuple[float, str]]:
    """The sentence that best answers: its own terms, the title's, the dense similarity, the answer's shape."""
    total = sum(weights.values()) or 1.0
    title_terms = term_set(e["title"])
    title = normalise(e["title"])
    candidates = [s for s in sentences(e["text"]) if len(s) > 3 and normalise(s) != title][:MAX_SENTENCES]
    candidates = candidates or [e["title"]]
    sims = lexicon.similarity(question, candidates) if question else [0.0] * len(candidates)
    scored = []
    for i, (sentence, sim) in enumerate(zip(candidates, sims, strict=True)):
        sentence_terms = term_set(sentence)
        cov = sum(w for t, w in weights.items() if t in sentence_terms or t in title_terms) / total
        own = sum(w for t, w in weights.items() if t in sentence_terms) / total
        shape = 0.15 if has_answer_shape(sentence, kind) else 0.0
        heading = 0.3 if len(tokens(sentence)) < 5 else 0.0
        score = 0.5 * (cov + own) + 0.8 * dense_support(sim) + shape - heading - 0.01 * i
        scored.append((score, sentence))
    return sorted(scored, key=lambda item: -item[0])


def _words_for(text: str, stems: Sequence[str]) -> list[str]:
    wanted = set(stems)
    out: list[str] = []
    for token in tokens(text):
        if stem(token) in wanted and token not in out:
            out.append(token)
    return out


def _dedupe(items: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = normalise(item) or item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
