"""The broad path: two-stage retrieval over themes (Cog-RAG) for questions whose answer spans many documents.

    plan --(router: broad)--> broad_retrieve -> broad_reflect --(uncovered themes, budget left)--> broad_retrieve
                                                             \\--(otherwise)--> broad_answer -> END

- **broad_retrieve**: the asker's themes nearest the question (stage one), then inside each theme the entities its
  best chunks mention together (entity hyperedges) and the passages: the theme's chunks nearest the question, the
  passages of those entities, and any text-search hit that falls in the theme (stage two). A second round goes
  back only to the themes reflect found uncovered, with the question sharpened by the theme's key terms.
- **broad_reflect**: which themes are covered (a passage of the theme close enough to the question); the others
  become gaps ("found, but nothing read answers it for this theme").
- **broad_answer**: one short line per covered theme, each sentence quoted from a passage and cited (headed by the
  theme's name where a model named it); the same answer record as the pointed path (sources, gaps, cited and
  ranked documents) with `path` "broad". Its confidence is the learned scorer's mean calibrated probability that
  each quoted sentence answers the question (`reader.decide.stated_probability`).

Everything is read with the asker's principals: themes, their labels and terms come from visible chunks only.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Protocol

from connectors.knowledge.results import Hit, ThemeView
from connectors.text import normalise
from graph_flows.checks import verify_citations
from graph_flows.config import FlowConfig
from graph_flows.knowledge import KnowledgeReader, StoreLexicon
from graph_flows.nodes.answer import NOT_FOUND, source_entry
from graph_flows.nodes.retrieve import SNIPPET_CHARS, evidence_from_hit, next_evidence_number
from graph_flows.reader.decide import stated_probability
from graph_flows.reader.instructions import readable
from graph_flows.reading import question_terms, sentences, term_set
from graph_flows.reasoners.base import ComposedSentence, Reasoner
from graph_flows.state import Evidence, Gap, ThreadState

MAX_THEMES = 4
THEME_KEEP = 0.75  # a theme is read when its score is at least this share of the best theme's
MIN_THEME_SCORE = 0.1
DOCS_PER_THEME = 4  # passages (distinct documents) read per theme per round
ENTITIES_PER_THEME = 3
ENTITY_CHUNKS = 8  # the theme's chunks nearest the question whose entity hyperedges are counted
SEARCH_BONUS = 0.05  # a passage that the text search also found ranks a little higher in its theme
COVERED = 0.35  # dense similarity to the question at which a passage covers its theme
LINE_CITES = 3  # sentences (each cited) per theme line
LEXICAL_WEIGHT = 0.3  # the question's words in a sentence, next to its dense similarity, when quoting
BROAD_ROUNDS = 2


class ThemeReader(Protocol):
    """What the broad path needs of the store's theme layer (connectors.knowledge.themes.ThemeIndex)."""

    def themes_for(
        self, query: str, principals: frozenset[str], k: int = 5
    ) -> list[tuple[ThemeView, float]]: ...

    def views(self, principals: frozenset[str]) -> list[ThemeView]: ...

    def entities_of(
        self, chunk_ids: Iterable[str], principals: frozenset[str]
    ) -> dict[str, tuple[str, ...]]: ...


def broad_retrieve(
    state: ThreadState, *, knowledge: KnowledgeReader, themes: ThemeReader, flow_settings: FlowConfig
) -> dict:
    started = time.perf_counter()
    principals = frozenset(state["principals"])
    rnd = state["round"] + 1
    question = state["plan"].get("effective_question") or state["question"]
    evidence = list(state["evidence"])
    have_docs = {e["doc_id"] for e in evidence if e["turn"] == state["turn"]}
    counter = next_evidence_number(evidence)
    read: dict[str, dict[str, Any]] = {t["id"]: dict(t) for t in state.get("broad", {}).get("themes", [])}
    if rnd == 1:
        found = themes.themes_for(question, principals, k=MAX_THEMES * 2)
        best = found[0][1] if found else 0.0
        targets = [
            (view, score) for view, score in found if score >= max(MIN_THEME_SCORE, best * THEME_KEEP)
        ][:MAX_THEMES]
        for view, score in targets:
            read[str(view.id)] = {
                "id": str(view.id),
                "label": view.label,
                # a model's name for the theme heads its line; key terms are no heading a reader can use
                "named": view.summary.split(":", 1)[0].strip() if view.summary else "",
                "docs": list(view.docs),  # what the label was derived from, as this asker sees it
                "terms": list(view.terms[:5]),
                "score": round(score, 4),
                "entities": [],
                "evidence": [],
            }
    else:
        uncovered = set(state.get("broad", {}).get("uncovered", []))
        targets = [(v, read[str(v.id)]["score"]) for v in themes.views(principals) if str(v.id) in uncovered]
    search = {h.chunk_id for h in knowledge.search_text(question, principals, flow_settings.hits_per_query)}
    new: list[Evidence] = []
    for view, _ in targets:
        query = question if rnd == 1 else f"{question} {' '.join(view.terms[:3])}"
        sims = knowledge.similarity(query, list(view.chunk_ids), principals)
        ranked = sorted(view.chunk_ids, key=lambda c: -(sims.get(c, 0.0) + SEARCH_BONUS * (c in search)))
        hyperedges = themes.entities_of(ranked[:ENTITY_CHUNKS], principals)
        counts: dict[str, int] = {}
        for names in hyperedges.values():
            for name in names:
                counts[name] = counts.get(name, 0) + 1
        entities = sorted(counts, key=lambda n: (-counts[n], n))[:ENTITIES_PER_THEME]
        candidates: list[tuple[float, Hit, str]] = []
        for chunk_id in ranked[: DOCS_PER_THEME * 3]:
            hit = knowledge.read(chunk_id, principals)
            if hit is not None:
                candidates.append(
                    (sims.get(chunk_id, 0.0) + SEARCH_BONUS * (chunk_id in search), hit, "theme")
                )
        for name in entities:
            for doc_id in knowledge.resolve([name], principals).get(name, [])[:1]:
                chunks = knowledge.chunks_of(doc_id, principals)
                entity_sims = knowledge.similarity(query, [c.chunk_id for c in chunks], principals)
                if chunks:
                    hit = max(chunks, key=lambda c: entity_sims.get(c.chunk_id, 0.0))
                    candidates.append((entity_sims.get(hit.chunk_id, 0.0), hit, "theme-entity"))
        taken = 0
        record = read[str(view.id)]
        for score, hit, via in sorted(candidates, key=lambda c: -c[0]):
            if taken >= DOCS_PER_THEME:
                break
            if hit.doc_id in have_docs:
                continue
            have_docs.add(hit.doc_id)
            counter += 1
            e = evidence_from_hit(f"E{counter}", hit, state["turn"], rnd, f"{via}:{view.id}", None, score)
            e = {**e, "text": hit.text[:SNIPPET_CHARS], "dense": float(score), "relevance": float(score)}
            new.append(e)
            record["evidence"] = [*record["evidence"], e["id"]]
            taken += 1
        record["entities"] = list(dict.fromkeys([*record["entities"], *entities]))
    entry = {
        "node": "retrieve",
        "path": "broad",
        "round": rnd,
        "direction": "themes",
        "queries": [],
        "seeds": [],
        "skimmed": sum(len(v.chunk_ids) for v, _ in targets),
        "themes": [
            {"label": t["label"], "score": t["score"], "entities": t["entities"]} for t in read.values()
        ],
        "read": [e["id"] for e in new],
        "reading": [e["title"] for e in new][:6],
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return {
        "round": rnd,
        "evidence": evidence + new,
        "new_evidence": [e["id"] for e in new],
        "read_docs": list(dict.fromkeys([*state["read_docs"], *(e["doc_id"] for e in new)])),
        "broad": {**state.get("broad", {}), "themes": list(read.values())},
        "trace": [*state["trace"], entry],
    }


def broad_reflect(state: ThreadState, *, flow_settings: FlowConfig) -> dict:
    """Which themes does what was read cover? Uncovered ones get one more round, then become gaps."""
    started = time.perf_counter()
    by_id = {e["id"]: e for e in state["evidence"]}
    read = state.get("broad", {}).get("themes", [])
    covered = [
        t["id"] for t in read if any(by_id[e]["dense"] >= COVERED for e in t["evidence"] if e in by_id)
    ]
    uncovered = [t["id"] for t in read if t["id"] not in covered]
    again = bool(uncovered) and state["round"] < min(BROAD_ROUNDS, state["max_rounds"])
    if not read:
        reason: str | None = "no_themes"
    elif not state["new_evidence"] and state["round"] > 1:
        reason = "no_new_evidence"
    elif not uncovered:
        reason = "sufficient"
    else:
        reason = None if again else "round_cap"
    gaps: list[Gap] = []
    if reason is not None:
        for t in read:
            if t["id"] in uncovered:
                what = f"theme “{t['label']}”: found, but nothing I read answers the question for it"
                derived = [*(state["plan"].get("derived_from") or []), *t.get("docs", [])]
                gaps.append(
                    {
                        "kind": "missing_source",
                        "what": what,
                        "clues": [],
                        "derived_from": list(dict.fromkeys(derived)),
                    }
                )
    labels = {t["id"]: t["label"] for t in read}
    entry = {
        "node": "reflect",
        "path": "broad",
        "round": state["round"],
        "covered": [labels[i] for i in covered],
        "uncovered": [labels[i] for i in uncovered],
        "established": {labels[t["id"]]: t["evidence"] for t in read if t["id"] in covered},
        "missing": [{"kind": g["kind"], "what": g["what"], "clues": g["clues"]} for g in gaps],
        "seeds": [],
        "next": "themes" if reason is None else "answer",
        "rejected": [],
        "stop": reason,
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return {
        "broad": {**state.get("broad", {}), "covered": covered, "uncovered": uncovered},
        "gaps": gaps,
        "stop_reason": reason,
        "path": "broad",
        "trace": [*state["trace"], entry],
    }


def route_after_broad_reflect(state: ThreadState) -> str:
    return "broad_answer" if state["stop_reason"] else "broad_retrieve"


def broad_answer(state: ThreadState, *, knowledge: KnowledgeReader, reasoner: Reasoner) -> dict:
    """A short line per covered theme, each sentence quoted from a passage it cites; uncovered themes as gaps."""
    started = time.perf_counter()
    question = state["plan"].get("effective_question") or state["question"]
    evidence = {e["id"]: e for e in state["evidence"]}
    broad = state.get("broad", {})
    covered = set(broad.get("covered", []))
    composed: list[ComposedSentence] = []
    for theme in broad.get("themes", []):
        if theme["id"] not in covered:
            continue
        passages = sorted(
            (evidence[e] for e in theme["evidence"] if e in evidence), key=lambda e: -e["dense"]
        )
        for e in [p for p in passages if p["dense"] >= COVERED][:LINE_CITES]:
            quoted = _best_sentence(knowledge, question, e)
            if quoted:
                composed.append(ComposedSentence(text=quoted, cites=[e["id"]], aspect=theme["label"]))
    kept, dropped = verify_citations(composed, evidence)
    lexicon = StoreLexicon(knowledge, frozenset(state["principals"]))
    by_doc: dict[str, int] = {}
    numbers: dict[str, int] = {}

    def cite(eid: str) -> int:
        n = by_doc.setdefault(evidence[eid]["doc_id"], len(by_doc) + 1)
        return numbers.setdefault(eid, n)

    lines: list[dict[str, Any]] = []
    for theme in broad.get("themes", []):
        said = [s for s in kept if s.aspect == theme["label"]]
        if not said:
            continue
        body = " ".join(f"{s.text} {''.join(f'[{cite(c)}]' for c in s.cites)}" for s in said)
        lines.append(
            {
                "text": f"*{theme['named']}*: {body}" if theme.get("named") else body,
                "cites": sorted({numbers[c] for s in said for c in s.cites}),
                "aspect": theme["label"],
            }
        )
    gaps = [{**g, "clue_numbers": []} for g in state["gaps"]]
    answered = bool(lines)
    first_of: dict[int, str] = {}
    for eid, n in numbers.items():
        first_of.setdefault(n, eid)
    sources = [source_entry(evidence[eid], n) for n, eid in sorted(first_of.items())]
    read = broad.get("themes", [])
    turn_ev = [e for e in state["evidence"] if e["turn"] == state["turn"]]
    result = {
        "answered": answered,
        "text": "\n".join(f"• {line['text']}" for line in lines) if answered else _not_found(read),
        "sentences": lines,
        "related": [],
        "sources": sources,
        "gaps": gaps,
        "conflicts": [],
        "confidence": round(stated_probability(question, state["evidence"], kept, lexicon), 2),
        "ranked_docs": list(dict.fromkeys([e["doc_id"] for e in sorted(turn_ev, key=lambda e: -e["dense"])])),
        "cited_docs": [evidence[first_of[n]]["doc_id"] for n in sorted(first_of)],
        "stop_reason": state["stop_reason"],
        "path": "broad",
        "rounds": state["round"],
        "reasoner": reasoner.name,
    }
    record = {
        "turn": state["turn"],
        "question": state["question"],
        "asker": state["asker"],
        "evidence_ids": list(numbers),
        "gaps": state["gaps"],
        "answered": answered,
        "derived_from": list(state["plan"].get("derived_from") or []),
        "derived_askers": list(state["plan"].get("derived_askers") or []),
    }
    entry = {
        "node": "answer",
        "path": "broad",
        "themes": len(lines),
        "cited": len(numbers),
        "dropped": dropped,
        "confidence": result["confidence"],
        "stop": state["stop_reason"],
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return {"answer": result, "turns": [*state.get("turns", []), record], "trace": [*state["trace"], entry]}


TICKET_KINDS = frozenset(["ticket", "issue", "pull_request"])


def _best_sentence(knowledge: KnowledgeReader, question: str, e: Evidence) -> str:
    """The passage's sentence closest to the question, by meaning and by the question's words: what its theme
    line quotes. A ticket is quoted under its title, which says in one line what it is about ("ENG-214: iOS
    fleet map freezes at large sites"): an overview of issues or requests reads as a list of them."""
    found = readable(sentences(e["text"]), e["text"])
    candidates = [s for s in found if len(s) > 25] or found
    if not candidates:
        return ""
    asked = set(question_terms(question))
    sims = knowledge.text_similarity(question, candidates)
    scored = [
        (sim + LEXICAL_WEIGHT * len(asked & term_set(text)) / (len(asked) or 1), text)
        for sim, text in zip(sims, candidates, strict=True)
    ]
    best = max(scored, key=lambda p: p[0])[1]
    if e.get("kind") in TICKET_KINDS and normalise(e["title"]) not in normalise(best):
        return f"{e['title']}: {best}"
    return best


def _not_found(themes: list[dict[str, Any]]) -> str:
    if not themes:
        return NOT_FOUND
    labels = ", ".join(f"“{t['label']}”" for t in themes)
    return f"I found themes that may be related ({labels}), but nothing I read answers the question."
