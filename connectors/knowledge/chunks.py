"""Chunk vectors in Chroma, with the ACL as list metadata so the dense search filters inside Chroma.

Embedded `PersistentClient` by default, `HttpClient` when a Chroma URL is configured. Vectors are computed by our
own embedder and passed explicitly; the collection is still given our embedding function, because Chroma's
default one downloads a model (and fails offline).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from connectors.knowledge.acl import can_see, chroma_where
from connectors.knowledge.embedding import Embedder

COLLECTION = "sleuth_chunks"
VECTOR_BATCH = 2000  # ids per Chroma get (SQLite caps the variables of one statement)
DELETE_BATCH = 500
POSTFILTER_MIN_SHARE = 0.5  # askers who may see at least this part of the chunks get the unfiltered search
POSTFILTER_MARGIN = 2.0  # fetch twice the chunks that k visible ones need on average
POSTFILTER_MAX = 1000


def _chroma_types() -> tuple[Any, Any]:
    from chromadb.api.types import EmbeddingFunction

    class _SleuthEmbeddingFunction(EmbeddingFunction):  # type: ignore[type-arg]
        """Lets Chroma embed with our embedder if it ever needs to (it should not: we pass vectors)."""

        def __init__(self, embedder: Embedder) -> None:
            self._embedder = embedder

        def __call__(self, input: Sequence[str]) -> list[np.ndarray]:
            return list(self._embedder.embed(list(input)))

        @staticmethod
        def name() -> str:
            return "sleuth"

        def get_config(self) -> dict[str, Any]:
            return {"embedder": self._embedder.name}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> _SleuthEmbeddingFunction:
            raise ValueError("Sleuth passes its embedding function explicitly")

    return EmbeddingFunction, _SleuthEmbeddingFunction


@dataclass(frozen=True)
class DenseHit:
    chunk_id: str
    doc_id: str
    similarity: float  # cosine similarity in [-1, 1]


class ChunkVectors:
    """Writes and searches chunk vectors. The collection name carries the embedder's name so that switching
    embedders never mixes vector spaces."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        path: Path | None = None,
        url: str | None = None,
        token: str | None = None,
        database: str | None = None,
    ) -> None:
        """`url` selects a Chroma server (`token` is sent as a bearer token, `database` names a database on
        it; several Sleuth installs can share one server); otherwise an embedded store at `path`."""
        if not url and path is None:
            raise ValueError("an embedded Chroma needs a path")
        self.embedder = embedder
        self._path, self._url = path, url
        self._token, self._database = token, database
        self._lock = threading.Lock()
        self._opened: Any = None
        self._query_cache: dict[str, np.ndarray] = {}
        self._text_cache: dict[str, np.ndarray] = {}
        self.text_cache_size = 20_000  # sentence vectors kept between calls (the oldest go first)

    @property
    def _collection(self) -> Any:
        """The Chroma collection, opened on first use: an unchanged re-sync never needs it, and importing and
        starting Chroma was most of what such a sync cost."""
        with self._lock:
            if self._opened is None:
                self._opened = self._open()
            return self._opened

    def _open(self) -> Any:
        import chromadb
        from chromadb.config import DEFAULT_DATABASE
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if self._url:
            parsed = urlparse(self._url)
            client = chromadb.HttpClient(
                host=parsed.hostname or "127.0.0.1",
                port=parsed.port or 8000,
                ssl=parsed.scheme == "https",
                headers={"Authorization": f"Bearer {self._token}"} if self._token else None,
                settings=chroma_settings,
                database=self._database or DEFAULT_DATABASE,
            )
        else:
            assert self._path is not None
            self._path.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(path=str(self._path), settings=chroma_settings)
        _, ef_class = _chroma_types()
        return client.get_or_create_collection(
            name=f"{COLLECTION}_{_slug(self.embedder.name)}",
            embedding_function=ef_class(self.embedder),
            metadata={"hnsw:space": "cosine"},
        )

    def reopen(self) -> None:
        """Reads the index again on next use: an embedded Chroma keeps one in-process system per path, which
        does not see what another process wrote since it started. A Chroma server needs nothing."""
        if self._url:
            return
        from chromadb.api.shared_system_client import SharedSystemClient

        with self._lock:
            if self._opened is not None:
                # only this path's system is dropped (not stopped: a collection another store object holds
                # keeps working); the next client builds a fresh one from the files
                SharedSystemClient._identifier_to_system.pop(str(self._path), None)
                SharedSystemClient._identifier_to_refcount.pop(str(self._path), None)
                self._opened = None

    def upsert(self, ids: list[str], texts: list[str], metadatas: list[dict[str, Any]]) -> None:
        if not ids:
            return
        vectors = self.embedder.embed(texts)
        self._collection.upsert(ids=ids, embeddings=vectors, documents=texts, metadatas=metadatas)

    def set_acl(self, doc_id: str, acl: list[str]) -> None:
        """Rewrites the `acl` metadata of a document's chunks in place; vectors and texts stay as they are."""
        got = self._collection.get(where={"doc_id": doc_id}, include=["metadatas"])
        if got["ids"]:
            metas = [{**dict(meta or {}), "acl": acl} for meta in got.get("metadatas") or []]
            self._collection.update(ids=got["ids"], metadatas=metas)

    def delete_docs(self, doc_ids: Sequence[str]) -> None:
        """Removes every chunk vector of these documents: one call per few hundred documents, not per document."""
        for start in range(0, len(doc_ids), DELETE_BATCH):
            self._collection.delete(where={"doc_id": {"$in": list(doc_ids[start : start + DELETE_BATCH])}})

    def search(
        self, query: str, principals: frozenset[str], k: int, *, visible_share: float = 0.0
    ) -> list[DenseHit]:
        """The k nearest chunks the principals may see. `visible_share` is the part of all chunks they may see
        (the store knows it). From POSTFILTER_MIN_SHARE up, the nearest chunks of the whole collection are
        fetched and filtered here: Chroma's own filter first lists every matching chunk, which grows with the
        corpus (about 17 times the unfiltered query's time at 20k chunks). The over-fetch depends only on that
        share, never on where hidden chunks lie. When hidden chunks crowd the nearest ones so that fewer than
        k visible remain, the query is asked again with Chroma's ACL filter: the hits are always the k nearest
        visible chunks, so neither their number nor which they are depends on what the asker cannot see."""
        vector = self.embed_query(query)
        # No count() first: Chroma answers an empty collection with no ids, and count() walks the collection.
        if visible_share >= POSTFILTER_MIN_SHARE:
            fetch = min(POSTFILTER_MAX, math.ceil(k * POSTFILTER_MARGIN / visible_share))
            result = self._collection.query(
                query_embeddings=[vector], n_results=fetch, include=["metadatas", "distances"]
            )
            hits = _visible_hits(result, principals)
            if len(hits) >= k or len(result["ids"][0]) < fetch:  # enough, or the whole collection was read
                return hits[:k]
        result = self._collection.query(
            query_embeddings=[vector],
            n_results=k,
            where=chroma_where(principals),
            include=["metadatas", "distances"],
        )
        return _visible_hits(result, principals)[:k]

    def similarity(self, query: str, chunk_ids: list[str]) -> dict[str, float]:
        """Cosine similarity of a query to stored chunks, read back from Chroma (no re-embedding of chunks)."""
        if not chunk_ids:
            return {}
        got = self._collection.get(ids=chunk_ids, include=["embeddings"])
        vectors = got.get("embeddings")
        if vectors is None or len(vectors) == 0:
            return {}
        q = self.embed_query(query)
        matrix = np.asarray(vectors, dtype=np.float32)
        sims = matrix @ q
        return {cid: float(s) for cid, s in zip(got["ids"], sims, strict=True)}

    def vectors_of(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id (themes cluster them; nothing is re-embedded)."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(chunk_ids), VECTOR_BATCH):
            got = self._collection.get(
                ids=list(chunk_ids[start : start + VECTOR_BATCH]), include=["embeddings"]
            )
            vectors = got.get("embeddings")
            if vectors is None:
                continue
            for cid, vector in zip(got["ids"], vectors, strict=True):
                found[cid] = np.asarray(vector, dtype=np.float32)
        return found

    def text_similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of a query to arbitrary short texts (sentences), with a small cache of their vectors."""
        if not texts:
            return []
        q = self.embed_query(query)
        with self._lock:  # this call's vectors are held here: a full cache may evict them meanwhile
            held = {t: self._text_cache[t] for t in dict.fromkeys(texts) if t in self._text_cache}
        missing = [t for t in dict.fromkeys(texts) if t not in held]
        if missing:
            vectors = self.embedder.embed(missing)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    held[text] = self._text_cache[text] = np.asarray(vector, dtype=np.float32)
                while len(self._text_cache) > self.text_cache_size:
                    self._text_cache.pop(next(iter(self._text_cache)))
        return [float(held[t] @ q) for t in texts]

    def embed_query(self, query: str) -> np.ndarray:
        with self._lock:
            cached = self._query_cache.get(query)
        if cached is None:
            cached = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
            with self._lock:
                self._query_cache[query] = cached
                while len(self._query_cache) > 256:
                    self._query_cache.pop(next(iter(self._query_cache)))
        return cached

    def count(self) -> int:
        return int(self._collection.count())


def _visible_hits(result: Any, principals: frozenset[str]) -> list[DenseHit]:
    """A Chroma query's hits, nearest first, that the principals may see (checked again on the metadata)."""
    ids = result["ids"][0]
    metas = (result.get("metadatas") or [[]])[0]
    dists = (result.get("distances") or [[]])[0]
    return [
        DenseHit(chunk_id=cid, doc_id=str(meta["doc_id"]), similarity=1.0 - float(dist))
        for cid, meta, dist in zip(ids, metas, dists, strict=True)
        if can_see(principals, meta.get("acl") or ())
    ]


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.lower())[:40]
