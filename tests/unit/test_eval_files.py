"""The evaluation files under examples/ are data the bench trusts: each is checked here against its own corpus, read
through the real folder connector, so a wrong label fails CI instead of silently skewing a score.

Checked per file: schema and unique ids, the minimum count of every kind, every `answer_contains` string (or one of
its alternatives) occurring in an expected doc, conflict values and dates backed by the docs, permission pairs that
really differ in what the asker may see, and forbidden docs that the asker really cannot see."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connectors.base import PUBLIC, LinkedIdentity, SourceDoc, user_principal
from connectors.sources.folder import FolderConfig, FolderConnector
from evals.folder_eval import KINDS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOURCE = "acme"  # the folder is loaded as the embedded default source, whatever company it describes
FOLLOWUP_TYPES = ("entity_swap", "attribute_swap", "pronoun")
MIN_PER_KIND = {"acme": 10, "fernhollow": 5}
OPTIONAL_KINDS = {"fernhollow": {"broad"}}  # broad questions are asked of acme only
MIN_PER_FOLLOWUP_TYPE = {"acme": 3, "fernhollow": 1}
REQUIRED = ("id", "question", "asker", "kind", "expected_docs", "answer", "answer_contains", "expected_gap")
EVAL_FILES = sorted(p for p in EXAMPLES.glob("*/eval.jsonl"))


@dataclass(frozen=True)
class Corpus:
    docs: dict[str, SourceDoc]
    connector: FolderConnector

    def visible(self, asker: str, doc_id: str) -> bool:
        principals = {PUBLIC, user_principal(asker)}
        principals |= self.connector.principals(LinkedIdentity(source=SOURCE, account=asker))
        return bool(self.docs[doc_id].acl & principals)


def _corpus(folder: Path) -> Corpus:
    connector = FolderConnector(FolderConfig(path=folder), name=SOURCE)
    docs = {d.id: d for d in connector.pull(None) if isinstance(d, SourceDoc)}
    return Corpus(docs, connector)


def _items(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _family(path: Path) -> str:
    return "fernhollow" if path.parent.name.endswith("fernhollow") else "acme"


def _in_any(needle: str, docs: list[SourceDoc]) -> bool:
    return any(needle.lower() in f"{d.title}\n{d.text}".lower() for d in docs)


@pytest.fixture(scope="module", params=EVAL_FILES, ids=lambda p: p.parent.name)
def evalset(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]], Corpus]:
    path: Path = request.param
    return _family(path), _items(path), _corpus(path.parent)


def test_both_eval_files_exist() -> None:
    assert {_family(p) for p in EVAL_FILES} == {"acme", "fernhollow"}


def test_schema_ids_and_kind_counts(evalset: tuple[str, list[dict[str, Any]], Corpus]) -> None:
    family, items, corpus = evalset
    ids = [i["id"] for i in items]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    people = set(corpus.connector.people())
    for item in items:
        assert all(k in item for k in REQUIRED), item["id"]
        assert item["kind"] in KINDS, item["id"]
        assert item["asker"] in people, item["id"]
        for doc in [*item["expected_docs"], *item.get("forbidden_docs", []), *item.get("nearby_docs", [])]:
            assert doc in corpus.docs, (item["id"], doc)
    kinds = Counter(i["kind"] for i in items)
    required = [k for k in KINDS if k not in OPTIONAL_KINDS.get(family, set())]
    assert all(kinds[k] >= MIN_PER_KIND[family] for k in required), kinds
    followups = Counter(i.get("followup_type") for i in items if i["kind"] == "followup")
    assert all(followups[t] >= MIN_PER_FOLLOWUP_TYPE[family] for t in FOLLOWUP_TYPES), followups


def test_answers_occur_in_an_expected_doc(evalset: tuple[str, list[dict[str, Any]], Corpus]) -> None:
    _, items, corpus = evalset
    missing = []
    for item in items:
        docs = [corpus.docs[d] for d in item["expected_docs"]]
        declined = bool(item["expected_gap"])
        assert declined == (not item["answer_contains"]) == (item["answer"] is None), item["id"]
        assert declined or docs, item["id"]
        if not declined:
            assert _in_any(item["answer"], docs), (item["id"], item["answer"])
        for element in item["answer_contains"]:
            options = element if isinstance(element, list) else [element]
            if not any(_in_any(o, docs) for o in options):
                missing.append((item["id"], element))
    assert missing == []


def test_askers_see_expected_docs_and_not_forbidden_ones(
    evalset: tuple[str, list[dict[str, Any]], Corpus],
) -> None:
    _, items, corpus = evalset
    for item in items:
        asker = item["asker"]
        assert all(corpus.visible(asker, d) for d in item["expected_docs"]), item["id"]
        assert not any(corpus.visible(asker, d) for d in item.get("forbidden_docs", [])), item["id"]


def test_permission_pairs_differ_only_in_access(evalset: tuple[str, list[dict[str, Any]], Corpus]) -> None:
    _, items, corpus = evalset
    pairs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        if item["kind"] == "permission":
            pairs[item["pair"]].append(item)
    assert pairs
    for pair, members in pairs.items():
        answered = [m for m in members if not m["expected_gap"]]
        declined = [m for m in members if m["expected_gap"]]
        assert len(answered) == 1 and declined, pair
        restricted = [d for d in answered[0]["expected_docs"] if corpus.docs[d].acl != {PUBLIC}]
        assert restricted, pair  # the answer needs a doc that not everyone may see...
        for decline in declined:  # (two older acme pairs word the question differently; same intent)
            assert set(restricted) <= set(decline["forbidden_docs"]), pair  # ...which the decliner cannot


def test_conflicts_show_both_values_and_dates(evalset: tuple[str, list[dict[str, Any]], Corpus]) -> None:
    _, items, corpus = evalset
    for item in (i for i in items if i["kind"] == "conflict"):
        conflict = item["conflict"]
        docs = [corpus.docs[d] for d in item["expected_docs"]]
        assert len(conflict["values"]) == len(conflict["dates"]) == 2, item["id"]
        assert conflict["dates"][0] > conflict["dates"][1], item["id"]  # newest first
        for value in conflict["values"]:
            assert _in_any(value, docs), (item["id"], value)
            assert value in item["answer_contains"], (item["id"], value)
        for day in conflict["dates"]:
            dated = any(d.updated_at.date().isoformat() == day or day in d.text for d in docs)
            assert dated, (item["id"], day)


def test_followups_and_unanswerables_carry_their_context(
    evalset: tuple[str, list[dict[str, Any]], Corpus],
) -> None:
    _, items, corpus = evalset
    for item in items:
        if item["kind"] == "followup":
            assert item["history"] and all(t["question"] and t["asker"] for t in item["history"]), item["id"]
            assert item["followup_type"] in FOLLOWUP_TYPES, item["id"]
        if item["kind"] == "unanswerable" and item.get("nearby_docs"):
            assert all(corpus.visible(item["asker"], d) for d in item["nearby_docs"]), item["id"]
