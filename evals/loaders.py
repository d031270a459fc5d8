"""Multi-hop question sets and their passage corpora, read into values and then into a cached knowledge store.

Three file formats (field names in ../shared/bench/data/SOURCES.md):
- "2wiki": questions `{id|_id, question, answer, answer_aliases?, supporting_facts}`; gold = the titles in
  `supporting_facts` (plain titles, or `[title, sentence]` pairs as in the original 2Wiki release).
- "musique": questions `{id, question, answer, answer_aliases, paragraphs[{title, paragraph_text,
  is_supporting}]}`; gold = the supporting paragraphs, matched by title + text (titles repeat).
- "hotpotqa": questions `{_id, question, answer, supporting_facts[[title, sent]]}`; gold = those titles.
A corpus is a list of `{title, text}` or a dict `title -> [sentences]` (any format may use either). Without a
corpus file the corpus is the union of the questions' own contexts (`paragraphs` or `context`).

Passages become public `SourceDoc`s (`"{set}:{n}"`, kind "passage"); the store makes their titles aliases and
mines title mentions into graph edges. Nothing here looks at a particular dataset's templates or names.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from connectors.base import PUBLIC, SourceDoc

FORMATS = ("2wiki", "musique", "hotpotqa")
KNOWN_SETS: dict[str, tuple[str, str, str]] = {  # name -> (format, questions, corpus) under the data dir
    "2wiki": ("2wiki", "2wikimultihopqa/dev.json", "2wikimultihopqa/2wikimultihopqa_corpus.json"),
    "musique": ("musique", "musique/musique_train.json", "musique/musique_train_corpus.json"),
    "hotpotqa": ("hotpotqa", "hotpotqa/hotpotqa_train.json", "hotpotqa/hotpotqa_train_corpus.json"),
}
MISSING_PREFIX = "missing:"  # gold passages absent from the corpus: they count against recall, never match
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_SPACE = re.compile(r"\s+")


class BenchDataError(ValueError):
    """A question or corpus file is missing or not in a format the loaders read."""


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...]  # the gold answer first, then its aliases
    gold: tuple[str, ...]  # doc ids (or `missing:<title>` when the corpus lacks a gold passage)


@dataclass
class BenchSet:
    name: str
    format: str
    passages: list[Passage]
    questions: list[Question]
    by_id: dict[str, Passage] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {p.doc_id: p for p in self.passages}

    def corpus_sha1(self) -> str:
        digest = hashlib.sha1()
        for p in self.passages:
            digest.update(json.dumps([p.doc_id, p.title, p.text], ensure_ascii=False).encode())
            digest.update(b"\n")
        return digest.hexdigest()

    @property
    def gold_missing(self) -> int:
        return sum(g.startswith(MISSING_PREFIX) for q in self.questions for g in q.gold)

    def source_docs(self) -> Iterator[SourceDoc]:
        for p in self.passages:
            yield SourceDoc(
                id=p.doc_id,
                source=self.name,
                kind="passage",
                title=p.title,
                text=p.text,
                updated_at=_EPOCH,
                acl=frozenset({PUBLIC}),
            )


# ---------------------------------------------------------------------- reading files
def load_known_set(name: str, data_dir: Path, *, limit: int | None = None) -> BenchSet:
    if name not in KNOWN_SETS:
        raise BenchDataError(f"unknown set {name!r}; known: {', '.join(KNOWN_SETS)}")
    fmt, questions, corpus = KNOWN_SETS[name]
    return load_set(name, data_dir / questions, data_dir / corpus, fmt, limit=limit)


def load_set(
    name: str,
    questions_path: Path,
    corpus_path: Path | None,
    fmt: str | None = None,
    *,
    limit: int | None = None,
) -> BenchSet:
    raw_questions = _read_json(questions_path)
    if not isinstance(raw_questions, list) or not all(isinstance(q, dict) for q in raw_questions):
        raise BenchDataError(f"{questions_path}: expected a JSON list of question objects")
    fmt = fmt or detect_format(raw_questions)
    if fmt not in FORMATS:
        raise BenchDataError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if limit is not None:
        raw_questions = raw_questions[:limit]
    pairs = parse_corpus(_read_json(corpus_path)) if corpus_path else _contexts(raw_questions)
    passages = [Passage(doc_id=f"{name}:{n}", title=t, text=x) for n, (t, x) in enumerate(_unique(pairs))]
    gold_index = _GoldIndex(passages)
    questions = [_question(raw, fmt, gold_index, n) for n, raw in enumerate(raw_questions)]
    return BenchSet(name=name, format=fmt, passages=passages, questions=questions)


def detect_format(raw_questions: list[dict[str, Any]]) -> str:
    first = raw_questions[0] if raw_questions else {}
    if "paragraphs" in first:
        return "musique"
    facts = first.get("supporting_facts") or []
    if "evidences" in first:  # the original 2Wiki release: (subject, relation, object) triples
        return "2wiki"
    if "_id" in first and facts and isinstance(facts[0], list) and "answer_aliases" not in first:
        return "hotpotqa"
    return "2wiki"


def parse_corpus(raw: Any) -> list[tuple[str, str]]:
    """A corpus as (title, text) pairs, in file order."""
    if isinstance(raw, dict):
        return [(str(title), _join_sentences(body)) for title, body in raw.items()]
    if isinstance(raw, list):
        out = []
        for item in raw:
            if not isinstance(item, dict) or "title" not in item:
                raise BenchDataError("corpus entries must be objects with 'title' and 'text'")
            out.append((str(item["title"]), str(item.get("text", item.get("paragraph_text", "")))))
        return out
    raise BenchDataError("a corpus is a list of {title, text} or a dict title -> sentences")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BenchDataError(f"no such file: {path}") from exc
    except json.JSONDecodeError as exc:
        raise BenchDataError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc


def _join_sentences(body: Any) -> str:
    return "".join(str(s) for s in body) if isinstance(body, list) else str(body)


def _contexts(raw_questions: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The union of the questions' own contexts, for question files that carry them."""
    pairs: list[tuple[str, str]] = []
    for raw in raw_questions:
        for p in raw.get("paragraphs", []):
            pairs.append((str(p["title"]), str(p["paragraph_text"])))
        for title, body in raw.get("context", []):
            pairs.append((str(title), _join_sentences(body)))
    if not pairs:
        raise BenchDataError("no corpus given and the questions carry no contexts")
    return pairs


def _unique(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((t.strip(), x.strip()) for t, x in pairs))


def _key(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class _GoldIndex:
    """Gold keys -> doc ids: by title (first passage so titled) and by title + text (whitespace folded)."""

    def __init__(self, passages: list[Passage]) -> None:
        self.by_title: dict[str, str] = {}
        self.by_pair: dict[tuple[str, str], str] = {}
        for p in passages:
            self.by_title.setdefault(_key(p.title), p.doc_id)
            self.by_pair.setdefault((_key(p.title), _key(p.text)), p.doc_id)


def _question(raw: dict[str, Any], fmt: str, index: _GoldIndex, n: int) -> Question:
    if "question" not in raw or "answer" not in raw:
        raise BenchDataError(f"question {n}: needs 'question' and 'answer'")
    gold: list[str] = []
    if fmt == "musique":
        for p in raw.get("paragraphs", []):
            if p.get("is_supporting"):
                key = (_key(p["title"]), _key(p["paragraph_text"]))
                gold.append(index.by_pair.get(key, f"{MISSING_PREFIX}{p['title']}"))
    else:
        titles = [f[0] if isinstance(f, list | tuple) else f for f in raw.get("supporting_facts", [])]
        gold = [index.by_title.get(_key(str(t)), f"{MISSING_PREFIX}{t}") for t in titles]
    aliases = [str(a) for a in raw.get("answer_aliases") or [] if str(a).strip()]
    answers = tuple(dict.fromkeys([str(raw["answer"]), *aliases]))
    qid = str(raw.get("id") or raw.get("_id") or n)
    return Question(id=qid, question=str(raw["question"]), answers=answers, gold=tuple(dict.fromkeys(gold)))
