"""A bench set's knowledge store, cached on disk by corpus hash so a second run never re-embeds.

`<data dir>/bench-cache/<set>-<corpus sha1[:12]>-<embedder name>/` holds the SQLite file and Chroma folder;
`index.json` is written last, so a folder without it is an interrupted build and is rebuilt from scratch.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from connectors.base import SourceDoc
from connectors.database import make_engine, sqlite_url
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedding import Embedder
from connectors.knowledge.store import KnowledgeStore
from evals.loaders import BenchSet
from evals.memory import RssSampler

CACHE_DIR = "bench-cache"
MARKER = "index.json"
UPSERT_BATCH = 128  # passages per store.upsert (one embedding batch each)
_UNSAFE = re.compile(r"[^\w.@-]+")


@dataclass(frozen=True)
class IndexStats:
    passages: int
    chunks: int
    edges: int
    seconds: float  # embedding, FTS and graph rows, and the mention mining, for the whole corpus
    passages_per_s: float
    peak_rss_mb: float  # sampled while indexing
    cached: bool  # this run reopened a finished index (the numbers are the build's)
    path: str


from connectors.knowledge.store import INDEX_FORMAT  # noqa: E402  (a new format means a new cache)


def cache_folder(data_dir: Path, bench: BenchSet, embedder: Embedder) -> Path:
    name = f"{bench.name}-{bench.corpus_sha1()[:12]}-{embedder.name}-v{INDEX_FORMAT}"
    return data_dir / CACHE_DIR / _UNSAFE.sub("_", name)


def open_store(folder: Path, embedder: Embedder) -> KnowledgeStore:
    folder.mkdir(parents=True, exist_ok=True)
    return KnowledgeStore(make_engine(sqlite_url(folder)), ChunkVectors(embedder, path=folder / "chroma"))


def open_index(
    bench: BenchSet,
    embedder: Embedder,
    data_dir: Path,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[KnowledgeStore, IndexStats]:
    """Reopens the cached index of this corpus and embedder, or builds it (reporting passages as written)."""
    folder = cache_folder(data_dir, bench, embedder)
    return reopen(folder, embedder) or build_index(
        folder, list(bench.source_docs()), embedder, progress=progress
    )


def reopen(folder: Path, embedder: Embedder) -> tuple[KnowledgeStore, IndexStats] | None:
    """The finished index in `folder` with its build's numbers, or None when there is none."""
    marker = folder / MARKER
    if not marker.is_file():
        return None
    stats = IndexStats(**{**json.loads(marker.read_text(encoding="utf-8")), "cached": True})
    return open_store(folder, embedder), stats


def build_index(
    folder: Path,
    docs: Sequence[SourceDoc],
    embedder: Embedder,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[KnowledgeStore, IndexStats]:
    """Indexes `docs` into a fresh `folder` (anything there before is an interrupted build: removed), timed."""
    if folder.exists():
        shutil.rmtree(folder)
    store = open_store(folder, embedder)
    stats = index_docs(store, docs, progress=progress, path=str(folder))
    marker = folder / MARKER
    marker.write_text(json.dumps({k: v for k, v in asdict(stats).items() if k != "cached"}), encoding="utf-8")
    return store, stats


def index_docs(
    store: KnowledgeStore,
    docs: Sequence[SourceDoc],
    *,
    progress: Callable[[int], None] | None = None,
    path: str = "",
) -> IndexStats:
    """Writes `docs` into an empty store in upsert batches, then mines mentions; timed, memory sampled."""
    chunks = 0
    with RssSampler() as rss:
        started = time.perf_counter()
        for start in range(0, len(docs), UPSERT_BATCH):
            batch = docs[start : start + UPSERT_BATCH]
            chunks += store.upsert(batch)
            if progress:
                progress(len(batch))
        edges = store.relink_mentions(None)
        seconds = time.perf_counter() - started
    return IndexStats(
        passages=len(docs),
        chunks=chunks,
        edges=edges,
        seconds=round(seconds, 2),
        passages_per_s=round(len(docs) / seconds, 1) if seconds > 0 else 0.0,
        peak_rss_mb=round(rss.peak_mb, 1),
        cached=False,
        path=path,
    )
