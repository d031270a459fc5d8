"""compose: answer units that fit the question, each cited.

- a fact: the best unit of the chain's answering passage (a sentence, or a table row with its column names);
  after a hop, the bridge unit first ("ENG-150 is blocked by Supplier 8 [1]"), then the final fact [2];
- a list or procedure: the whole list block the best unit belongs to (a checklist page asked as a whole: each
  section's list under its heading);
- a comparison: one line per side, each cited, then which side the question picks when both carry a
  comparable value (a date, a number);
- nothing established: no claim; the closest units are offered separately, marked as such.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from connectors.text import STOPWORDS, TICKET_KEY, normalise, tokens
from graph_flows.reading import (
    DIMENSIONS,
    TYPED_KINDS,
    UNIT_SEPARATOR,
    YEAR,
    Unit,
    asked_dimension,
    corrected,
    has_answer_shape,
    holds,
    precise_date,
    raises_a_question,
    shows_type,
    stem,
    term_set,
    values,
)
from graph_flows.reasoners.base import ComposedSentence, Composition, Lexicon
from graph_flows.reasoners.offline import weights as w
from graph_flows.reasoners.offline.language import (
    another_of,
    asked_class,
    asked_head,
    constraint_words,
    pick_direction,
    subordinate_terms,
)
from graph_flows.reasoners.offline.reflect import (
    asked_question,
    aspect_kind,
    bridge_unit,
    context_terms,
    dense_support,
    dense_text,
    focus_row,
    is_entity_passage,
    key_mentioned,
    mention_unit,
    mentions_all,
    names_set_aside,
    readable_units,
    says_any,
)
from graph_flows.state import Evidence

_ASKS_WHAT = re.compile(r"^\s*(?:and\s+|so\s+)?what\b", re.I)


def compose(
    plan: dict[str, Any],
    evidence: Sequence[Evidence],
    established: dict[str, list[str]],
    lexicon: Lexicon,
) -> Composition:
    by_id = {e["id"]: e for e in evidence}
    out: list[ComposedSentence] = []
    seen: set[str] = set()

    def say(text: str, eid: str, aspect: str | None) -> None:
        key = normalise(text)
        if key and key not in seen:
            seen.add(key)
            out.append(ComposedSentence(text=text, cites=[eid], aspect=aspect))

    side_values: list[tuple[str, str, str]] = []  # (side, value, evidence id) for a comparison's pick
    table = side_by_side(plan, evidence, lexicon) if plan.get("comparison") and established else []
    for text, cited in table:
        say(text, cited, None)
    for aspect in [] if table else plan["aspects"]:
        kind = aspect_kind(plan, aspect)
        question = asked_question(plan, aspect)
        chain = established.get(aspect["id"], [])
        weights = {t: lexicon.idf(t) for t in aspect["terms"]}
        bridged: set[str] = set()  # what the chain's earlier links say: the answer says the rest
        for i, eid in enumerate(chain):
            e = by_id.get(eid)
            if e is None:
                continue
            nxt = by_id.get(chain[i + 1]) if i + 1 < len(chain) else None
            if nxt is not None:
                bridge = bridge_unit(e, nxt, lexicon) or mention_unit(e, nxt)
                if bridge:
                    say(bridge, eid, aspect["id"])
                    bridged |= term_set(bridge) | term_set(e["title"])
                continue
            if kind == "list":
                listed = list_answer(e, aspect, weights, question, lexicon, evidence)
                if listed:
                    for text, cited in listed:
                        say(text, cited, aspect["id"])
                    continue
            if len(chain) > 1:
                # after a hop the question's own names belong to the first link; this passage answers the
                # relation ("the supplier's delivery date"), so the relation's words pick its unit
                named = {t for name in aspect["entities"] for t in term_set(name)}
                held = frozenset(bridged)
                weights = (
                    {t: v for t, v in weights.items() if t not in named and not holds(held, t)}
                    or {t: v for t, v in weights.items() if t not in named}
                    or weights
                )
            else:
                # a clause picking out the occasion ("whose Reno site went down") found the document; the rest
                # of the question picks the unit
                clause = subordinate_terms(question)
                weights = {t: v for t, v in weights.items() if t not in clause} or weights
            others = _other_sides(plan, aspect)
            asked = aspect["text"] if plan.get("comparison") else question  # a side is read for itself
            # a compared side is described from all its page says; a fact from the passage that holds it, or,
            # when its words are the page's title ("the range" in "Fen Range Specifications"), from the row
            # that says it in another passage of the page
            parts = same_document(e, evidence)
            aside = names_set_aside(aspect, lexicon)
            picked = best_units(
                parts,
                weights,
                kind,
                asked,
                lexicon,
                avoid=others,
                label=constraint_words(aspect["text"]),
                aside=aside,
                member=another_of(question) if aside else None,
            )
            if (
                kind == "thing"
                and picked
                and len(chain) == 1
                and not plan.get("comparison")
                # "what should I wear": no one value is asked of anything ("what's the street address")
                and _ASKS_WHAT.match(question)
                and not asked_head(question)
            ):
                listed = enclosing_lists(picked[0][0], by_id[picked[0][1]], evidence)
                for text, cited in listed:
                    say(text, cited, aspect["id"])
                if listed:
                    continue
            if len(chain) > 1 and picked and asked_class(question):
                picked += _naming_unit(picked, parts, aspect["entities"], lexicon)
            if not plan.get("comparison") and picked:
                named = {t for name in aspect["entities"] for t in term_set(name)}
                onward = named_passages(picked, evidence, lexicon)
                picked += cover_rest(picked, [*same_document(e, evidence), *onward], weights, kind, named)
                picked += corrections(picked, same_document(e, evidence))
                if (
                    kind == "explanation"
                    and onward
                    and not any(
                        eid in {o["id"] for o in onward} and has_answer_shape(u.text, kind)
                        for u, eid in picked
                    )
                ):
                    # "blocked by ENG-150": the reason is what the named item says, one step on: a sentence of
                    # it that gives a cause where one does ("the rev C units are late"), not its summary
                    reasons = scored_units(onward, weights, kind, asked, lexicon)
                    causes = [r for r in reasons if has_answer_shape(r[1].text, kind)] or reasons
                    picked += [(u, eid) for _, u, eid in causes[:1]]
            focus = constraint_words(aspect["text"])
            for unit, cited in picked[:3]:
                say(unit_text(unit, focus), cited, aspect["id"])
            if plan.get("comparison") and picked:
                unit, cited = picked[0]
                value = _comparable(unit_text(unit, focus), kind)
                if value:
                    side = aspect["entities"][0] if aspect["entities"] else ""
                    side_values.append((side, value, cited))
    for text, cites in [] if table else aligned_sections(plan, evidence, established):
        key = normalise(text)
        if key not in seen:
            seen.add(key)
            out.append(ComposedSentence(text=text, cites=cites, aspect=None))
    if plan.get("comparison") and len(side_values) == len(plan["aspects"]) >= 2:
        pick = _pick(side_values, plan.get("effective_question", ""))
        if pick:
            out.append(pick)
    related: list[ComposedSentence] = []
    unknown_item = any(
        TICKET_KEY.fullmatch(k) and not lexicon.resolve(k) and not key_mentioned(k, evidence)
        for k in plan.get("entities", [])
    )
    if not out and not unknown_item:
        related = closest(plan, evidence, lexicon, seen)
    return Composition(sentences=out, answered=bool(out), related=related)


def side_by_side(
    plan: dict[str, Any], evidence: Sequence[Evidence], lexicon: Lexicon
) -> list[tuple[str, str]]:
    """A comparison one table answers whole: the row of the asked attribute cut to the sides' columns ("Spec:
    Payload · Pallas P3: 600 kg · Pallas P4: 1,000 kg"), or, where each side has its own row, those rows cut to
    the attribute's column. Read from one table the sides are measured alike; nothing when no row or column
    names the attribute."""
    sides = [a["entities"][0] for a in plan["aspects"] if a["entities"]]
    side_terms = [name_words(side) for side in sides]
    if len(sides) < 2 or not all(side_terms):
        return []
    attribute = {
        t: lexicon.idf(t)
        for a in plan["aspects"]
        for t in a["terms"]
        if not any(t in own for own in side_terms)
    }
    # "how much bigger is X's battery": the battery is the dimension, "bigger" only says how to compare
    dimensions = {stem(d) for d in DIMENSIONS.values()}
    readings = [attribute, {t: v for t, v in attribute.items() if t not in dimensions}]
    readings = [r for r in readings if sum(r.values())]
    if not readings:
        return []

    def share(text: str) -> float:
        held = term_set(text)
        return max(sum(v for t, v in r.items() if holds(held, t)) / sum(r.values()) for r in readings)

    best: tuple[float, list[tuple[str, str]]] = (0.0, [])
    for e in evidence:
        rows = [u for u in readable_units(e) if u.kind == "row"]
        for unit in rows:  # sides as columns: one row holds every side's value
            cells = _cells_of(unit)
            columns = [i for i, (name, _) in enumerate(cells) if i and _names_a_side(name, side_terms)]
            found = {j for i in columns for j, own in enumerate(side_terms) if own <= name_words(cells[i][0])}
            score = share(f"{cells[0][1]} {unit.heading}")
            if len(found) == len(sides) and score > best[0]:
                best = (score, [(_cut(cells, [0, *columns]), e["id"])])
        blocks: dict[int, list[Unit]] = {}
        for unit in rows:
            blocks.setdefault(unit.block, []).append(unit)
        for block in blocks.values():  # sides as rows: each side's row, cut to the attribute's column
            header = _cells_of(block[0])
            column, score = max(
                ((i, share(name)) for i, (name, _) in enumerate(header) if i),
                key=lambda item: item[1],
                default=(0, 0.0),
            )
            mine = [u for own in side_terms for u in block if own <= name_words(u.label)][: len(sides)]
            if column and len({u.label for u in mine}) == len(sides) and score > best[0]:
                best = (score, [(_cut(_cells_of(u), [0, column]), e["id"]) for u in mine])
    return best[1] if best[0] >= w.TABLE_ATTRIBUTE else []


def aligned_sections(
    plan: dict[str, Any], evidence: Sequence[Evidence], established: dict[str, list[str]]
) -> list[tuple[str, list[str]]]:
    """ "How do X and Y differ?" where each side has its own page written to one pattern (both have a Cadence,
    a Filing section): the sections both pages have, each side's first line there, side by side ("Cadence: iOS
    Crash Triage: weekly on Wednesdays [1] · Android Crash Triage: Tuesdays and Thursdays [2]"). Nothing for a
    comparison that picks a side ("which is cheaper"): its value lines answer it."""
    by_id = {e["id"]: e for e in evidence}
    chains = [established.get(a["id"]) or [""] for a in plan["aspects"]]
    sides = [by_id[chain[-1]] for chain in chains if chain[-1] in by_id]
    if (
        not plan.get("comparison")
        or pick_direction(plan.get("effective_question", ""))
        or len(sides) < 2
        or len(sides) != len(chains)  # every side established
        or len({e["doc_id"] for e in sides}) != len(sides)  # on pages of its own
    ):
        return []
    firsts: list[dict[str, tuple[Unit, str]]] = []
    for e in sides:
        found: dict[str, tuple[Unit, str]] = {}
        for part in sorted(same_document(e, evidence), key=_chunk_order):  # in the page's own order
            for unit in readable_units(part):
                heading = normalise(unit.heading)
                if heading and heading != normalise(part["title"]) and len(tokens(unit.text)) >= 3:
                    found.setdefault(heading, (unit, part["id"]))
        firsts.append(found)
    shared = [h for h in firsts[0] if all(h in other for other in firsts[1:])]
    lines = []
    for heading in shared[: w.ALIGNED_SECTIONS]:
        picked = [found[heading] for found in firsts]
        if len({normalise(unit.text) for unit, _ in picked}) < len(picked):
            continue  # the same line on both pages: no difference to show
        said = f" {UNIT_SEPARATOR.strip()} ".join(
            f"{by_id[eid]['title']}: {unit.text}" for unit, eid in picked
        )
        lines.append((f"{picked[0][0].heading}: {said}", [eid for _, eid in picked]))
    return lines


def _cells_of(unit: Unit) -> list[tuple[str, str]]:
    """A row's (column name, value) pairs as rendered ("Spec: Payload" -> ("Spec", "Payload"))."""
    out = []
    for cell in unit.text.split(UNIT_SEPARATOR):
        name, _, value = cell.partition(": ")
        out.append((name, value) if value else ("", name))
    return out


def name_words(name: str) -> frozenset[str]:
    """The words of a name, numbers kept ("Fen 7" is not "Fen 5")."""
    return frozenset(t for t in tokens(name) if t not in STOPWORDS)


def _names_a_side(column: str, side_terms: Sequence[frozenset[str]]) -> bool:
    held = name_words(column)
    return any(own <= held for own in side_terms)


def _cut(cells: list[tuple[str, str]], keep: Sequence[int]) -> str:
    return UNIT_SEPARATOR.join(f"{cells[i][0]}: {cells[i][1]}" if cells[i][0] else cells[i][1] for i in keep)


def closest(
    plan: dict[str, Any], evidence: Sequence[Evidence], lexicon: Lexicon, seen: set[str]
) -> list[ComposedSentence]:
    """The closest units when nothing answers: shown apart, marked as possibly not answering."""
    question = plan.get("effective_question", "")
    weights = {t: lexicon.idf(t) for a in plan["aspects"] for t in a["terms"]}
    ranked = sorted(evidence, key=lambda e: -e.get("relevance", 0.0))[:3]
    scored = []
    for e in ranked:
        if e.get("relevance", 0.0) < w.RELEVANT:
            continue
        best = scored_units([e], weights, plan["answer_type"], question, lexicon)[0]
        scored.append((best[0], unit_text(best[1]), e))
    out: list[ComposedSentence] = []
    for score, text, e in sorted(scored, key=lambda item: -item[0])[:3]:
        if score >= w.RELATED_MIN and normalise(text) not in seen:
            seen.add(normalise(text))
            out.append(ComposedSentence(text=text, cites=[e["id"]]))
    return out


def unit_text(unit: Unit, focus: Sequence[str] = ()) -> str:
    """A unit as the answer quotes it: a table row keeps its column names (only the asked columns and the
    row's label when the question names some: "Spec: Top speed · P4: 2.0 m/s", not every sibling's value);
    a short list item its heading."""
    if unit.kind == "item" and unit.heading and len(tokens(unit.text)) < 12:
        return f"{unit.heading}: {unit.text}"
    if unit.kind == "row":
        return focus_row(unit.text, focus)
    return unit.text


def list_answer(
    e: Evidence,
    aspect: dict[str, Any],
    weights: dict[str, float],
    question: str,
    lexicon: Lexicon,
    evidence: Sequence[Evidence],
) -> list[tuple[str, str]]:
    """The list block that answers a list or procedure question, as (text, evidence id) lines. When the
    question asks for a document as a whole ("what is on the iOS release checklist?"), every list of that
    document read so far, under its heading, in reading order."""
    if is_entity_passage(e, aspect["entities"]) and not _asks_more_than_title(e, aspect):
        return _page_lists(e, evidence)
    # the list may sit in another passage of the same page ("## Steps" after "## Before you start")
    parts = same_document(e, evidence)
    ranked = scored_units(parts, weights, "list", question, lexicon, prefer_first=False)
    best, eid = next(((u, i) for _, u, i in ranked if u.block >= 0 and u.kind in {"item", "row"}), (None, ""))
    if best is None:
        return []
    _, top, top_id = ranked[0]
    if (
        top_id == e["id"]
        and top.block < 0
        and not any(u.block >= 0 and u.heading == top.heading for u in readable_units(e))
        and not _LIST_NOUNS & set(aspect["terms"])
    ):
        # "how do I flag a dodgy email": the passage that answers says it in a sentence of a section with no
        # list ("Phishing: use the Report phishing button"), better than any list does; a list of another
        # section ("What counts") is not the answer, unless the question asks for steps or items
        return []
    home = next(p for p in parts if p["id"] == eid)
    block = [u for u in readable_units(home) if u.block == best.block]
    if best.heading:  # a list cut by chunking continues under the same heading in the page's other passages
        items = [
            u
            for part in sorted(parts, key=_chunk_order)
            for u in readable_units(part)
            if u.heading == best.heading and u.kind == best.kind and u.block >= 0
        ]
        block = list({u.text: u for u in items}.values()) or block
    return [(_bullets(best.heading, block[: w.MAX_LIST_ITEMS], len(block)), eid)]


def _page_lists(e: Evidence, evidence: Sequence[Evidence]) -> list[tuple[str, str]]:
    """Every list of `e`'s document read so far, under its heading, in reading order."""
    lines: list[tuple[str, str]] = []
    shown = 0
    for part in sorted((x for x in evidence if x["doc_id"] == e["doc_id"]), key=_chunk_order):
        blocks: dict[int, list[Unit]] = {}
        found = readable_units(part)
        for unit in found:
            if unit.kind in {"item", "row"} and unit.block >= 0:
                blocks.setdefault(unit.block, []).append(unit)
        for items in blocks.values():
            if shown >= w.MAX_LIST_ITEMS:
                break
            room = items[: w.MAX_LIST_ITEMS - shown]
            shown += len(room)
            # a section's rule stated in prose next to its list ("advance only if crash-free >= 99.5%")
            rules = [u for u in found if u.kind == "sentence" and u.heading == items[0].heading and u.heading]
            lines.append((_bullets(items[0].heading, room, len(items), rules[: w.SECTION_PROSE]), part["id"]))
    return lines


def enclosing_lists(unit: Unit, e: Evidence, evidence: Sequence[Evidence]) -> list[tuple[str, str]]:
    """A "what" answered by one item of a list is answered by its list ("what should I wear": each item under
    "Personal protective equipment"); one answered by the opening sentence of a page made of lists (a
    checklist's "to be completed by the shift lead before the first frame is loaded"), by the page's lists."""
    parts = sorted(same_document(e, evidence), key=_chunk_order)
    read = [u for part in parts for u in readable_units(part)]
    if unit.kind == "item" and unit.block >= 0:
        items = list({u.text: u for u in read if u.kind == "item" and u.heading == unit.heading}.values())
        return (
            [(_bullets(unit.heading, items[: w.MAX_LIST_ITEMS], len(items)), e["id"])]
            if len(items) > 1
            else []
        )
    opens = bool(read) and read[0].text == unit.text and _chunk_order(parts[0])[0] == 0
    listed = sum(u.kind == "item" for u in read)
    return _page_lists(e, evidence) if opens and listed * 2 >= len(read) else []


# the words a question asks for a list by, whatever it is a list of
_LIST_NOUNS = term_set("list steps step procedure process checklist items item things")


def _asks_more_than_title(e: Evidence, aspect: dict[str, Any]) -> bool:
    """Whether the aspect asks about something inside the document, beyond naming it."""
    own = term_set(e["title"]) | {t for name in aspect["entities"] for t in term_set(name)}
    return any(t not in own and t not in _LIST_NOUNS for t in aspect["terms"])


def _bullets(heading: str, items: Sequence[Unit], total: int, prose: Sequence[Unit] = ()) -> str:
    lines = [f"{heading}:" if heading else ""] + [f"• {u.text}" for u in items]
    if total > len(items):
        lines.append(f"• … and {total - len(items)} more")
    lines += [u.text for u in prose]
    return "\n".join(line for line in lines if line)


def _chunk_order(e: Evidence) -> tuple[int, str]:
    tail = e["chunk_id"].rsplit("#", 1)[-1]
    return (int(tail), e["chunk_id"]) if tail.isdigit() else (0, e["chunk_id"])


def _other_sides(plan: dict[str, Any], aspect: dict[str, Any]) -> frozenset[str]:
    """In a comparison, the words that name the other sides and not this one ("Android" for the iOS side)."""
    if not plan.get("comparison"):
        return frozenset()
    own = {t for name in aspect["entities"] for t in term_set(name)}
    return (
        frozenset(
            t for a in plan["aspects"] if a is not aspect for name in a["entities"] for t in term_set(name)
        )
        - own
    )


def best_units(
    parts: Sequence[Evidence],
    weights: dict[str, float],
    kind: str,
    question: str,
    lexicon: Lexicon,
    *,
    avoid: frozenset[str] = frozenset(),
    label: Sequence[str] = (),
    aside: Sequence[str] = (),
    member: str | None = None,
) -> list[tuple[Unit, str]]:
    """The best unit, and the runner-up when it scores nearly as well (questions often ask two things). In a
    comparison, a unit that names another side speaks of the contrast, not of this side: it comes last. A
    table row whose label is the name the question asks about ("Plan: Pro") is that thing's row, ahead of a
    row that only mentions it ("Everything in Pro"). Where the question sets names aside and asks for another
    member of a class ("besides Northwind, has any other customer..."), a unit saying a name set aside comes
    last, and a row naming a member by its column ("Customer: Harborview Grocers") first."""
    ranked = scored_units(parts, weights, kind, question, lexicon)
    if label:
        ranked = sorted(
            ranked,
            key=lambda item: -(item[0] + (w.ROW_LABEL if _labelled(item[1], label) else 0.0)),
        )
    if avoid:
        ranked = sorted(
            ranked,
            key=lambda item: bool(avoid & term_set(item[1].text)) and not _labelled(item[1], label),
        )
    if aside:
        ranked = sorted(
            ranked,
            key=lambda item: (
                says_any(aside, item[1].text),
                not (member and _names_member(item[1], member)),
            ),
        )
        ranked = [item for item in ranked if not says_any(aside, item[1].text)] or ranked
    return [(u, eid) for score, u, eid in ranked[:2] if score >= w.RUNNER_UP * ranked[0][0]]


def _names_member(unit: Unit, member: str) -> bool:
    """A row naming a member of the class by its column ("Customer: Harborview Grocers" for "customer")."""
    return unit.kind == "row" and any(name and stem(name.lower()) == member for name, _ in _cells_of(unit))


def _labelled(unit: Unit, names: Sequence[str]) -> bool:
    return unit.kind == "row" and bool(unit.label) and mentions_all(names[:1], [unit.label])


def scored_units(
    parts: Sequence[Evidence],
    weights: dict[str, float],
    kind: str,
    question: str,
    lexicon: Lexicon,
    *,
    prefer_first: bool = True,
) -> list[tuple[float, Unit, str]]:
    """Units of a document's passages read so far, by how well they answer: their own terms and their
    context's (heading, title), the dense similarity of the unit read with its heading, the answer's shape."""
    total = sum(weights.values()) or 1.0
    candidates: list[tuple[Unit, Evidence]] = []
    for e in parts:
        title = normalise(e["title"])
        candidates += [(u, e) for u in readable_units(e) if len(u.text) > 3 and normalise(u.text) != title]
    # a sentence raising the question (the ticket asking the same thing) matches its words best and answers
    # nothing: the reply under it does ("Answered: annual prepay is 15% off list")
    candidates = [c for c in candidates if not raises_a_question(c[0].text)] or candidates
    candidates = candidates[: w.MAX_UNITS] or [(Unit("sentence", parts[0]["title"]), parts[0])]
    texts = [dense_text(e, u) for u, e in candidates]
    sims = lexicon.similarity(question, texts) if question else [0.0] * len(candidates)
    dimension = asked_dimension(question)
    wanted = asked_head(question) or ([dimension] if dimension else [])
    scored = []
    for i, ((unit, e), sim) in enumerate(zip(candidates, sims, strict=True)):
        unit_terms = term_set(unit.text)
        around = context_terms(e, unit)
        # a type noun is held by a unit showing that type ("email": an address)
        in_unit = {t for t in weights if holds(unit_terms, t) or shows_type(unit.text, t)}
        own = sum(weights[t] for t in in_unit) / total
        cov = sum(v for t, v in weights.items() if t in in_unit or holds(around, t)) / total
        if has_answer_shape(unit.text, kind):
            shape = w.CAUSE_BONUS + w.SHAPE_BONUS if kind == "explanation" else w.SHAPE_BONUS
        else:  # "when" answered by a sentence with no date in it is not an answer, however close its words, nor
            # a "why" by one giving no cause ("Status: blocked by QA-57" over the release ticket's summary)
            shape = -w.SHAPELESS if kind in TYPED_KINDS or kind == "explanation" else 0.0
        heading = w.HEADING_ONLY if len(tokens(unit.text)) < 5 and unit.kind == "sentence" else 0.0
        # the passage reflect established it with (a list is wherever its heading says what is asked)
        chosen = w.CHOSEN_PASSAGE if e is parts[0] and prefer_first else 0.0
        # the unit itself names the dimension asked ("Range: 90 km" for "how far"), not only its page's title
        if wanted:  # the unit or its heading names what is asked a value of, not only the page's title
            named = unit_terms | term_set(unit.heading) if unit.heading != e["title"] else unit_terms
            said = all(holds(named, t) or shows_type(unit.text, t) for t in wanted)
            shape += w.SHAPE_BONUS if said else -w.SHAPELESS / 2
        score = 0.5 * (cov + own) + 0.8 * dense_support(sim) + shape + chosen - heading - 0.01 * i
        scored.append((score, unit, e["id"]))
    return sorted(scored, key=lambda item: -item[0])


def cover_rest(
    picked: Sequence[tuple[Unit, str]],
    parts: Sequence[Evidence],
    weights: dict[str, float],
    kind: str,
    named: set[str],
) -> list[tuple[Unit, str]]:
    """What the chosen units leave unsaid: a question that asks two things ("which ticket, and when?"), or
    whose answer sits one sentence past the one that matches it ("the customer that hosts our canary robots"
    -> that customer's uptime), gets the unit that covers most of the rest, when it covers enough of it, and
    the expected answer's shape when the chosen units lack it."""
    total = sum(weights.values()) or 1.0
    by_id = {e["id"]: e for e in parts}
    said = {normalise(u.text) for u, _ in picked}
    held: set[str] = set()
    for unit, eid in picked:
        held |= term_set(unit.text) | term_set(unit.heading)
        if eid in by_id:
            held |= term_set(by_id[eid]["title"])
    rest = {
        t: v
        for t, v in weights.items()
        if t not in named
        and not holds(frozenset(held), t)
        and not any(shows_type(u.text, t) for u, _ in picked)
    }
    shaped = kind not in TYPED_KINDS or any(has_answer_shape(u.text, kind) for u, _ in picked)
    if kind == "date" and not any(precise_date(u.text) for u, _ in picked):
        # "when is the Q2 maintenance planned?" is not answered by the title's "Q2 2026": the day is asked
        shaped = False
    if not rest and shaped:
        return []
    best: tuple[float, Unit | None, str] = (0.0, None, "")
    for e in parts:
        for unit in readable_units(e):
            if normalise(unit.text) in said or len(tokens(unit.text)) < 3:
                continue
            own = term_set(unit.text) | term_set(unit.heading)
            gain = sum(v for t, v in rest.items() if holds(own, t) or shows_type(unit.text, t)) / total
            if not shaped and (
                precise_date(unit.text) if kind == "date" else has_answer_shape(unit.text, kind)
            ):
                gain += w.SHAPE_BONUS
            if gain > best[0]:
                best = (gain, unit, e["id"])
    gain, unit, eid = best
    return [(unit, eid)] if unit is not None and gain >= w.COVER_GAIN else []


def _naming_unit(
    picked: Sequence[tuple[Unit, str]], parts: Sequence[Evidence], entities: Sequence[str], lexicon: Lexicon
) -> list[tuple[Unit, str]]:
    """After a hop, a "which customer" is answered by a name: where the chosen units name no one the question
    does not ("Told the customer that aggregates are available"), the passage's first unit that does ("Northwind
    wants to export last quarter's raw telemetry") is quoted too."""
    asked = {normalise(n) for n in entities}

    def names(text: str) -> bool:
        return any(normalise(n) not in asked for n in lexicon.names_in(text))

    if any(names(unit.text) for unit, _ in picked):
        return []
    said = {normalise(unit.text) for unit, _ in picked}
    found = ((u, e["id"]) for e in parts for u in readable_units(e) if normalise(u.text) not in said)
    first = next(((u, eid) for u, eid in found if names(u.text)), None)
    return [first] if first else []


def corrections(picked: Sequence[tuple[Unit, str]], parts: Sequence[Evidence]) -> list[tuple[Unit, str]]:
    """Units of the same document that say a chosen unit's value is wrong ("measured: 8.5 hours, not 10 hours"
    in a comment under "the datasheet promises 10 hours"): the current statement, quoted after the one it
    corrects, so the answer never states the outdated value alone."""
    stated = {v for unit, _ in picked for v in values(unit.text)}
    said = {normalise(unit.text) for unit, _ in picked}
    out: list[tuple[Unit, str]] = []
    for e in parts:
        for unit in readable_units(e):
            if normalise(unit.text) not in said and corrected(unit.text) & stated:
                said.add(normalise(unit.text))
                out.append((unit, e["id"]))
    return out[:1]


def named_passages(
    picked: Sequence[tuple[Unit, str]], evidence: Sequence[Evidence], lexicon: Lexicon
) -> list[Evidence]:
    """The passages read so far of the documents the chosen units name ("blocked by ENG-150")."""
    docs = {
        doc for unit, _ in picked for name in lexicon.names_in(unit.text) for doc in lexicon.resolve(name)
    }
    cited = {eid for _, eid in picked}
    return [e for e in evidence if e["doc_id"] in docs and e["id"] not in cited]


def same_document(e: Evidence, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The passages of `e`'s document read so far, `e` first, then in reading order: a document answers, not
    one chunk of it."""
    others = sorted(
        (x for x in evidence if x["doc_id"] == e["doc_id"] and x["id"] != e["id"]), key=_chunk_order
    )
    return [e, *others]


def _comparable(text: str, kind: str) -> str | None:
    """The value a comparison can be decided on: a date or year, else a quantity."""
    years = YEAR.findall(text)
    if years and kind in {"date", "choice", "thing", "yesno"}:
        return years[0]
    found = sorted(values(text))
    return found[0] if found and kind in {"number", "money", "choice"} else None


def _pick(side_values: list[tuple[str, str, str]], question: str) -> ComposedSentence | None:
    direction = pick_direction(question)
    numbers = []
    for side, value, eid in side_values:
        m = re.search(r"\d[\d,]*(?:\.\d+)?", value)
        if not m or not side:
            return None
        numbers.append((float(m.group(0).replace(",", "")), side, value, eid))
    if direction is None or len({n for n, *_ in numbers}) < len(numbers):
        return None
    chosen = min(numbers) if direction == "low" else max(numbers)
    others = [f"{side} ({value})" for n, side, value, _ in numbers if n != chosen[0]]
    return ComposedSentence(
        text=f"So the answer is {chosen[1]}: {chosen[2]}, against {', '.join(others)}.",
        cites=[eid for *_, eid in numbers],
    )
