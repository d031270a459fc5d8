"""The scale bench: a deterministic linked corpus with answerable planted questions, and a sane report."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from connectors.knowledge.embedder import HashEmbedder
from evals.scale import PRINCIPALS, run_scale, scale_folder, synthetic_corpus

SIZE = 200


def test_the_corpus_is_deterministic_linked_and_its_questions_have_gold_in_it() -> None:
    corpus = synthetic_corpus(SIZE)
    again = synthetic_corpus(SIZE)
    assert [d.model_dump() for d in corpus.docs] == [d.model_dump() for d in again.docs]
    assert corpus.questions == again.questions
    ids = {d.id for d in corpus.docs}
    assert len(corpus.docs) == len(ids) == SIZE
    assert {d.kind for d in corpus.docs} == {"page", "ticket"}
    assert all(link.target in ids for d in corpus.docs for link in d.links)  # links land on real documents
    assert any(d.acl.isdisjoint({"public"}) for d in corpus.docs) and all(
        d.acl <= PRINCIPALS for d in corpus.docs
    )
    by_id = {d.id: d for d in corpus.docs}
    for q in corpus.questions:
        assert q.gold and all(g in ids for g in q.gold)
        assert q.answers[0] in by_id[q.gold[-1]].text  # answerable from the gold documents
    assert any(len(q.gold) == 2 for q in corpus.questions)  # multi-hop ones among them
    assert synthetic_corpus(2 * SIZE).docs[0].id == corpus.docs[0].id
    assert len({d.title for d in synthetic_corpus(2 * SIZE).docs}) == 2 * SIZE


def test_run_scale_reports_every_field_and_reuses_its_index(tmp_path: Path) -> None:
    embedder = HashEmbedder()
    (row,) = run_scale([SIZE], embedder, tmp_path, mode="hybrid", questions=12)
    assert (row.size, row.passages, row.questions, row.mode, row.errors) == (SIZE, SIZE, 12, "hybrid", 0)
    assert row.chunks >= row.passages and row.edges > 0
    assert row.index_pps > 0 and row.index_s > 0 and not row.index_cached
    assert 0 < row.p50_ms <= row.p95_ms and 0 < row.p50_cpu_ms <= row.p95_cpu_ms
    assert row.p50_cpu_one_hop_ms > 0 and row.p50_cpu_two_hop_ms > 0  # 12 questions: 6 of each
    assert 0.5 <= row.recall_at_5 <= 1.0  # ticket keys and service names are findable even by hashed words
    assert row.peak_rss_mb >= row.index_peak_rss_mb > 0
    assert 0 < row.disk_mb < 100 and scale_folder(tmp_path, SIZE, embedder).is_dir()

    (again,) = run_scale([SIZE], embedder, tmp_path, mode="hybrid", questions=12)
    assert again.index_cached and (again.index_pps, again.recall_at_5) == (row.index_pps, row.recall_at_5)


def test_the_cli_flag_runs_the_scale_bench(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--scale",
            "100",
            "--embedder",
            "hash",
            "--mode",
            "bm25",
            "--data-dir",
            str(tmp_path),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout.strip().splitlines()[-1])
    assert (row["passages"], row["mode"]) == (100, "bm25") and row["recall_at_5"] > 0
