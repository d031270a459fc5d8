from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connectors.base import PUBLIC
from evals.loaders import (
    MISSING_PREFIX,
    BenchDataError,
    detect_format,
    load_known_set,
    load_set,
    parse_corpus,
)


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


TWOWIKI_CORPUS = [
    {"title": "Glass Harbor", "text": "Glass Harbor is a 1961 film directed by Mira Castellane."},
    {"title": "Mira Castellane", "text": "Mira Castellane was born in Lisbon."},
    {"title": "Lisbon", "text": "Lisbon is the capital of Portugal."},
]
TWOWIKI_QUESTIONS = [
    {
        "id": "q1",
        "question": "Where was the director of Glass Harbor born?",
        "answer": "Lisbon",
        "answer_aliases": ["Lisboa"],
        "supporting_facts": ["Glass Harbor", "Mira Castellane"],
    },
    {
        "id": "q2",
        "question": "Who directed Glass Harbor?",
        "answer": "Mira Castellane",
        "answer_aliases": [],
        "supporting_facts": ["Glass Harbor", "Not In Corpus"],
    },
]


def test_2wiki_gold_titles_map_to_passages(tmp_path: Path) -> None:
    q = _write(tmp_path / "dev.json", TWOWIKI_QUESTIONS)
    c = _write(tmp_path / "corpus.json", TWOWIKI_CORPUS)
    bench = load_set("tiny", q, c, "2wiki")
    assert [p.doc_id for p in bench.passages] == ["tiny:0", "tiny:1", "tiny:2"]
    assert bench.passages[1].title == "Mira Castellane"
    first, second = bench.questions
    assert first.gold == ("tiny:0", "tiny:1")
    assert first.answers == ("Lisbon", "Lisboa")
    assert second.gold == ("tiny:0", f"{MISSING_PREFIX}Not In Corpus")  # counts against recall
    assert bench.gold_missing == 1


def test_2wiki_original_release_pairs_and_underscore_id(tmp_path: Path) -> None:
    raw = [{"_id": "x9", "question": "Q?", "answer": "A", "supporting_facts": [["Lisbon", 0], ["Lisbon", 1]]}]
    bench = load_set(
        "t", _write(tmp_path / "q.json", raw), _write(tmp_path / "c.json", TWOWIKI_CORPUS), "2wiki"
    )
    assert bench.questions[0].id == "x9"
    assert bench.questions[0].gold == ("t:2",)


def test_musique_gold_is_title_and_text_because_titles_repeat(tmp_path: Path) -> None:
    corpus = [
        {"title": "Springfield", "text": "Springfield is the capital of Illinois."},
        {"title": "Springfield", "text": "Springfield is a city in Massachusetts."},
        {"title": "Illinois", "text": "Illinois is a state."},
    ]
    questions = [
        {
            "id": "2hop__1_2",
            "question": "Which state has Springfield as its capital?",
            "answer": "Illinois",
            "answer_aliases": ["IL"],
            "answerable": True,
            "paragraphs": [
                {
                    "idx": 0,
                    "title": "Springfield",
                    "paragraph_text": "Springfield is a city in Massachusetts.",
                    "is_supporting": False,
                },
                {
                    "idx": 1,
                    "title": "Springfield",
                    "paragraph_text": "Springfield  is the capital of Illinois. ",
                    "is_supporting": True,
                },
                {
                    "idx": 2,
                    "title": "Illinois",
                    "paragraph_text": "Illinois is a state.",
                    "is_supporting": True,
                },
            ],
        }
    ]
    q = _write(tmp_path / "musique.json", questions)
    bench = load_set("mq", q, _write(tmp_path / "corpus.json", corpus))
    assert bench.format == "musique"  # detected
    assert bench.questions[0].gold == ("mq:0", "mq:2")  # whitespace differences do not matter
    assert bench.questions[0].answers == ("Illinois", "IL")


def test_musique_without_corpus_uses_the_union_of_paragraphs(tmp_path: Path) -> None:
    para = {"title": "A", "paragraph_text": "Alpha text.", "is_supporting": True}
    other = {"title": "B", "paragraph_text": "Beta text.", "is_supporting": False}
    questions = [
        {"id": "1", "question": "q1", "answer": "x", "paragraphs": [para, other]},
        {"id": "2", "question": "q2", "answer": "y", "paragraphs": [other, para]},
    ]
    bench = load_set("u", _write(tmp_path / "q.json", questions), None, "musique")
    assert [(p.title, p.text) for p in bench.passages] == [("A", "Alpha text."), ("B", "Beta text.")]
    assert [q.gold for q in bench.questions] == [("u:0",), ("u:0",)]


def test_hotpotqa_dict_corpus_joins_sentences(tmp_path: Path) -> None:
    corpus = {
        "Demon Dice": ["Demon Dice is a dice game.", " It was made by Lester Smith."],
        "Lester Smith": ["Lester Smith is a game designer."],
    }
    questions = [
        {
            "_id": "5a77",
            "question": "Who designed Demon Dice?",
            "answer": "Lester Smith",
            "type": "bridge",
            "level": "easy",
            "supporting_facts": [["Demon Dice", 1], ["Lester Smith", 0], ["Demon Dice", 0]],
            "context": [],
        }
    ]
    q = _write(tmp_path / "hotpot.json", questions)
    bench = load_set("hp", q, _write(tmp_path / "corpus.json", corpus))
    assert bench.format == "hotpotqa"
    assert bench.passages[0].text == "Demon Dice is a dice game. It was made by Lester Smith."
    assert bench.questions[0].gold == ("hp:0", "hp:1")  # distinct titles, first-seen order
    assert bench.questions[0].answers == ("Lester Smith",)


def test_hotpotqa_without_corpus_uses_contexts(tmp_path: Path) -> None:
    questions = [
        {
            "_id": "1",
            "question": "q",
            "answer": "yes",
            "supporting_facts": [["T", 0]],
            "context": [["T", ["One.", " Two."]], ["U", ["Three."]]],
        },
    ]
    bench = load_set("hc", _write(tmp_path / "q.json", questions), None, "hotpotqa")
    assert [(p.title, p.text) for p in bench.passages] == [("T", "One. Two."), ("U", "Three.")]


def test_limit_cuts_questions_not_the_corpus(tmp_path: Path) -> None:
    q = _write(tmp_path / "dev.json", TWOWIKI_QUESTIONS)
    bench = load_set("tiny", q, _write(tmp_path / "c.json", TWOWIKI_CORPUS), "2wiki", limit=1)
    assert len(bench.questions) == 1
    assert len(bench.passages) == 3


def test_source_docs_are_public_passages(tmp_path: Path) -> None:
    bench = load_set(
        "tiny", _write(tmp_path / "q.json", TWOWIKI_QUESTIONS), _write(tmp_path / "c.json", TWOWIKI_CORPUS)
    )
    docs = list(bench.source_docs())
    assert {d.kind for d in docs} == {"passage"}
    assert {d.acl for d in docs} == {frozenset({PUBLIC})}
    assert docs[0].id == "tiny:0"
    assert docs[0].title == "Glass Harbor"
    assert docs[0].source == "tiny"


def test_corpus_hash_changes_with_the_corpus(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.json", TWOWIKI_QUESTIONS)
    one = load_set("t", q, _write(tmp_path / "a.json", TWOWIKI_CORPUS)).corpus_sha1()
    same = load_set("t", q, _write(tmp_path / "b.json", TWOWIKI_CORPUS)).corpus_sha1()
    changed = [*TWOWIKI_CORPUS, {"title": "Porto", "text": "Porto is a city."}]
    other = load_set("t", q, _write(tmp_path / "c.json", changed)).corpus_sha1()
    assert one == same != other


@pytest.mark.parametrize(
    ("first", "fmt"),
    [
        ({"id": "1", "paragraphs": [], "question": "q"}, "musique"),
        ({"_id": "1", "supporting_facts": [["T", 0]], "context": []}, "hotpotqa"),
        ({"id": "1", "supporting_facts": ["T"], "answer_aliases": []}, "2wiki"),
        ({"_id": "1", "supporting_facts": [["T", 0]], "answer_aliases": ["x"]}, "2wiki"),
        ({"_id": "1", "supporting_facts": [["T", 0]], "context": [], "evidences": []}, "2wiki"),
    ],
)
def test_detect_format(first: dict[str, Any], fmt: str) -> None:
    assert detect_format([first]) == fmt


def test_parse_corpus_rejects_other_shapes() -> None:
    with pytest.raises(BenchDataError):
        parse_corpus("just a string")
    with pytest.raises(BenchDataError):
        parse_corpus([{"text": "no title"}])


def test_unreadable_files_are_bench_data_errors(tmp_path: Path) -> None:
    with pytest.raises(BenchDataError, match="no such file"):
        load_set("x", tmp_path / "absent.json", None)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(BenchDataError, match="not valid JSON"):
        load_set("x", bad, None)
    with pytest.raises(BenchDataError, match="list of question"):
        load_set("x", _write(tmp_path / "obj.json", {"a": 1}), None)
    with pytest.raises(BenchDataError, match="unknown format"):
        load_set("x", _write(tmp_path / "q.json", TWOWIKI_QUESTIONS), None, "squad")


def test_known_set_names_their_files(tmp_path: Path) -> None:
    folder = tmp_path / "2wikimultihopqa"
    folder.mkdir()
    _write(folder / "dev.json", TWOWIKI_QUESTIONS)
    _write(folder / "2wikimultihopqa_corpus.json", TWOWIKI_CORPUS)
    bench = load_known_set("2wiki", tmp_path, limit=1)
    assert (bench.name, bench.format, len(bench.questions)) == ("2wiki", "2wiki", 1)
    with pytest.raises(BenchDataError, match="unknown set"):
        load_known_set("squad", tmp_path)
