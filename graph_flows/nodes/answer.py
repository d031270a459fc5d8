"""answer: composes from established evidence, then the program's checks: citations verified (failing sentences
dropped), conflicts reported with dates, gaps listed with their clues, confidence computed, the gap log fed.

The answer is a structured record (text with [n] markers, sources, gaps, conflicts, confidence, the ranked
passages handed to composition); rendering it for Slack or a terminal is someone else's job.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig

from connectors.text import TICKET_KEY, normalise
from graph_flows.access import confirm_shown, showable
from graph_flows.checks import confidence, find_conflicts, verify_citations
from graph_flows.config import THRESHOLDS
from graph_flows.gaplog import GapLog, gap_subject
from graph_flows.knowledge import KnowledgeReader, StoreLexicon
from graph_flows.reasoners.base import ComposedSentence, Composition, Lexicon, Reasoner
from graph_flows.state import Answer, Evidence, Gap, Plan, Subject, ThreadState

DraftSink = Callable[[dict[str, Any]], None]  # a draft answer record: {"draft", "text", "sources"}
DRAFT_KEY = "sleuth_draft"  # where the run's config carries the draft sink (a callable: never checkpointed)
CLOSEST_DOCS = 3  # documents the gap log keeps per gap
NOT_FOUND = "I couldn't find an answer to this in the sources you can access."


def answer(
    state: ThreadState,
    config: RunnableConfig,
    *,
    knowledge: KnowledgeReader,
    reasoner: Reasoner,
    gap_log: GapLog | None,
) -> dict:
    """Composes and checks the answer, again without any shown document the asker may no longer open
    (`graph_flows.access`), then logs its gaps once, from the evidence it was composed from. A draft sink
    in the run's config (`DRAFT_KEY`, set by `Investigator.ask`) sees the answer while it is written."""
    on_draft = (config.get("configurable") or {}).get(DRAFT_KEY)
    compose = partial(compose_answer, knowledge=knowledge, reasoner=reasoner, on_draft=on_draft)
    out, used = confirm_shown(state, compose)
    result = out["answer"]
    if gap_log is not None and result["gaps"]:
        lexicon = StoreLexicon(knowledge, frozenset(state["principals"]))
        evidence = {e["id"]: e for e in used["evidence"]}
        gap_log.append(
            state["question"],
            [_log_gap(used["plan"], g, evidence, result["ranked_docs"], lexicon) for g in result["gaps"]],
            asker=state["asker"],
            thread=state["thread_id"],
        )
    return out


def compose_answer(
    state: ThreadState,
    *,
    knowledge: KnowledgeReader,
    reasoner: Reasoner,
    on_draft: DraftSink | None = None,
) -> dict:
    """The answer record, the turn's record and the trace entry, from the state's evidence (no side effect
    but the drafts handed to `on_draft`)."""
    started = time.perf_counter()
    principals = frozenset(state["principals"])
    lexicon = StoreLexicon(knowledge, principals)
    plan = state["plan"]
    evidence = {e["id"]: e for e in state["evidence"]}
    drafts = {"on_sentences": Drafts(evidence, on_draft)} if on_draft is not None else {}
    composition = reasoner.compose(
        plan, list(evidence.values()), state["established"], lexicon=lexicon, **drafts
    )
    kept, dropped = verify_citations(composition.sentences, evidence)
    related, dropped_related = verify_citations(composition.related, evidence)
    dropped += dropped_related
    citer = SourceNumbers(evidence)
    cite, numbers = citer.cite, citer.numbers

    pool = [
        e for e in evidence.values() if e["relevance"] >= THRESHOLDS.relevant and e["turn"] == state["turn"]
    ]
    # a question for one fact (not a comparison's two, not a list): its statements hold the question's words
    asks_a_value = plan["answer_type"] not in {"list", "explanation"} and not plan.get("comparison")
    asked = [t for a in plan["aspects"] for t in a["terms"]] if asks_a_value else []
    conflicts = find_conflicts(kept, pool, asked=asked, chains=list(state["established"].values()))
    kept = _prefer_newest(kept, conflicts)
    kept = list({(s.text, tuple(s.cites)): s for s in kept}.values())  # the newest side may already be stated
    lines = [{"text": s.text, "cites": [cite(c) for c in s.cites], "aspect": s.aspect} for s in kept]
    for conflict in conflicts:
        for side in conflict["sides"]:
            side["n"] = cite(side["evidence_id"])
    established_ids = {eid for chain in state["established"].values() for eid in chain}
    gaps = [{**gap, "clue_numbers": [cite(c) for c in gap["clues"]]} for gap in merge_gaps(state["gaps"])]
    answered = bool(lines)
    text = join_lines(f"{line['text']} {''.join(f'[{n}]' for n in line['cites'])}" for line in lines)
    if not answered:
        text = NOT_FOUND
        closest = [f"“{s.text}” {''.join(f'[{cite(c)}]' for c in s.cites)}" for s in related]
        if closest:
            text += " The closest I found, which may not answer it: " + " ".join(closest)
    support = [evidence[c]["relevance"] for s in kept for c in s.cites]
    conf = confidence(
        aspects=len(plan["aspects"]),
        established=len(state["established"]),
        support=support,
        conflicts=len(conflicts),
        cited=len(kept),
    )
    if answered and composition.confidence is not None:  # the reader's calibrated P(right)
        conf = round(composition.confidence, 2)
    sources = citer.sources()
    ranked = _ranked_docs(state, established_ids)
    result: Answer = {
        "answered": answered,
        "text": text,
        "sentences": lines,
        "related": [
            {"text": s.text, "cites": [numbers[c] for c in s.cites]} for s in related if not answered
        ],
        "sources": sources,
        "gaps": gaps,
        "conflicts": conflicts,
        "confidence": conf,
        "ranked_docs": ranked,
        "cited_docs": cited_docs(kept, conflicts, evidence),
        "stop_reason": state["stop_reason"],
        "path": state["path"],
        "rounds": state["round"],
        "reasoner": reasoner.name,
    }
    if composition.verdict is not None:
        result["calibration"] = composition.verdict
    record = {
        "turn": state["turn"],
        "question": state["question"],
        "asker": state["asker"],
        "evidence_ids": [eid for eid in numbers],
        "gaps": state["gaps"],
        "answered": answered,
        "effective_question": plan.get("effective_question") or state["question"],
        "subjects": _subjects(_referents(composition, kept, evidence), evidence, lexicon, plan),
        "derived_from": list(plan.get("derived_from") or []),
        "derived_askers": list(plan.get("derived_askers") or []),
    }
    entry = {
        "node": "answer",
        "cited": len(numbers),
        "dropped": dropped,
        "notes": composition.notes,
        "conflicts": len(conflicts),
        "confidence": conf,
        "path": state["path"],
        "stop": state["stop_reason"],
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    usage = getattr(reasoner, "usage", None)  # a model's reasoner: this question's calls, tokens, fallbacks
    if usage is not None:
        entry["llm"] = usage(plan)
        if entry["llm"]["fallbacks"]:  # the footer says so: an offline answer must not look like the model's
            result["fallbacks"] = fallback_kinds(entry["llm"]["fallbacks"])
    return {"answer": result, "turns": [*state.get("turns", []), record], "trace": [*state["trace"], entry]}


class Drafts:
    """Grounded sentences as the model writes them (`Reasoner.compose(on_sentences=...)`) turned into a draft
    answer record for `sink`: its text with [n] markers and its sources, numbered as the answer numbers them.
    The citations are checked as the answer's are, and, under a live access check, a sentence is left out
    until every document it cites is confirmed: a draft shows nothing the answer could not."""

    def __init__(self, evidence: dict[str, Evidence], sink: DraftSink) -> None:
        self._evidence, self._sink = evidence, sink
        self._verdicts: dict[str, str] = {}

    def __call__(self, sentences: list[ComposedSentence]) -> None:
        kept, _ = verify_citations(sentences, self._evidence)
        kept = [s for s in kept if showable([self._evidence[c]["doc_id"] for c in s.cites], self._verdicts)]
        if not kept:
            return
        citer = SourceNumbers(self._evidence)
        lines = [f"{s.text} {''.join(dict.fromkeys(f'[{citer.cite(c)}]' for c in s.cites))}" for s in kept]
        self._sink({"draft": True, "text": join_lines(lines), "sources": citer.sources()})


class SourceNumbers:
    """One number per document in the order first cited (two passages of one page are one source), and the
    numbered sources an answer, or a draft of it, ends with."""

    def __init__(self, evidence: dict[str, Evidence]) -> None:
        self._evidence = evidence
        self._by_doc: dict[str, int] = {}
        self.numbers: dict[str, int] = {}  # evidence id -> its source's number

    def cite(self, eid: str) -> int:
        n = self._by_doc.setdefault(self._evidence[eid]["doc_id"], len(self._by_doc) + 1)
        return self.numbers.setdefault(eid, n)

    def sources(self) -> list[dict[str, Any]]:
        first: dict[int, str] = {}
        for eid, n in self.numbers.items():
            first.setdefault(n, eid)
        return [source_entry(self._evidence[eid], n) for n, eid in sorted(first.items())]


def merge_gaps(gaps: Sequence[Gap]) -> list[Gap]:
    """Two parts of a message may leave the same gap ("parking ... and do we reimburse it"): listed once, with
    the clues of both."""
    merged: dict[tuple[str, str], Gap] = {}
    for gap in gaps:
        key = (gap["kind"], normalise(gap["what"]))
        if key in merged:
            merged[key] = {
                **merged[key],
                "clues": list(dict.fromkeys([*merged[key]["clues"], *gap["clues"]])),
            }
        else:
            merged[key] = gap
    return list(merged.values())


def fallback_kinds(fallbacks: Sequence[str]) -> list[dict[str, str]]:
    """The reasoner's fallbacks ("compose: model unavailable: ...") as step and kind of failure, without the
    error text: what the footer may tell the asker."""
    kinds = (
        ("no reply in time", "slow"),
        ("budget spent", "budget"),
        ("invalid reply", "unreadable"),
        ("model unavailable", "unavailable"),
    )
    out = []
    for line in fallbacks:
        step, _, reason = line.partition(":")
        kind = next((k for words, k in kinds if words in reason), "unavailable")
        out.append({"step": step.strip(), "kind": kind})
    return out


def _referents(
    composition: Composition, kept: Sequence[ComposedSentence], evidence: dict[str, Evidence]
) -> list[ComposedSentence]:
    """The sentences a follow-up's "it" may point into: the composition's `referents` (the program's own
    reading of the passages the answer cites) where it has them, else the answer's sentences."""
    if composition.referents is None:
        return list(kept)
    cited = {c for s in kept for c in s.cites}
    own, _ = verify_citations(composition.referents, evidence)
    own = [s for s in own if s.cites and set(s.cites) <= cited]
    return own or list(kept)


def _subjects(
    kept: Sequence[ComposedSentence], evidence: dict[str, Evidence], lexicon: Lexicon, plan: Plan
) -> list[Subject]:
    """The names the answer stated that the question did not: what a follow-up's "it" or "they" may point
    at ("which supplier makes our packs?" -> "Lumen Cell"; "where are they located?"). A cited ticket is
    named by its key ("which ticket tracks 4.3?" -> "ENG-230"; "when does it ship?"). A name the sentence
    takes only from its source's title ("according to <title>, ...") names where the answer read, not what
    it stated."""
    asked = {normalise(n) for n in plan.get("entities", [])}
    question = normalise(plan.get("effective_question", ""))
    out: list[Subject] = []
    for sentence in kept:
        if not sentence.cites:
            continue
        cited = evidence.get(sentence.cites[0])
        key = TICKET_KEY.match(cited["title"]) if cited else None
        source = f" {normalise(cited['text'])} " if cited else ""
        title = f" {normalise(cited['title'])} " if cited else ""
        stated = [n for n in lexicon.names_in(sentence.text) if not _only_in(normalise(n), title, source)]
        for name in [*stated, *([key.group(0)] if key else [])]:
            said = normalise(name)
            if said and said not in asked and said not in question:
                out.append({"name": name, "evidence_id": sentence.cites[0]})
    return out[:5]


def _only_in(name: str, title: str, text: str) -> bool:
    """Whether a name is in a passage's (padded, normalised) title but not in its text."""
    return f" {name} " in title and f" {name} " not in text


def join_lines(lines: Iterable[str]) -> str:
    """Sentences run on; a list (a line holding line breaks) stands on lines of its own."""
    out, previous_list = "", False
    for line in lines:
        is_list = "\n" in line
        out += ("\n" if is_list or previous_list else " ") + line if out else line
        previous_list = is_list
    return out


def _prefer_newest(kept: list[ComposedSentence], conflicts: list[dict[str, Any]]) -> list[ComposedSentence]:
    """Where sources disagree, the claim states the newest side (both stay listed in the conflict)."""
    out = list(kept)
    for conflict in conflicts:
        newest = conflict["sides"][0]
        for i, sentence in enumerate(out):
            older = [s for s in conflict["sides"][1:] if s["evidence_id"] in sentence.cites]
            if older and newest["evidence_id"] not in sentence.cites:
                out[i] = replace(sentence, text=newest["sentence"], cites=[newest["evidence_id"]])
    return out


def source_entry(e: Evidence, n: int) -> dict[str, Any]:
    return {
        "n": n,
        "evidence_id": e["id"],
        "doc_id": e["doc_id"],
        "title": e["title"],
        "url": e["url"],
        "source": e["source"],
        "kind": e["kind"],
        "updated_at": e["updated_at"][:10],
        "version": e["version"],
        "snippet": e["text"][:300],
    }


def cited_docs(
    kept: Sequence[ComposedSentence], conflicts: Sequence[dict[str, Any]], evidence: dict[str, Evidence]
) -> list[str]:
    """The documents the posted answer cites, first cited first: its sentences' sources (a second unit quoted
    from a page outside the chain that established the aspect too) and the conflict sides it shows; never a
    gap's clues or the closest passages offered when nothing answers."""
    cited = [c for s in kept for c in s.cites] + [
        side["evidence_id"] for c in conflicts for side in c["sides"]
    ]
    return list(dict.fromkeys(evidence[eid]["doc_id"] for eid in cited))


def _ranked_docs(state: ThreadState, established_ids: set[str]) -> list[str]:
    """The distinct passages handed to composition, best first: established chains, then gap clues, then each
    remaining passage by the reasoner's relevance with the best passage it led to right behind it (a hop is
    judged with the passage that named it, not on its own words), then the rest."""
    turn = [e for e in state["evidence"] if e["turn"] == state["turn"] or e["id"] in established_ids]
    by_id = {e["id"]: e for e in turn}
    order: list[str] = []
    for aspect in state["plan"]["aspects"]:
        order += [by_id[i]["doc_id"] for i in state["established"].get(aspect["id"], []) if i in by_id]
    for gap in state["gaps"]:
        order += [by_id[i]["doc_id"] for i in gap["clues"] if i in by_id]
    children: dict[str, list[Evidence]] = {}
    for e in turn:
        if e.get("parent") in by_id:
            children.setdefault(e["parent"], []).append(e)
    for kids in children.values():
        kids.sort(key=lambda e: (-e["score"], -e["relevance"]))
    roots = sorted((e for e in turn if e.get("parent") not in by_id), key=_rank_key)
    for root in roots:
        order.append(root["doc_id"])
        if children.get(root["id"]):
            order.append(children[root["id"]][0]["doc_id"])
    order += [e["doc_id"] for e in sorted(turn, key=_rank_key)]
    return list(dict.fromkeys(order))


def _rank_key(e: Evidence) -> tuple[float, float, int]:
    return (-e["relevance"], -e["score"], int(e["id"][1:] or 0))


def _log_gap(
    plan: dict[str, Any],
    gap: dict[str, Any],
    evidence: dict[str, Evidence],
    ranked: list[str],
    lexicon: StoreLexicon,
) -> dict[str, Any]:
    """A gap as the gap log keeps it: the question's words, its normalised subject, and where the closest
    passages came from (the gap's clues, else the best-ranked passages): ids and sources, never titles; and
    the documents (and earlier askers) its wording was derived from, so each viewer reads it as they may."""
    what = _aspect_text(plan, gap)
    sources = {e["doc_id"]: e["source"] for e in evidence.values()}
    docs = [evidence[c]["doc_id"] for c in gap["clues"] if c in evidence] or ranked
    closest = [{"doc_id": d, "source": sources[d]} for d in dict.fromkeys(docs) if d in sources][
        :CLOSEST_DOCS
    ]
    derived = [*(plan.get("derived_from") or []), *(gap.get("derived_from") or [])]
    return {
        "kind": gap["kind"],
        "log_what": what,
        "subject": gap_subject(what, lexicon),
        "closest": closest,
        "derived_from": list(dict.fromkeys(derived)),
        "derived_askers": list(plan.get("derived_askers") or []),
    }


def _aspect_text(plan: dict[str, Any], gap: dict[str, Any]) -> str:
    """Gap wording for the log: the question's own aspect text, never a passage title."""
    if gap["kind"] == "missing_source":
        return str(gap["what"])
    return " / ".join(a["text"] for a in plan["aspects"])
