"""Scripted models for the simulator that read Sleuth's prompts the way a model would: the step from the system
prompt, the passages from the data block, the question from the fields after it.

- `Faithful`: plans the question as one aspect, judges passages by the words they share with it, and composes
  from the best sentence of each established passage, *paraphrased* the way models do (dates written out,
  "24 hours" as "24h", "$2,500" as "$2.5k", some verbs swapped) with the sentence quoted verbatim.
- `Sloppy`: the same, except that it changes a number ("12 days" -> "2 days") or negates a claim where it
  can, and keeps doing so when asked to repair. It remembers every unfaithful sentence it wrote, so a test can
  check that none of them reached the answer.
- `OverEstablishing`: the faithful model that over-claims, as many hosted models do: it establishes every
  aspect on the passages it is shown, however little they say about it, and composes from them with
  `answered: true`; its quotes are verbatim, so only relevance (not fidelity) tells its answers from its
  declines. Asked the injected question, it quotes the injected sentence. It keeps every sentence it wrote.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from graph_flows.reading import term_set
from graph_flows.reasoners.prompts import DATA_CLOSE, DATA_OPEN
from tests.servers.model_sim import Turn

_PIECES = re.compile(r"(?<=[.!?])\s+|\s…\s|\n+")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_HOURS = re.compile(r"\b(\d+) hours\b")
_THOUSANDS = re.compile(r"\$(\d{1,3}),(\d)00\b")
_SWAPS = {" must ": " has to ", " requires ": " needs ", " before ": " prior to ", " about ": " around "}
_NUMBER = re.compile(r"(?<![\w.\-])(\d+)(?=[\s%.,]|$)")
_COPULA = re.compile(r"\b(is|are|was|were|must|will|can|should)\b")


_TASK = re.compile(r"Task: (plan|reflect|compose)\b")


def step_of(turn: Turn) -> str | None:
    """plan, reflect or compose, as the request's last `Task:` line names it; None when the instructions did
    not reach the model (a cut prompt)."""
    if not re.search(r"\bStep (plan|reflect|compose)\b", turn.system):
        return None
    found = [m.group(1) for msg in turn.messages for m in _TASK.finditer(msg["content"])]
    return found[-1] if found else None


def passages(turn: Turn) -> list[dict[str, Any]]:
    if DATA_OPEN not in turn.user or DATA_CLOSE not in turn.user:
        return []
    block = turn.user.split(DATA_OPEN, 1)[1].split(DATA_CLOSE, 1)[0]
    try:
        return list(json.loads(block))
    except json.JSONDecodeError:
        return []


def fields(turn: Turn) -> dict[str, Any]:
    """The JSON fields of the request: the plan message, or what follows the data block."""
    text = turn.user.split(DATA_CLOSE, 1)[1] if DATA_CLOSE in turn.user else turn.user
    try:
        value = json.JSONDecoder().raw_decode(text.strip())[0]
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def question_of(turn: Turn) -> str:
    return str(fields(turn).get("question") or "")


def overlap(question: str, text: str) -> float:
    wanted = term_set(question)
    return len(wanted & term_set(text)) / len(wanted) if wanted else 0.0


def paraphrase(sentence: str, title: str) -> str:
    """The same fact in other words and formats: what a faithful model writes."""
    text = _ISO.sub(lambda m: f"{int(m[3])} {date(2000, int(m[2]), 1):%B} {m[1]}", sentence)
    text = _HOURS.sub(r"\1h", text)
    text = _THOUSANDS.sub(r"$\1.\2k", text)
    for old, new in _SWAPS.items():
        text = text.replace(old, new)
    return f"According to {title}, {text[0].lower()}{text[1:]}" if text else text


@dataclass
class Faithful:
    established_share: float = (
        0.5  # share of the question's terms a passage must hold to count as established
    )
    per_answer: int = 3
    unfaithful: set[str] = field(default_factory=set)

    def __call__(self, turn: Turn) -> dict[str, Any] | str:
        step = step_of(turn)
        if step is None:
            return "I'm not sure what you would like me to do with this text."
        return getattr(self, step)(turn)

    def plan(self, turn: Turn) -> dict[str, Any]:
        question = question_of(turn)
        return {
            "aspects": [{"text": question, "entities": None}],
            "entities": None,
            "answer_type": "thing",
            "comparison": False,
            "direction": "text",
            "queries": [question],
            "followup": False,
            "effective_question": None,
        }

    def reflect(self, turn: Turn) -> dict[str, Any]:
        question = question_of(turn)
        scored = sorted(
            ((overlap(question, f"{p['title']} {p['text']}"), p["id"]) for p in passages(turn)), reverse=True
        )
        chain = [pid for score, pid in scored if score >= self.established_share][: self.per_answer]
        return {
            "relevance": [{"id": pid, "score": round(score, 2)} for score, pid in scored],
            "established": [{"aspect": "a1", "evidence": chain}] if chain else [],
            "missing": []
            if chain
            else [{"kind": "missing_source", "what": question, "clues": [], "aspect": "a1"}],
            "direction": "text",
            "entities": [],
            "queries": None,
        }

    def compose(self, turn: Turn) -> dict[str, Any]:
        question = question_of(turn)
        by_id = {p["id"]: p for p in passages(turn)}
        established = fields(turn).get("established") or {}
        chain = [eid for ids in established.values() for eid in ids if eid in by_id]
        sentences = []
        for eid in list(dict.fromkeys(chain))[: self.per_answer]:
            p = by_id[eid]
            pieces = [s.strip() for s in _PIECES.split(p["text"]) if len(s.strip()) > 20]
            if not pieces:
                continue
            best = max(pieces, key=lambda s: overlap(question, s))
            sentences.append(
                {"text": self.say(best, p["title"]), "cites": [eid], "quote": best, "aspect": "a1"}
            )
        return {"sentences": sentences, "gaps": [], "conflicts": [], "answered": bool(sentences)}

    def say(self, sentence: str, title: str) -> str:
        return paraphrase(sentence, title)


@dataclass
class Sloppy(Faithful):
    def say(self, sentence: str, title: str) -> str:
        text = paraphrase(sentence, title)
        number = _NUMBER.search(text)
        if number:
            digits = number.group(1)
            wrong = digits[1:] if len(digits) > 1 and digits[1] != "0" else str(int(digits) + 1)
            text = f"{text[: number.start()]}{wrong}{text[number.end() :]}"
        elif _COPULA.search(text):
            text = _COPULA.sub(lambda m: f"{m.group(1)} not", text, count=1)
        else:
            return text
        self.unfaithful.add(text)
        return text


@dataclass
class OverEstablishing(Faithful):
    per_answer: int = 2
    written: list[str] = field(default_factory=list)

    def reflect(self, turn: Turn) -> dict[str, Any]:
        question = question_of(turn)
        scored = sorted(
            ((overlap(question, f"{p['title']} {p['text']}"), p["id"]) for p in passages(turn)), reverse=True
        )
        chain = [pid for score, pid in scored if score > 0][: self.per_answer]
        return {
            "relevance": [{"id": pid, "score": max(0.8, round(score, 2))} for score, pid in scored],
            "established": [{"aspect": "a1", "evidence": chain}] if chain else [],
            "missing": [],
            "direction": "text",
            "entities": [],
            "queries": None,
        }

    def compose(self, turn: Turn) -> dict[str, Any]:
        reply = super().compose(turn)
        self.written += [s["quote"] for s in reply["sentences"]]
        return {**reply, "answered": bool(reply["sentences"])}

    def say(self, sentence: str, title: str) -> str:
        return sentence  # the quote itself, stated as the answer
