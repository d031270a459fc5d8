"""retrieve: one round of evidence gathering, in the direction reflect chose.

- text: lexical + dense search (fused) for queries not tried before (normalised), plus on the first round the
  passages of entities the question names.
- graph: the documents the seeds denote and their ACL-filtered neighbourhood (personalised PageRank), each read
  two-level: skim every chunk's title and first sentence, then read the best one.
Every call carries the asker's principals; new evidence gets thread-stable ids ("E7").
"""

from __future__ import annotations

import time

from connectors.knowledge.results import Hit
from graph_flows.config import THRESHOLDS, FlowConfig
from graph_flows.knowledge import KnowledgeReader
from graph_flows.reading import holds, question_terms, replaced_names, sentences, term_set, terms
from graph_flows.state import Evidence, ThreadState

SNIPPET_CHARS = 1500
MAX_MORE_CHUNKS = 4  # further chunks of documents already read this round (another comment, a later section)
MAX_WHOLE_CHUNKS = 8  # chunks of a named document read whole for a list question
DENSE_EXTRA = 2  # passages closest in meaning alone, read in the first round besides the fused search ...
FUSED_FIRST = 5  # ... after this many of the fused search's


def normalise_query(query: str) -> str:
    return " ".join(sorted(set(terms(query))))


def retrieve(state: ThreadState, *, knowledge: KnowledgeReader, flow_settings: FlowConfig) -> dict:
    started = time.perf_counter()
    principals = frozenset(state["principals"])
    rnd = state["round"] + 1
    evidence = list(state["evidence"])
    # a new turn (a follow-up) reads afresh: a chunk an earlier turn read may answer this one
    have_chunks = {e["chunk_id"] for e in evidence if e["turn"] == state["turn"]}
    have_docs = {e["doc_id"] for e in evidence if e["turn"] == state["turn"]}
    plan = state["plan"]
    focus = set(question_terms(plan.get("effective_question") or state["question"]))
    counter = next_evidence_number(evidence)
    new: list[Evidence] = []
    tried = list(state["tried_queries"])
    ran: list[str] = []
    skimmed = 0

    more: list[tuple[Hit, str, str | None, float]] = []  # further chunks of documents already read

    def add(hit: Hit, via: str, parent: str | None, score: float) -> None:
        nonlocal counter
        if hit.chunk_id in have_chunks:
            return
        if hit.doc_id in have_docs:
            more.append((hit, via, parent, score))
            return
        have_chunks.add(hit.chunk_id)
        have_docs.add(hit.doc_id)
        counter += 1
        new.append(evidence_from_hit(f"E{counter}", hit, state["turn"], rnd, via, parent, score))

    if state["direction"] == "text" or rnd == 1:
        if rnd == 1:
            # a checklist asked as a whole, or pages compared as wholes ("how do X and Y differ"): read all of them
            whole = plan.get("answer_type") == "list" or (
                bool(plan.get("comparison")) and plan.get("answer_type") == "thing"
            )
            for name in plan.get("entities", []):
                for doc_id in knowledge.resolve([name], principals).get(name, [])[:2]:
                    hit, n, rest = _best_chunk(knowledge, doc_id, principals, focus, with_rest=True)
                    skimmed += n
                    for chunk in (hit, rest):
                        if chunk is not None:
                            add(chunk, "entity", None, 1.0)
                    if whole and n > 1:  # a list question reads the document whole
                        for other in knowledge.chunks_of(doc_id, principals)[:MAX_WHOLE_CHUNKS]:
                            add(other, "entity", None, 1.0)
        for query in state["next_queries"]:
            key = normalise_query(query)
            if not key or key in tried:
                continue
            tried.append(key)
            ran.append(query)
            mode = "hybrid" if "text" in state["modes"] else "bm25"
            hits = knowledge.search_text(query, principals, flow_settings.hits_per_query, mode=mode)
            if mode == "hybrid" and rnd == 1 and _says_otherwise(query, knowledge, principals):
                # the closest passages in meaning alone, among the first read: a question in words no page uses
                # ("step away from my job, with no paycheck") ranks them below pages sharing its common words
                closest = knowledge.search_text(query, principals, DENSE_EXTRA, mode="dense")
                hits = [*hits[:FUSED_FIRST], *closest, *hits[FUSED_FIRST:]]
            for hit in hits:
                add(hit, "text", None, hit.score)
    else:
        by_id = {e["id"]: e for e in evidence}
        origins = state.get("seed_origins", {})
        seed_docs: list[tuple[str, str | None]] = []
        for seed in state["seeds"]:
            for doc_id in knowledge.resolve([seed], principals).get(seed, [])[:2]:
                seed_docs.append((doc_id, origins.get(seed)))
        for rank, (doc_id, parent) in enumerate(seed_docs):
            onward = _unsaid(focus, by_id.get(parent) if parent else None)
            hit, n, rest = _best_chunk(knowledge, doc_id, principals, onward, with_rest=True)
            skimmed += n
            for chunk in (hit, rest):
                if chunk is not None:
                    add(chunk, "graph:mentions", parent, 1.0 - 0.05 * rank)  # seeds arrive best first
        anchors = [d for d, _ in seed_docs] + [
            e["doc_id"]
            for e in evidence
            if e["turn"] == state["turn"] and e["relevance"] >= THRESHOLDS.relevant
        ]
        if anchors:
            for doc_id, score in knowledge.expand(anchors, principals, k=len(anchors) + 4):
                if doc_id in have_docs:
                    continue
                parent = _parent_for(doc_id, knowledge, principals, seed_docs, by_id, evidence)
                hit, n, rest = _best_chunk(
                    knowledge,
                    doc_id,
                    principals,
                    _unsaid(focus, by_id.get(parent) if parent else None),
                    with_rest=True,
                )
                skimmed += n
                if hit is not None:
                    add(hit, "expand", parent, score)
                if rest is not None:
                    more.append((rest, "expand", parent, score))
                if len(new) >= flow_settings.evidence_per_round:
                    break
    new = new[: flow_settings.evidence_per_round + len(plan.get("entities", []))]
    kept_docs = {e["doc_id"] for e in new}
    # Second readings of documents already chosen: further search hits, and each document's best chunk for
    # the question (a policy's first chunk names it; its third holds the rule asked about).
    for e in [x for x in new if x["via"] == "text"]:  # entity and graph reads already took the best chunk
        best, n, rest = _best_chunk(knowledge, e["doc_id"], principals, focus, with_rest=True)
        skimmed += n
        if best is not None and best.chunk_id not in have_chunks:
            more.insert(0, (best, e["via"], e["parent"], e["score"]))
        if rest is not None and rest.chunk_id not in have_chunks:
            more.insert(1, (rest, e["via"], e["parent"], e["score"]))
    # A passage that says it replaces another document brings that document too: both sides of the change.
    for e in list(new):
        for name in replaced_names(e["text"]):
            for doc_id in knowledge.resolve([name], principals).get(name, [])[:1]:
                if doc_id not in have_docs:
                    hit, n, _ = _best_chunk(knowledge, doc_id, principals, focus)
                    skimmed += n
                    if hit is not None:
                        have_docs.add(doc_id)
                        kept_docs.add(doc_id)
                        more.insert(0, (hit, "replaces", e["id"], e["score"]))
    for hit, via, parent, score in more[: MAX_MORE_CHUNKS + len(kept_docs)]:
        if hit.doc_id in kept_docs and hit.chunk_id not in have_chunks:
            have_chunks.add(hit.chunk_id)
            counter += 1
            new.append(evidence_from_hit(f"E{counter}", hit, state["turn"], rnd, via, parent, score))
    question = plan.get("effective_question") or state["question"]
    sims = knowledge.similarity(question, [e["chunk_id"] for e in new], principals)
    new = [{**e, "dense": sims.get(e["chunk_id"], 0.0)} for e in new]
    entry = {
        "node": "retrieve",
        "round": rnd,
        "direction": state["direction"] if rnd > 1 else "text",
        "queries": ran,
        "seeds": list(state["seeds"]) if rnd > 1 else [],
        "skimmed": skimmed,
        "read": [e["id"] for e in new],
        "reading": [e["title"] for e in new][:6],
        "reading_ids": [e["doc_id"] for e in new][
            :6
        ],  # so a public status line can name only what all may open
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return {
        "round": rnd,
        "tried_queries": tried,
        "evidence": evidence + new,
        "new_evidence": [e["id"] for e in new],
        "read_docs": list(dict.fromkeys([*state["read_docs"], *(e["doc_id"] for e in new)])),
        "trace": [*state["trace"], entry],
    }


def _says_otherwise(query: str, knowledge: KnowledgeReader, principals: frozenset[str]) -> bool:
    """Whether the question uses a word no visible page does: text search cannot see what it means."""
    asked = [t for t in question_terms(query) if t.isalpha() and len(t) > 2]
    if not asked:
        return False
    _, df = knowledge.term_frequencies(asked, principals)
    return any(df.get(t, 0) == 0 for t in asked)


def _unsaid(focus: set[str], parent: Evidence | None) -> set[str]:
    """A hop reads the next document for what the passage leading there leaves unsaid ("the supplier of part
    X": the part's passage said who; the supplier's page is read for when it delivers)."""
    if parent is None:
        return focus
    said = term_set(parent["title"]) | term_set(parent["text"])
    return {t for t in focus if not holds(said, t)} or focus


def _best_chunk(
    knowledge: KnowledgeReader,
    doc_id: str,
    principals: frozenset[str],
    focus: set[str],
    *,
    with_rest: bool = False,
) -> tuple[Hit | None, int, Hit | None]:
    """Two-level reading: skim each chunk (title + first sentence + its terms), read the best one; and the
    chunk that holds most of what the best one lacks (a question about "the customer that hosts our canary
    robots" matches one section, and that customer's uptime is in another), if any."""
    chunks = knowledge.chunks_of(doc_id, principals)
    if not chunks:
        return None, 0, None
    if len(chunks) == 1:
        return chunks[0], 1, None

    def skim(hit: Hit) -> float:
        first = (sentences(hit.text) or [""])[0]
        return len(focus & term_set(hit.text)) + 0.5 * len(focus & term_set(first)) - 0.01 * chunks.index(hit)

    best = max(chunks, key=skim)
    if not with_rest:
        return best, len(chunks), None
    lacking = focus - term_set(best.text) - term_set(best.title)
    gains = [(len(lacking & term_set(c.text)), -i, c) for i, c in enumerate(chunks) if c is not best]
    gain, _, rest = max(gains, key=lambda g: g[:2]) if lacking else (0, 0, None)
    return best, len(chunks), rest if gain else None


def _parent_for(
    doc_id: str,
    knowledge: KnowledgeReader,
    principals: frozenset[str],
    seed_docs: list[tuple[str, str | None]],
    by_id: dict[str, Evidence],
    evidence: list[Evidence],
) -> str | None:
    """The evidence adjacent to an expanded document, if any: the chain it hangs from."""
    anchors = {e["doc_id"]: e["id"] for e in evidence if e["relevance"] >= THRESHOLDS.relevant}
    for neighbor in knowledge.neighbors([doc_id], principals):
        if neighbor.doc_id in anchors:
            return anchors[neighbor.doc_id]
    return None


def evidence_from_hit(
    eid: str, hit: Hit, turn: int, rnd: int, via: str, parent: str | None, score: float
) -> Evidence:
    return {
        "id": eid,
        "chunk_id": hit.chunk_id,
        "doc_id": hit.doc_id,
        "title": hit.title,
        "url": hit.url,
        "source": hit.source,
        "kind": hit.kind,
        "text": hit.text[:SNIPPET_CHARS],
        "updated_at": hit.updated_at,
        "version": hit.version,
        "turn": turn,
        "round": rnd,
        "via": via,
        "parent": parent,
        "score": float(score),
        "dense": 0.0,
        "relevance": 0.0,
    }


def next_evidence_number(evidence: list[Evidence]) -> int:
    return max((int(e["id"][1:]) for e in evidence if e["id"][1:].isdigit()), default=0)
