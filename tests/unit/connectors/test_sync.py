"""Sync: incremental by content hash, pruning with everything derived, failures recorded, cursor stored."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from connectors.knowledge.store import KnowledgeStore
from connectors.knowledge.tables import aliases, chunks, edges, sync_failures
from connectors.sync import sync_source
from tests.conftest import STACKS, folder

pytestmark = pytest.mark.parametrize(
    "stack", STACKS, indirect=True
)  # SQLite + embedded Chroma, and the servers

KESTREL = "acme:wiki/ops/kestrel-motion-systems"


def _count(store: KnowledgeStore, table, where) -> int:  # type: ignore[no-untyped-def]
    with store.engine.connect() as conn:
        return len(conn.execute(select(table).where(where)).all())


def test_second_sync_embeds_nothing_and_an_edit_embeds_only_that_page(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    first = sync_source(store, connector)
    assert first.added > 80 and first.failed == 0 and first.chunks_embedded > first.added

    second = sync_source(store, connector)
    assert (second.added, second.updated, second.chunks_embedded) == (0, 0, 0)

    for path in acme_copy.rglob("*.md"):  # new mtimes, same content: read again, still nothing embedded
        os.utime(path)
    touched = sync_source(store, connector)
    assert touched.unchanged > 40 and touched.chunks_embedded == 0

    page = acme_copy / "wiki/ops/kestrel-motion-systems.md"
    page.write_text(page.read_text() + "\n\nNew: Kestrel opened a second plant in Brno.\n")
    edited = sync_source(store, connector)
    assert edited.updated == 1 and edited.added == 0
    assert edited.chunks_embedded == _count(store, chunks, chunks.c.doc_id == KESTREL)
    hits = store.search_text("second plant in Brno", frozenset({"public"}), 3, mode="bm25")
    assert hits[0].doc_id == KESTREL


def test_a_new_embedder_embeds_everything_again(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path, tmp_path: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    first = sync_source(store, connector)
    assert sync_source(store, connector).chunks_embedded == 0

    # The same database and Chroma folder, another embedder: its collection is empty, so nothing is "unchanged".
    other = KnowledgeStore(
        store.engine, ChunkVectors(HashEmbedder(dim=32), path=tmp_path / "store" / "chroma")
    )
    again = sync_source(other, connector)
    assert (again.chunks_embedded, again.unchanged) == (first.chunks_embedded, 0)
    assert other.vectors.count() == first.chunks_embedded
    hits = other.search_text("Kestrel Motion Systems", frozenset({"public"}), 3, mode="dense")
    assert hits
    reopened = KnowledgeStore(store.engine, other.vectors)  # same embedder again: nothing to redo
    assert sync_source(reopened, connector).chunks_embedded == 0


def test_deleting_a_page_removes_chunks_edges_and_aliases(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    sync_source(store, connector)
    public = frozenset({"public"})
    assert store.resolve(["Supplier 8"], public)["Supplier 8"] == [KESTREL]
    assert _count(store, edges, edges.c.origin == KESTREL) > 0

    (acme_copy / "wiki/ops/kestrel-motion-systems.md").unlink()
    summary = sync_source(store, connector)

    assert summary.deleted == 1
    assert _count(store, chunks, chunks.c.doc_id == KESTREL) == 0
    assert _count(store, edges, edges.c.origin == KESTREL) == 0
    assert _count(store, aliases, aliases.c.origin == KESTREL) == 0
    assert store.resolve(["Supplier 8"], public)["Supplier 8"] == []
    assert all(n.doc_id != KESTREL for n in store.neighbors(["acme:OPS-31"], public))
    assert all(h.doc_id != KESTREL for h in store.search_text("Kestrel Motion Systems", public, 10))


def test_a_malformed_page_is_recorded_and_the_rest_completes(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    (acme_copy / "wiki/ops/broken.md").write_text("---\ntitle: [oops\n---\nbody")
    (acme_copy / "wiki/ops/blank.md").write_text("")
    (acme_copy / "wiki/ops/blob.md").write_bytes(b"\x00\xff\x00")
    store = make_store()
    summary = sync_source(store, folder(acme_copy))
    assert summary.status == "partial" and summary.failed == 3 and summary.added > 80
    assert summary.failures_by_reason == {"bad front matter": 1, "empty file": 1, "binary file": 1}
    with store.engine.connect() as conn:
        recorded = {r.item for r in conn.execute(select(sync_failures))}
    assert recorded == {"acme:wiki/ops/broken.md", "acme:wiki/ops/blank.md", "acme:wiki/ops/blob.md"}

    (acme_copy / "wiki/ops/broken.md").write_text("---\ntitle: Mended\n---\nbody")
    (acme_copy / "wiki/ops/blank.md").unlink()
    (acme_copy / "wiki/ops/blob.md").unlink()
    again = sync_source(store, folder(acme_copy))
    assert again.status == "ok" and again.added == 1
    with store.engine.connect() as conn:
        assert conn.execute(select(sync_failures)).all() == []  # the last run's failures, not every run's


def test_a_sync_where_nothing_could_be_read_has_failed(
    make_store: Callable[..., KnowledgeStore], tmp_path: Path
) -> None:
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki/only.md").write_text("no front matter")
    summary = sync_source(make_store(), folder(tmp_path))
    assert summary.status == "failed" and summary.failures_by_reason == {"missing front matter": 1}


def test_a_second_sync_of_the_same_source_waits_for_the_lease(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    from connectors.sync import LEASE

    store = make_store()
    assert store.ledger.acquire("acme", "other-worker", lease=LEASE)
    busy = sync_source(store, folder(acme_copy))
    assert busy.status == "busy" and busy.added == 0
