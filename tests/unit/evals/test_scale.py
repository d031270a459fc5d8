"""The scale bench: a deterministic linked corpus with answerable planted questions, and a sane report."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from bot.cli import app
from connectors.knowledge.embedder import HashEmbedder
from connectors.local_servers import Servers
from evals.scale import PRINCIPALS, run_scale, scale_folder, synthetic_corpus
from evals.stacks import ServerStack

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


def _leftovers(servers: Servers) -> tuple[list[str], list[str]]:
    """The bench's databases still on the servers (it must drop what it made)."""
    import chromadb
    import psycopg

    with psycopg.connect(f"host=127.0.0.1 port={servers.postgres.port} user=sleuth dbname=postgres") as conn:
        pg = [name for (name,) in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'scale%'")]
    admin = chromadb.AdminClient(chromadb.Settings(chroma_server_host="127.0.0.1",
                                 chroma_server_http_port=servers.chroma.port, anonymized_telemetry=False,
                                 chroma_api_impl="chromadb.api.fastapi.FastAPI"))  # fmt: skip
    return pg, [d["name"] for d in admin.list_databases() if d["name"].startswith("scale")]


def test_the_scale_bench_runs_on_running_servers_and_leaves_nothing_there(
    servers: Servers, tmp_path: Path
) -> None:
    stack = ServerStack(database_url=servers.postgres.url(), chroma_url=servers.chroma.url)
    (row,) = run_scale([SIZE], HashEmbedder(), tmp_path, mode="hybrid", questions=12, stack=stack)
    (embedded,) = run_scale([SIZE], HashEmbedder(), tmp_path, mode="hybrid", questions=12)
    assert (row.stack, row.passages, row.questions, row.errors) == ("servers", SIZE, 12, 0)
    assert (row.chunks, row.edges) == (embedded.chunks, embedded.edges) and not row.index_cached
    assert row.index_pps > 0 and 0 < row.p50_ms <= row.p95_ms and row.p50_cpu_ms > 0
    assert row.recall_at_5 == embedded.recall_at_5 > 0  # the same BM25 and vectors on the other stack
    assert row.peak_rss_mb > 0 and row.disk_mb > 0
    assert row.servers_peak_mb == 0  # not ours to measure: the bench did not start them
    assert _leftovers(servers) == ([], [])
    assert not list(tmp_path.glob("bench-cache/*servers*"))  # nothing cached for the server stack


def test_the_cli_runs_the_scale_bench_on_servers_it_starts_and_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = Path(tempfile.mkdtemp(prefix="sleuth-bench-test-"))  # where it starts them (under /tmp: the
    temp.chmod(0o755)  # cluster's `postgres` account must reach it)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    result = CliRunner().invoke(
        app,
        ["bench", "--scale", "100", "--embedder", "hash", "--mode", "bm25", "--stack", "servers",
         "--data-dir", str(tmp_path), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout.strip().splitlines()[-1])
    assert (row["stack"], row["passages"], row["errors"]) == ("servers", 100, 0) and row["recall_at_5"] > 0
    assert row["servers_peak_mb"] > 0 and row["disk_mb"] > 0  # its own servers: their memory is measured
    assert list(temp.iterdir()) == []  # stopped and removed
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(temp) in " ".join(p.info["cmdline"] or ())]
    temp.rmdir()


def test_the_server_stack_needs_both_urls_or_neither() -> None:
    with pytest.raises(ValueError, match="both"):
        ServerStack(database_url="postgresql://sleuth@127.0.0.1/postgres")
    result = CliRunner().invoke(app, ["bench", "--scale", "100", "--stack", "cloud"])
    assert result.exit_code != 0 and "unknown stack" in result.output
