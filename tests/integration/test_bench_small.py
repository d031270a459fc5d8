"""`sleuth bench` end to end on a tiny 2Wiki-format file: loaders, the cached index, three modes, the records,
the result files. The `hash` embedder keeps it fast; nothing here depends on timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from tests.conftest import EXAMPLES

CORPUS = [
    {"title": "Glass Harbor", "text": "Glass Harbor is a 1961 drama film directed by Mira Castellane."},
    {"title": "Mira Castellane", "text": "Mira Castellane was a Portuguese film director born in Lisbon."},
    {"title": "Northern Lanterns", "text": "Northern Lanterns is a 1974 film directed by Tomas Verholt."},
    {"title": "Tomas Verholt", "text": "Tomas Verholt was a Dutch director. He died in Utrecht in 1999."},
    {"title": "Lisbon", "text": "Lisbon is the capital and largest city of Portugal."},
    {"title": "Utrecht", "text": "Utrecht is a city in the Netherlands."},
    {"title": "Silver Orchard", "text": "Silver Orchard is a 1958 comedy film starring Ana Pereira."},
    {"title": "Ana Pereira", "text": "Ana Pereira was an actress who was born in Porto."},
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "Where was the director of film Glass Harbor born?",
        "answer": "Lisbon",
        "answer_aliases": ["Lisboa"],
        "supporting_facts": ["Glass Harbor", "Mira Castellane"],
    },
    {
        "id": "q2",
        "question": "Where did the director of film Northern Lanterns die?",
        "answer": "Utrecht",
        "answer_aliases": [],
        "supporting_facts": ["Northern Lanterns", "Tomas Verholt"],
    },
    {
        "id": "q3",
        "question": "Which film came out first, Glass Harbor or Silver Orchard?",
        "answer": "Silver Orchard",
        "answer_aliases": [],
        "supporting_facts": ["Glass Harbor", "Silver Orchard"],
    },
]
MODES = ["bm25", "naive-hop", "loop-graph"]
CONTRACT = {
    "set", "mode", "n", "r2", "r5", "ar5", "answer_in_evidence", "rounds",
    "p50_ms", "p95_ms", "index_pps", "peak_rss_mb",
}  # fmt: skip


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    questions, corpus = tmp_path / "tiny_dev.json", tmp_path / "tiny_corpus.json"
    questions.write_text(json.dumps(QUESTIONS), encoding="utf-8")
    corpus.write_text(json.dumps(CORPUS), encoding="utf-8")
    return questions, corpus


def _bench(files: tuple[Path, Path], tmp_path: Path) -> list[dict]:
    questions, corpus = files
    args = ["bench", "--questions", str(questions), "--corpus", str(corpus), "--format", "2wiki"]
    for mode in MODES:
        args += ["--mode", mode]
    args += ["--embedder", "hash", "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bench_runs_three_modes_end_to_end(files: tuple[Path, Path], tmp_path: Path) -> None:
    records = _bench(files, tmp_path)
    assert [r["mode"] for r in records] == MODES
    for r in records:
        assert r.keys() >= CONTRACT
        assert r["set"] == "2wiki-tiny_dev"
        assert r["n"] == 3
        assert 0.0 <= r["r2"] <= r["r5"] <= 1.0
        assert 0.0 <= r["ar5"] <= r["r5"]
        assert 0.0 <= r["answer_in_evidence"] <= 1.0
        assert r["p50_ms"] <= r["p95_ms"]
        assert r["index_pps"] > 0 and r["peak_rss_mb"] > 0
        assert r["errors"] == 0 and r["gold_missing"] == 0
    by_mode = {r["mode"]: r for r in records}
    assert by_mode["bm25"]["rounds"] == 1.0
    assert by_mode["loop-graph"]["rounds"] >= 1.0
    # Eight passages: every gold passage is among any mode's first five that returns five.
    assert by_mode["bm25"]["r5"] == 1.0
    # The bridge passages are named in the first hop's text, so one hop puts them right behind it.
    assert by_mode["naive-hop"]["r2"] >= by_mode["bm25"]["r2"]

    written = sorted((tmp_path / "out").iterdir())
    assert [p.suffix for p in written] == [".json", ".md"]
    saved = json.loads(written[0].read_text(encoding="utf-8"))
    assert saved["revision"]
    assert {q["mode"] for q in saved["questions"]} == set(MODES)
    assert all(len(q["ranked"]) >= 1 for q in saved["questions"])
    assert "| 2wiki-tiny_dev | naive-hop | 3 |" in written[1].read_text(encoding="utf-8")


def test_second_run_reopens_the_cached_index(files: tuple[Path, Path], tmp_path: Path) -> None:
    first = _bench(files, tmp_path)
    again = _bench(files, tmp_path)
    assert not first[0]["index_cached"]
    assert again[0]["index_cached"]
    assert [(r["r2"], r["r5"]) for r in again] == [(r["r2"], r["r5"]) for r in first]
    assert len(list((tmp_path / "data" / "bench-cache").iterdir())) == 1


def test_bad_arguments_exit_2_with_a_message(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "--set", "squad", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown set" in result.output


@pytest.mark.slow
def test_acme_eval_reports_its_numbers_and_no_forbidden_documents(tmp_path: Path) -> None:
    args = ["bench", "--set", "acme", "--mode", "loop-graph", "--embedder", "hash"]
    args += ["--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output  # exit 1 would mean a forbidden document or a failed question
    (record,) = json.loads(result.stdout)
    items = [json.loads(line) for line in (EXAMPLES / "eval.jsonl").read_text().splitlines() if line.strip()]
    assert (record["set"], record["mode"], record["n"]) == ("acme", "loop-graph", len(items))
    assert record.keys() >= CONTRACT
    extra = record["extra"]
    assert extra["forbidden"] == 0, extra["forbidden_items"]
    assert extra["decline_n"] >= 15
    for rate in ("correct", "correct_declines"):
        assert 0.0 <= extra[rate] <= 1.0
    assert 0.0 <= record["r5"] <= 1.0 and 0.0 <= record["cited_recall"] <= 1.0
    assert {"single", "multihop", "paraphrase", "unanswerable"} <= set(extra["by_kind"])
    assert sum(k["n"] for k in extra["by_kind"].values()) == len(items)
