"""The per-ACL-group aggregates BM25's statistics are summed from."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text

from connectors.base import PUBLIC, SourceDoc
from connectors.database import make_engine
from connectors.knowledge import lexical
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from connectors.knowledge.lexical_groups import row_length
from connectors.knowledge.store import KnowledgeStore

WHEN = datetime(2026, 1, 5, tzinfo=UTC)
FIN = "group:t:fin"


def test_row_length_reads_sqlite_varints() -> None:
    assert row_length(bytes([3, 7])) == 10
    assert row_length(bytes([3, 0x82, 0x2C])) == 3 + 300  # 300 takes two bytes: 0b10 then 0b0101100
    assert row_length(b"") == 0


def _doc(native: str, text: str, acl: set[str]) -> SourceDoc:
    return SourceDoc(
        id=f"t:{native}",
        source="t",
        kind="page",
        title=native,
        text=text,
        updated_at=WHEN,
        acl=frozenset(acl),
    )


def test_visible_statistics_are_the_counts_over_the_visible_rows(tmp_path: Path) -> None:
    docs = [
        _doc("a", "otter " + "go " * 200, {PUBLIC}),  # a row over 127 tokens: two-byte varints
        _doc("b", "otter river", {PUBLIC, FIN}),
        _doc("c", "otter budget", {FIN}),
        _doc("d", "nobody reads this otter", set()),
    ]
    store = KnowledgeStore(
        make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}"), ChunkVectors(HashEmbedder(), path=tmp_path / "c")
    )
    store.upsert(docs)
    with store.engine.connect() as conn:
        groups = lexical.row_groups(conn)
        for principals in ({PUBLIC}, {PUBLIC, FIN}, {FIN}, {"someone"}):
            held = frozenset(principals)
            sizes = [  # the oracle: every chunk of a document these principals may open, read one by one
                row_length(bytes(blob))
                for (blob,) in conn.execute(
                    text(
                        "SELECT d.sz FROM chunks_fts_docsize d JOIN chunks c ON c.rowid_fts = d.id WHERE "
                        "EXISTS (SELECT 1 FROM doc_acl a WHERE a.doc_id = c.doc_id AND a.principal IN "
                        f"({', '.join(repr(p) for p in sorted(held))}))"
                    )
                )
            ]
            stats = lexical.visible_stats(conn, held, groups)
            assert (stats.rows, stats.tokens) == (len(sizes), sum(sizes))
            assert lexical.count_visible(conn, held, groups) == len(sizes)
        lengths = [row_length(bytes(b)) for (b,) in conn.execute(text("SELECT sz FROM chunks_fts_docsize"))]
        assert max(lengths) > 127
        assert lexical.document_frequency(conn, "otter", frozenset({PUBLIC}), groups) == 2
        assert lexical.document_frequency(conn, "otter", frozenset({FIN}), groups) == 2
        assert lexical.document_frequency(conn, "budget", frozenset({PUBLIC}), groups) == 0
        # the same aggregates, another set of visible groups: its own count, not the one cached just before
        assert lexical.document_frequency(conn, "budget", frozenset({FIN}), groups) == 1
        assert lexical.document_frequency(conn, "nobodi", frozenset({PUBLIC, FIN}), groups) == 0  # doc "d"
        assert lexical.document_frequency(conn, "otter", frozenset({PUBLIC, FIN}), groups) == 3
