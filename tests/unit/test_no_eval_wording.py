"""Product code never quotes an evaluation question: no run of 8 consecutive words of any evaluation question may appear
anywhere in a .py file under graph_flows/ (code, strings, comments or docstrings alike).

Evaluation questions are every `question` field, follow-ups in `history` included, of examples/*/eval.jsonl, and every
question of the shared bench data beside the clone (../shared/bench/data: 2WikiMultihopQA dev, MuSiQue train with its
decomposition sub-questions, HotpotQA train). Both sides are lower-cased and cut into words, runs of [a-z0-9]+, so
punctuation, line breaks and comment markers between words do not hide a quote spread over two comment lines."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRAPH_FLOWS = ROOT / "graph_flows"
BENCH_DATA = ROOT.parent / "shared" / "bench" / "data"
BENCH_FILES = (
    "2wikimultihopqa/dev.json",
    "musique/musique_train.json",
    "hotpotqa/hotpotqa_train.json",
)
N = 8
MAX_HITS = 30
WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _questions(node: Any) -> Iterator[str]:
    """Every string under a `question` key, at any depth: the top-level question, follow-ups in `history` and
    MuSiQue's `question_decomposition[].question` alike."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "question" and isinstance(value, str):
                yield value
            else:
                yield from _questions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _questions(item)


def _load_questions() -> tuple[list[str], list[str]]:
    questions: list[str] = []
    sources: list[str] = []
    for path in sorted((ROOT / "examples").glob("*/eval.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                questions.extend(_questions(json.loads(line)))
        sources.append(str(path.relative_to(ROOT)))
    for name in BENCH_FILES:
        path = BENCH_DATA / name
        if path.is_file():
            questions.extend(_questions(json.loads(path.read_text(encoding="utf-8"))))
            sources.append(str(path))
    return questions, sources


def _ngrams(words: list[str]) -> Iterator[tuple[str, ...]]:
    for i in range(len(words) - N + 1):
        yield tuple(words[i : i + N])


def _quotes(text: str, banned: set[tuple[str, ...]]) -> Iterator[tuple[int, str]]:
    """(line, words) of each run of the text's words that quotes a banned 8-gram, reported at the line it starts
    on: the whole text is one run of words, so a quote spread over comment lines is still one quote."""
    spans = [(m.group(), text.count("\n", 0, m.start()) + 1) for m in WORD.finditer(text.lower())]
    last_end = -1
    for i, gram in enumerate(_ngrams([w for w, _ in spans])):
        if gram in banned and i > last_end:
            yield spans[i][1], " ".join(gram)
            last_end = i + N - 1  # one hit per quoted run, not one per overlapping 8-gram


def test_a_quote_across_comment_lines_is_caught() -> None:
    banned = set(_ngrams(_words("Which harbour did the Quillon ferry leave from before it sank?")))
    text = 'x = 1\n# "which harbour did the\n#   Quillon ferry leave from": the port\ny = "Quillon ferry"\n'
    assert list(_quotes(text, banned)) == [(2, "which harbour did the quillon ferry leave from")]


def test_no_eight_words_of_an_evaluation_question_in_graph_flows() -> None:
    questions, sources = _load_questions()
    assert any(src.startswith("examples/") for src in sources), "no examples/*/eval.jsonl found"
    assert questions, f"no evaluation questions loaded from {sources}"
    banned = {gram for q in questions for gram in _ngrams(_words(q))}
    assert banned, "no evaluation question has 8 words or more"

    files = sorted(GRAPH_FLOWS.rglob("*.py"))
    assert files, "no .py files under graph_flows/"
    hits = [
        f"{path.relative_to(ROOT)}:{line}: {words}"
        for path in files
        for line, words in _quotes(path.read_text(encoding="utf-8"), banned)
    ]
    shown = "\n".join(hits[:MAX_HITS])
    more = f"\n... and {len(hits) - MAX_HITS} more" if len(hits) > MAX_HITS else ""
    if hits:
        pytest.fail(f"{len(hits)} quote(s) of an evaluation question under graph_flows/:\n{shown}{more}")
