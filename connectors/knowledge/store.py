"""The knowledge store: the one object sync writes to and the flows read from.

Write side (used by `connectors.sync`): `upsert`, `delete`, `relink_mentions`. Read side (used by the flows):
`search_text`, `neighbors`, `expand`, `read`, `document`, `resolve`. Every read takes the caller's principals;
a document outside them is indistinguishable from a missing one (the same `None` or absence, the same work).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, text, update

from connectors.base import SourceDoc
from connectors.database import make_engine
from connectors.knowledge import lexical, term_counts
from connectors.knowledge.acl import visible, visible_doc_ids
from connectors.knowledge.chunking import CHUNKING_VERSION, chunk_texts
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedding import Embedder
from connectors.knowledge.graph import GraphCache, Neighbor, VisibleGraph
from connectors.knowledge.ledger import SyncLedger
from connectors.knowledge.results import DocumentFields, DocumentInfo, Hit
from connectors.knowledge.tables import (
    aliases,
    chunks,
    doc_acl,
    documents,
    edges,
    metadata,
    store_meta,
    sync_failures,
    sync_state,
)
from connectors.knowledge.themes import ThemeIndex, forget_document
from connectors.text import find_mentions, is_useful_name, normalise, short_name

log = logging.getLogger(__name__)

INDEX_FORMAT = 4  # bump when what is written per document changes (aliases, chunking): caches rebuild
WRITE_LOCK_KEY = 0x5E0717  # the advisory lock that serialises store writes on PostgreSQL
GENERATION_TTL_S = 1.0  # how stale another process's writes may look to this one's read caches
RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al.)
_NO_SEEDS: tuple[str, ...] = ()
# Copied as they are between documents and hits (updated_at is converted on the way).
_DOC_FIELDS = tuple(f.name for f in fields(DocumentFields) if f.name != "updated_at")
_IN_BATCH = 500  # ids per `IN (...)` (SQLite allows 32766 parameters; PostgreSQL more)


@dataclass(frozen=True)
class RestrictedDocument:
    """A non-public document as the permission audit sees it: what would betray it if it leaked."""

    id: str
    title: str
    acl: frozenset[str]
    names: tuple[str, ...]  # aliases other than the title
    chunks: tuple[tuple[str, str], ...]  # (chunk id, text) in order


class KnowledgeStore:
    def __init__(self, engine: Engine, vectors: ChunkVectors) -> None:
        self.engine = engine
        self.vectors = vectors
        self.ledger = SyncLedger(engine)
        self._graphs = GraphCache()
        self._df_cache: dict[tuple[int, frozenset[str]], dict[str, int]] = {}
        self._stats_cache: dict[tuple[int, frozenset[str]], lexical.VisibleStats] = {}
        self._row_groups: tuple[int, Any] = (
            -1,
            None,
        )  # (generation, the lexical index's ACL-group aggregates)
        self.themes = ThemeIndex(self)  # the layer above entities: built by sync, read by the broad path
        self._generation_seen: tuple[int, float] | None = None  # (value, when read)
        self._chunk_total = (-1, 0)  # (generation, chunks), for the visible share of a dense search
        self._vectors_seen: int | None = None  # the generation the vector index was last read at
        self._wrote = False  # this process wrote since: its own writes need no reopening
        self.lexical = lexical_index(engine.dialect.name)
        with engine.begin() as conn:
            metadata.create_all(conn)
            self.lexical.create(conn)
            self._adopt_vector_space(conn)
            if not term_counts.is_built(conn):  # a store from before the counts were kept: once
                self._lock_writers(conn)
                term_counts.build(conn, self.lexical)

    @classmethod
    def open(
        cls, db_url: str, embedder: Embedder, *, chroma_path: Path | None, chroma_url: str | None = None
    ) -> KnowledgeStore:
        return cls(make_engine(db_url), ChunkVectors(embedder, path=chroma_path, url=chroma_url))

    # ------------------------------------------------------------------ write side
    def _adopt_vector_space(self, conn: Any) -> None:
        """Documents indexed with another embedder or chunking (another vector space, another Chroma collection) have no
        vectors in this one's: their content hashes and source cursors are cleared, so the next sync reads
        and embeds everything again instead of calling it unchanged."""
        # the chunking is part of the space: chunks cut another way are other vectors
        name = f"{self.vectors.embedder.name}/chunking-{CHUNKING_VERSION}"
        stored = conn.execute(select(store_meta.c.value).where(store_meta.c.key == "embedder")).scalar()
        if stored == name:
            return
        if stored is None:
            conn.execute(insert(store_meta).values(key="embedder", value=name))
            if self.vectors.count() > 0:
                return  # a store from before the key was kept, with this embedder's vectors
        else:
            conn.execute(update(store_meta).where(store_meta.c.key == "embedder").values(value=name))
        changed = conn.execute(update(documents).values(content_hash="")).rowcount
        if changed:
            conn.execute(update(sync_state).values(cursor_json="{}"))
            log.info("embedder changed: documents will be embedded again", extra={"documents": changed})

    def alias_names(self) -> set[str]:
        """Every normalised alias name (sync compares them before and after to decide how much to relink)."""
        with self.engine.connect() as conn:
            return {r for (r,) in conn.execute(select(aliases.c.norm).distinct())}

    def content_hashes(self, source: str) -> dict[str, str]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(documents.c.id, documents.c.content_hash).where(documents.c.source == source)
            )
            return {r.id: r.content_hash for r in rows}

    def upsert(self, docs: Sequence[SourceDoc]) -> int:
        """Writes documents (chunks, vectors, FTS rows, ACL, links, aliases). Returns chunks embedded.

        One statement per table for the whole batch, not per document: at 100k passages the per-statement
        overhead, not SQLite, was the cost.
        """
        if not docs:
            return 0
        docs = list({doc.id: doc for doc in docs}.values())  # the last version of a repeated id wins
        pieces = [(doc, chunk_texts(doc)) for doc in docs]
        doc_ids = [doc.id for doc in docs]
        ids: list[str] = []
        texts: list[str] = []
        metas: list[dict[str, Any]] = []
        for doc, parts in pieces:
            for n, part in enumerate(parts):
                ids.append(f"{doc.id}#{n}")
                texts.append(f"{doc.title}\n{part}")
                metas.append(
                    {
                        "doc_id": doc.id,
                        "source": doc.source,
                        "title": doc.title,
                        "url": doc.url,
                        "updated_at": doc.updated_at.isoformat(),
                        "n": n,
                        "acl": sorted(doc.acl) or ["__nobody__"],
                    }
                )
        self.vectors.delete_docs(doc_ids)
        self.vectors.upsert(ids, texts, metas)
        with self._writing() as conn:
            self._lock_writers(conn)
            self._remove_many(conn, doc_ids)
            base = (conn.execute(select(func.max(chunks.c.rowid_fts))).scalar() or 0) + 1
            rows: dict[Any, list[dict[str, Any]]] = {
                t: [] for t in (documents, doc_acl, chunks, edges, aliases)
            }
            fts: list[tuple[int, str, str]] = []
            counted: dict[int, term_counts.Move] = {}
            for doc, parts in pieces:
                rows[documents].append(
                    {
                        "id": doc.id,
                        **{name: getattr(doc, name) for name in _DOC_FIELDS},
                        "updated_at": doc.updated_at,
                        "content_hash": doc.content_hash(),
                        "metadata_json": json.dumps(doc.metadata, default=str),
                    }
                )
                rows[doc_acl] += [{"doc_id": doc.id, "principal": p} for p in sorted(doc.acl)]
                for n, part in enumerate(parts):
                    rows[chunks].append(
                        {"id": f"{doc.id}#{n}", "rowid_fts": base, "doc_id": doc.id, "n": n, "text": part}
                    )
                    fts.append((base, doc.title, part))
                    counted[base] = (None, term_counts.acl_key(doc.acl))
                    base += 1
                rows[edges] += [
                    {
                        "src": doc.id,
                        "target": normalise(link.target) if link.by_name else link.target,
                        "by_name": link.by_name,
                        "type": link.type.value,
                        "origin": doc.id,
                        "derived": False,
                        "weight": 1.0,
                    }
                    for link in doc.links
                ]
                rows[aliases] += [
                    {"norm": k, "name": v, "target": doc.id, "origin": doc.id} for k, v in _names(doc).items()
                ]
            for table, batch in rows.items():
                if batch:
                    conn.execute(insert(table), batch)
            self.lexical.insert(conn, fts)
            term_counts.adjust(conn, self.lexical, counted)
            self._bump(conn)
        return len(ids)

    def acls(self, source: str) -> dict[str, frozenset[str]]:
        """The stored ACL of every document of a source (empty: nobody)."""
        with self.engine.connect() as conn:
            ids = conn.execute(select(documents.c.id).where(documents.c.source == source))
            found: dict[str, set[str]] = {doc_id: set() for (doc_id,) in ids}
            rows = conn.execute(
                select(doc_acl.c.doc_id, doc_acl.c.principal)
                .join(documents, documents.c.id == doc_acl.c.doc_id)
                .where(documents.c.source == source)
            )
            for doc_id, principal in rows:
                found[doc_id].add(principal)
        return {doc_id: frozenset(acl) for doc_id, acl in found.items()}

    def set_acls(self, changes: dict[str, frozenset[str]]) -> int:
        """Replaces the ACL of indexed documents (permission sync) everywhere it is enforced: the SQL rows the
        lexical index, reads and the graph filter by, then the chunk metadata Chroma filters by. Nothing is
        re-embedded. Unknown ids are ignored; returns how many documents changed."""
        with self._writing() as conn:
            self._lock_writers(conn)
            known = {
                r for (r,) in conn.execute(select(documents.c.id).where(documents.c.id.in_(list(changes))))
            }
            before = term_counts.row_keys(conn, sorted(known))
            moves = {row: (key, term_counts.acl_key(changes[doc])) for row, (doc, key) in before.items()}
            term_counts.adjust(conn, self.lexical, moves)  # the rows' terms now count for their new group
            for doc_id in known:
                conn.execute(delete(doc_acl).where(doc_acl.c.doc_id == doc_id))
                if changes[doc_id]:
                    conn.execute(
                        insert(doc_acl), [{"doc_id": doc_id, "principal": p} for p in sorted(changes[doc_id])]
                    )
            if known:
                self._bump(conn)  # cached visible graphs and BM25 statistics are per generation
        for doc_id in sorted(known):
            self.vectors.set_acl(doc_id, sorted(changes[doc_id]) or ["__nobody__"])
        return len(known)

    def _lock_writers(self, conn: Any) -> None:
        """One writer at a time on PostgreSQL (SQLite already has one): chunk rowids are numbered from the
        current maximum, which two processes syncing different sources would otherwise both read."""
        if self.engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK_KEY})

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Removes documents with everything derived from them: chunks, vectors, edges, aliases."""
        doc_ids = list(dict.fromkeys(doc_ids))
        if not doc_ids:
            return 0
        self.vectors.delete_docs(doc_ids)
        with self._writing() as conn:
            removed = self._remove_many(conn, doc_ids)
            self._bump(conn)
        return removed

    def _remove_many(self, conn: Any, doc_ids: Sequence[str]) -> int:
        """Deletes the rows of these documents, a few hundred ids per statement; returns documents removed."""
        removed = 0
        for start in range(0, len(doc_ids), _IN_BATCH):
            batch = doc_ids[start : start + _IN_BATCH]
            leaving = term_counts.row_keys(conn, batch)  # their terms stop counting while still indexed
            term_counts.adjust(conn, self.lexical, {row: (key, None) for row, (_, key) in leaving.items()})
            self.lexical.delete(conn, list(leaving))
            conn.execute(delete(chunks).where(chunks.c.doc_id.in_(batch)))
            conn.execute(delete(edges).where(edges.c.origin.in_(batch)))
            conn.execute(delete(aliases).where(aliases.c.origin.in_(batch)))
            conn.execute(delete(doc_acl).where(doc_acl.c.doc_id.in_(batch)))
            for doc_id in batch:
                forget_document(conn, doc_id)
            removed += conn.execute(delete(documents).where(documents.c.id.in_(batch))).rowcount or 0
        return removed

    def delete_source(self, source: str) -> int:
        """Removes every document of a source (and all derived from them), and its sync state."""
        with self.engine.connect() as conn:
            ids = [r for (r,) in conn.execute(select(documents.c.id).where(documents.c.source == source))]
        removed = self.delete(ids)
        with self.engine.begin() as conn:
            conn.execute(delete(sync_state).where(sync_state.c.source == source))
            conn.execute(delete(sync_failures).where(sync_failures.c.source == source))
        return removed

    def relink_mentions(self, doc_ids: Iterable[str] | None = None) -> int:
        """Mines mentions of known names (titles, keys, aliases) in document text into derived MENTIONS edges.

        Edges are stored by name and resolved at read time through visible aliases only. With `doc_ids` None
        every document is re-mined (needed when new names arrive); otherwise only those documents.
        """
        with self._writing() as conn:
            known = frozenset(r for (r,) in conn.execute(select(aliases.c.norm).distinct()))
            own: dict[str, set[str]] = {}
            for row in conn.execute(select(aliases.c.origin, aliases.c.norm)):
                own.setdefault(row.origin, set()).add(row.norm)
            query = select(chunks.c.doc_id, chunks.c.text).order_by(chunks.c.doc_id, chunks.c.n)
            wanted = None if doc_ids is None else set(doc_ids)
            if wanted is not None:
                query = query.where(chunks.c.doc_id.in_(wanted))
            texts: dict[str, list[str]] = {}
            for row in conn.execute(query):
                texts.setdefault(row.doc_id, []).append(row.text)
            targets = list(texts) if wanted is None else [d for d in wanted if d in texts]
            for start in range(0, len(targets), 500):
                batch = targets[start : start + 500]
                conn.execute(delete(edges).where(edges.c.derived.is_(True), edges.c.origin.in_(batch)))
            rows = []
            for doc_id in targets:
                for name in find_mentions("\n".join(texts[doc_id]), known, exclude=own.get(doc_id, ())):
                    rows.append(
                        {
                            "src": doc_id,
                            "target": name,
                            "by_name": True,
                            "type": "mentions",
                            "origin": doc_id,
                            "derived": True,
                            "weight": 1.0,
                        }
                    )
            if rows:
                conn.execute(insert(edges), rows)
            self._bump(conn)
            return len(rows)

    def _bump(self, conn: Any) -> None:
        current = conn.execute(select(store_meta.c.value).where(store_meta.c.key == "generation")).scalar()
        if current is None:
            conn.execute(insert(store_meta).values(key="generation", value="1"))
        else:
            conn.execute(
                update(store_meta).where(store_meta.c.key == "generation").values(value=str(int(current) + 1))
            )

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        """A write transaction; afterwards this process reads the new generation at once."""
        try:
            with self.engine.begin() as conn:
                yield conn
        finally:
            self._generation_seen = None
            self._wrote = True

    def generation(self) -> int:
        """The store's write counter. Read-side caches key on it and ask for it many times per question, so it
        is re-read at most every GENERATION_TTL_S (a database round trip each time on PostgreSQL): another
        process's writes show within that, this process's at once."""
        seen, now = self._generation_seen, time.monotonic()
        if seen is not None and now - seen[1] < GENERATION_TTL_S:
            return seen[0]
        with self.engine.connect() as conn:
            value = conn.execute(select(store_meta.c.value).where(store_meta.c.key == "generation")).scalar()
        self._generation_seen = (int(value or 0), now)
        return self._generation_seen[0]

    # ------------------------------------------------------------------ read side
    def _vectors_now(self) -> ChunkVectors:
        """The vector index as of the store's generation. An embedded Chroma opened before another process
        wrote (the server syncing a source while a worker process answers) does not see those vectors until it
        is opened again: it is, once the generation moved by a write that was not this process's."""
        generation = self.generation()
        if self._vectors_seen is not None and generation != self._vectors_seen and not self._wrote:
            self.vectors.reopen()
        self._vectors_seen, self._wrote = generation, False
        return self.vectors

    def graph(self, principals: frozenset[str]) -> VisibleGraph:
        generation, principals = self.generation(), frozenset(principals)
        cached = self._graphs.cached(generation, principals)  # asked many times per question: no round trip
        if cached is not None:
            return cached
        with self.engine.connect() as conn:
            return self._graphs.get(conn, generation, principals)

    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[Hit]:
        """Lexical and dense search fused by reciprocal rank; `mode` may be "bm25" or "dense" alone."""
        principals = frozenset(principals)
        if not principals or not query.strip():
            return []
        depth = max(k * 3, 20)
        lex: list[lexical.LexicalHit] = []
        dense: list[Any] = []
        if mode in {"hybrid", "bm25"}:
            with self.engine.connect() as conn:
                lex = self.lexical.search(
                    conn, query, principals, depth, self._visible_stats(conn, principals)
                )
        if mode in {"hybrid", "dense"}:
            dense = self._vectors_now().search(
                query, principals, depth, visible_share=self._visible_share(principals)
            )
        scores: dict[str, float] = {}
        lex_rank: dict[str, int] = {}
        sims: dict[str, float] = {}
        for rank, hit in enumerate(lex):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            lex_rank[hit.chunk_id] = rank
        for rank, dhit in enumerate(dense):
            scores[dhit.chunk_id] = scores.get(dhit.chunk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            sims[dhit.chunk_id] = dhit.similarity
        ranked = sorted(scores, key=lambda c: (-scores[c], c))[:k]
        found = {h.chunk_id: h for h in self._hits(ranked, principals)}
        return [_with_scores(found[c], scores[c], lex_rank.get(c), sims.get(c)) for c in ranked if c in found]

    def _visible_stats(self, conn: Any, principals: frozenset[str]) -> lexical.VisibleStats:
        """BM25's corpus statistics over what these principals may see, cached per store generation."""
        key = (self.generation(), principals)
        found = self._stats_cache.get(key)
        if found is None:
            if len(self._stats_cache) > 32:
                self._stats_cache.clear()
            found = self._stats_cache[key] = self.lexical.visible_stats(
                conn, principals, self._lexical_groups(conn)
            )
        return found

    def _lexical_groups(self, conn: Any) -> Any:
        """The lexical index's per-ACL-group aggregates (None on PostgreSQL), read once per store generation
        and shared by every asker: their statistics are sums over the groups they may see."""
        generation = self.generation()
        if self._row_groups[0] != generation:
            self._row_groups = (generation, self.lexical.row_groups(conn))
        return self._row_groups[1]

    def _visible_share(self, principals: frozenset[str]) -> float:
        """The part of all chunks these principals may see (counted once per store generation)."""
        visible, _ = self.term_frequencies((), principals)
        generation = self.generation()
        if self._chunk_total[0] != generation:
            with self.engine.connect() as conn:
                total = conn.execute(select(func.count()).select_from(chunks)).scalar() or 0
            self._chunk_total = (generation, int(total))
        return visible / self._chunk_total[1] if self._chunk_total[1] else 0.0

    def similarity(
        self, query: str, chunk_ids: Sequence[str], principals: frozenset[str]
    ) -> dict[str, float]:
        """Dense similarity of a query to chunks the principals may see (others are simply absent)."""
        visible = [h.chunk_id for h in self._hits(list(chunk_ids), frozenset(principals))]
        return self._vectors_now().similarity(query, visible)

    def text_similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        """Similarity of a query to texts the caller already holds (sentences of evidence it was allowed to read)."""
        return self.vectors.text_similarity(query, list(texts))

    def read(self, chunk_id: str, principals: frozenset[str]) -> Hit | None:
        hits = self._hits([chunk_id], frozenset(principals))
        return hits[0] if hits else None

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[Hit]:
        with self.engine.connect() as conn:
            ids = [
                r
                for (r,) in conn.execute(
                    select(chunks.c.id).where(chunks.c.doc_id == doc_id).order_by(chunks.c.n)
                )
            ]
        return self._hits(ids, frozenset(principals))

    def document(self, doc_id: str, principals: frozenset[str]) -> DocumentInfo | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(documents).where(documents.c.id == doc_id, visible(documents.c.id, principals))
            ).first()
        if row is None:
            return None
        return DocumentInfo(
            id=row.id,
            **_doc_fields(row),
            metadata=json.loads(row.metadata_json or "{}"),
        )

    def neighbors(
        self, seeds: Iterable[str], principals: frozenset[str], types: set[str] | None = None
    ) -> list[Neighbor]:
        return self.graph(frozenset(principals)).neighbors(seeds, types)

    def expand(
        self, seeds: Iterable[str], principals: frozenset[str], k: int = 10
    ) -> list[tuple[str, float]]:
        """Personalised PageRank from the seeds over the ACL-filtered subgraph: (doc id, score), seeds included."""
        return self.graph(frozenset(principals)).personalised_pagerank(seeds, k)

    def resolve(self, names: Iterable[str], principals: frozenset[str]) -> dict[str, list[str]]:
        """Names (titles, keys, aliases) -> the visible documents they denote."""
        graph = self.graph(frozenset(principals))
        return {name: sorted(graph.resolve(name)) for name in names}

    def term_frequencies(
        self, stems: Iterable[str], principals: frozenset[str]
    ) -> tuple[int, dict[str, int]]:
        """(visible chunk count, visible chunks containing each stemmed term): IDF as this asker's corpus
        gives it, so term weights never reflect documents the asker cannot see."""
        principals = frozenset(principals)
        generation = self.generation()
        key = (generation, principals)
        cache = self._df_cache.setdefault(key, {})
        if len(self._df_cache) > 32:
            self._df_cache = {key: cache}
        with self.engine.connect() as conn:
            if "__total__" not in cache:
                cache["__total__"] = self.lexical.count_visible(conn, principals, self._lexical_groups(conn))
            for s in stems:
                if s not in cache:
                    cache[s] = self.lexical.document_frequency(
                        conn, s, principals, self._lexical_groups(conn)
                    )
        return cache["__total__"], {s: cache[s] for s in stems}

    def stats(self) -> dict[str, int]:
        with self.engine.connect() as conn:
            return {
                "documents": conn.execute(select(func.count()).select_from(documents)).scalar() or 0,
                "chunks": conn.execute(select(func.count()).select_from(chunks)).scalar() or 0,
                "edges": conn.execute(select(func.count()).select_from(edges)).scalar() or 0,
                "aliases": conn.execute(select(func.count()).select_from(aliases)).scalar() or 0,
            }

    def visible_count(self, principals: Iterable[str]) -> int:
        """How many documents these principals may open (`sleuth whoami`)."""
        with self.engine.connect() as conn:
            query = (
                select(func.count())
                .select_from(documents)
                .where(documents.c.id.in_(visible_doc_ids(principals)))
            )
            return int(conn.execute(query).scalar() or 0)

    def acl_entries(self, source: str) -> dict[str, list[str]]:
        """Every ACL entry of a source's documents -> the documents carrying it (sync checks them against the
        source's directory; an entry nobody holds hides its documents)."""
        found: dict[str, list[str]] = {}
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(doc_acl.c.principal, doc_acl.c.doc_id)
                .join(documents, documents.c.id == doc_acl.c.doc_id)
                .where(documents.c.source == source)
                .order_by(doc_acl.c.principal, doc_acl.c.doc_id)
            )
            for principal, doc_id in rows:
                found.setdefault(principal, []).append(doc_id)
        return found

    # Unfiltered views for the permission audit (an admin tool that must know what is hidden to probe for it).
    # Nothing on an asker's path calls these.

    def restricted_documents(self) -> list[RestrictedDocument]:
        """Every document whose ACL does not include `public`, with its names and chunk texts in order."""
        return self._audited(public=False)

    def public_documents(self) -> list[RestrictedDocument]:
        """Every document anyone may open, in the same shape (the audit makes them private for a moment)."""
        return self._audited(public=True)

    def _audited(self, *, public: bool) -> list[RestrictedDocument]:
        with self.engine.connect() as conn:
            acl: dict[str, set[str]] = {}
            for row in conn.execute(select(doc_acl.c.doc_id, doc_acl.c.principal)):
                acl.setdefault(row.doc_id, set()).add(row.principal)
            hidden = sorted(d for d, p in acl.items() if ("public" in p) == public)
            titles = {r.id: r.title for r in conn.execute(select(documents.c.id, documents.c.title))}
            names: dict[str, list[str]] = {}
            for row in conn.execute(select(aliases.c.origin, aliases.c.name)):
                names.setdefault(row.origin, []).append(row.name)
            texts: dict[str, list[tuple[str, str]]] = {}
            rows = conn.execute(select(chunks.c.doc_id, chunks.c.id, chunks.c.text).order_by(chunks.c.n))
            for row in rows:
                texts.setdefault(row.doc_id, []).append((row.id, row.text))
        return [
            RestrictedDocument(
                id=doc_id,
                title=titles.get(doc_id, doc_id),
                acl=frozenset(acl[doc_id]),
                names=tuple(n for n in names.get(doc_id, []) if n != titles.get(doc_id)),
                chunks=tuple(texts.get(doc_id, [])),
            )
            for doc_id in hidden
        ]

    def linked_document_ids(self, doc_id: str) -> list[str]:
        """Documents joined to `doc_id` by a stored edge in either direction (entities left out)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(edges.c.src, edges.c.target).where(
                    (edges.c.target == doc_id) | (edges.c.src == doc_id)
                )
            )
            linked = {r.src if r.src != doc_id else r.target for r in rows}
        return sorted(d for d in linked if ":" in d and d != doc_id)

    def _hits(self, chunk_ids: Sequence[str], principals: frozenset[str]) -> list[Hit]:
        if not chunk_ids or not principals:
            return []
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(
                    chunks.c.id.label("chunk_id"),
                    chunks.c.text.label("chunk_text"),
                    documents.c.id.label("doc_id"),
                    documents.c.title,
                    documents.c.url,
                    documents.c.source,
                    documents.c.kind,
                    documents.c.updated_at,
                    documents.c.version,
                )
                .join(documents, documents.c.id == chunks.c.doc_id)
                .where(chunks.c.id.in_(list(chunk_ids)), visible(documents.c.id, principals))
            ).all()
        by_id = {
            r.chunk_id: Hit(chunk_id=r.chunk_id, doc_id=r.doc_id, text=r.chunk_text, **_doc_fields(r))
            for r in rows
        }
        return [by_id[c] for c in chunk_ids if c in by_id]


def lexical_index(dialect: str) -> ModuleType:
    """The lexical index for a database dialect: FTS5 (`lexical`) on SQLite, full-text search (`lexical_pg`,
    which ranks through `lexical`) on PostgreSQL. Chosen here so that neither module imports the other back."""
    if dialect == "postgresql":
        from connectors.knowledge import lexical_pg

        return lexical_pg
    return lexical


def _names(doc: SourceDoc) -> dict[str, str]:
    """The names a document answers to, normalised -> as written: its title, aliases and short title."""
    short = short_name(doc.title)
    if short and " " not in short.strip() and not (short.isupper() and len(short) > 2):
        short = None  # "Heart (1987 film)" -> "Heart" would match every capitalised "Heart"; "WILM (AM)" not
    candidates = (doc.title, *doc.aliases, *([short] if short else []))
    return {normalise(n): n for n in candidates if is_useful_name(n)}


def _with_scores(hit: Hit, score: float, lex_rank: int | None, sim: float | None) -> Hit:
    return Hit(**{**hit.__dict__, "score": score, "lexical_rank": lex_rank, "dense_similarity": sim})


def _doc_fields(row: Any) -> dict[str, str]:
    """What a hit and a document's info say about the document, read from a `documents` row."""
    return {name: getattr(row, name) for name in _DOC_FIELDS} | {"updated_at": _iso(row.updated_at)}


def _iso(value: datetime | str) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)
