"""Themes: the layer above entities (Cog-RAG, Hu et al. 2025), built offline from the chunks themselves.

- **Theme hyperedges**: chunk vectors clustered (spherical k-means); each cluster is a theme over its chunks and
  the entities they mention. Only membership and a centroid are stored.
- **Entity hyperedges**: the known names one chunk mentions, together (`chunk_entities`), so retrieval can move
  from a theme to its entities and from an entity to the others it appears with.
- **Permissions**: what a theme shows (label, key terms, size, entities) is computed at read time from the chunks
  the asker may see, never stored from restricted text; a model-written summary keeps the chunks it came from and
  is shown only to someone who may see all of them, and only while they are unchanged.
- **Lineage**: rewriting or deleting a document drops its chunks from their themes (`forget_document`, in the
  same transaction); `refresh` then places the new chunks into the nearest themes and recomputes only the
  centroids it touched. Nothing changed means nothing is recomputed. A full rebuild happens only when there are
  no themes yet or when more than `REBUILD_SHARE` of the chunks are new.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from sqlalchemy import Connection, Engine, delete, insert, select, update

from connectors.knowledge.acl import visible_doc_ids
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.clustering import class_tfidf, normalised, spherical_kmeans, theme_count
from connectors.knowledge.graph import VisibleGraph
from connectors.knowledge.results import ThemeView
from connectors.knowledge.tables import aliases, chunk_entities, chunks, store_meta, theme_members, themes
from connectors.text import STOPWORDS, find_mentions, tokens

log = logging.getLogger(__name__)

REBUILD_SHARE = 0.3  # more new chunks than this share of the corpus: cluster again from scratch
MIN_CHUNKS = 4  # fewer chunks than this: no themes
LABEL_TERMS = 3
UNTITLED = "untitled theme"  # a theme whose visible chunks give no key term
KEY_TERMS = 8
TOP_ENTITIES = 8
SUMMARY_CHUNKS = 6  # chunks nearest the centroid that a model reads to name a theme
CACHE_SIZE = 16
_GENERATION_KEY = "theme_generation"
MINED = ""  # the norm of the row that marks a chunk as mined (a chunk may mention no known name)

# A namer gets a theme's key terms and its central chunk texts and returns (label, summary), or None when it
# could not (the theme keeps its offline label and is tried again next time).
Namer = Callable[[list[str], list[str]], tuple[str, str] | None]


@dataclass(frozen=True)
class ThemeRefresh:
    """What one refresh did: the themes it touched (a test pins that one changed document touches few)."""

    full: bool
    themes: int
    touched: tuple[int, ...]
    assigned: int
    entity_chunks: int
    seconds: float


@dataclass
class _Visible:
    views: list[ThemeView]
    centroids: np.ndarray  # one unit row per view: the mean of its visible chunk vectors
    entities_of: dict[str, tuple[str, ...]] = field(default_factory=dict)  # chunk id -> display names


def forget_document(conn: Connection, doc_id: str) -> None:
    """Lineage: a document rewritten or deleted leaves its themes and entity hyperedges at once; the themes it
    left are marked for the next refresh to recompute (or drop, when nothing is left in them)."""
    left = select(theme_members.c.theme_id).where(theme_members.c.doc_id == doc_id).distinct()
    conn.execute(update(themes).where(themes.c.id.in_(left)).values(dirty=True))
    conn.execute(delete(theme_members).where(theme_members.c.doc_id == doc_id))
    conn.execute(delete(chunk_entities).where(chunk_entities.c.doc_id == doc_id))


class _Store(Protocol):
    """What themes use of the knowledge store (which owns the one ThemeIndex)."""

    engine: Engine
    vectors: ChunkVectors

    def generation(self) -> int: ...

    def graph(self, principals: frozenset[str]) -> VisibleGraph: ...


class ThemeIndex:
    """Builds themes at sync and answers theme reads for one principal set at a time."""

    def __init__(self, store: _Store) -> None:
        self._store = store
        self._cache: dict[tuple[int, int, frozenset[str]], _Visible] = {}

    # ------------------------------------------------------------------ write side
    def refresh(self, *, relink_entities: bool = False, full: bool = False) -> ThemeRefresh:
        """Brings themes and entity hyperedges up to date with the chunks (see the module docstring)."""
        started = time.perf_counter()
        engine = self._store.engine
        with engine.connect() as conn:
            all_chunks = {r.id: r.doc_id for r in conn.execute(select(chunks.c.id, chunks.c.doc_id))}
            placed = {r.chunk_id: r.theme_id for r in conn.execute(select(theme_members))}
            theme_rows = conn.execute(select(themes.c.id, themes.c.centroid, themes.c.dirty)).all()
            centroids = {r.id: np.frombuffer(r.centroid, dtype=np.float32) for r in theme_rows}
            dirty = {r.id for r in theme_rows if r.dirty}
            mined = {r for (r,) in conn.execute(select(chunk_entities.c.chunk_id).distinct())}
        entity_targets = list(all_chunks) if relink_entities else [c for c in all_chunks if c not in mined]
        entity_chunks = self._mine_entities(entity_targets, replace=relink_entities)
        new = [c for c in all_chunks if c not in placed]
        gone = [c for c in placed if c not in all_chunks]
        rebuild = full or not centroids or len(new) > REBUILD_SHARE * max(1, len(all_chunks))
        if rebuild:
            touched = self._rebuild(all_chunks)
        elif new or gone or dirty:
            touched = self._place(new, gone, dirty, all_chunks, placed, centroids)
        else:
            touched = []
        if rebuild or touched or entity_chunks:
            with engine.begin() as conn:
                _bump(conn)
        with engine.connect() as conn:
            count = len(conn.execute(select(themes.c.id)).all())
        result = ThemeRefresh(
            full=rebuild,
            themes=count,
            touched=tuple(sorted(touched)),
            assigned=len(all_chunks) if rebuild else len(new),
            entity_chunks=entity_chunks,
            seconds=round(time.perf_counter() - started, 3),
        )
        log.info(
            "themes refreshed",
            extra={"full": result.full, "themes": result.themes, "touched": len(result.touched)},
        )
        return result

    def _rebuild(self, all_chunks: dict[str, str]) -> list[int]:
        ids = sorted(all_chunks)
        vectors = self._store.vectors.vectors_of(ids)
        ids = [c for c in ids if c in vectors]
        with self._store.engine.begin() as conn:
            conn.execute(delete(theme_members))
            conn.execute(delete(themes))
            if len(ids) < MIN_CHUNKS:
                return []
            labels, centres = spherical_kmeans(np.stack([vectors[c] for c in ids]), theme_count(len(ids)))
            theme_ids = []
            for centre in centres:
                row = conn.execute(insert(themes).values(centroid=centre.astype(np.float32).tobytes()))
                theme_ids.append(int(row.inserted_primary_key[0]))
            rows = [
                {"chunk_id": c, "theme_id": theme_ids[int(label)], "doc_id": all_chunks[c]}
                for c, label in zip(ids, labels, strict=True)
            ]
            for start in range(0, len(rows), 5000):
                conn.execute(insert(theme_members), rows[start : start + 5000])
        return theme_ids

    def _place(
        self,
        new: list[str],
        gone: list[str],
        dirty: set[int],
        all_chunks: dict[str, str],
        placed: dict[str, int],
        centroids: dict[int, np.ndarray],
    ) -> list[int]:
        """Incremental: new chunks join their nearest theme; only themes that gained or lost chunks move."""
        order = sorted(centroids)
        if not order:
            return []
        matrix = np.stack([centroids[t] for t in order])
        vectors = self._store.vectors.vectors_of(new)
        touched = {placed[c] for c in gone} | dirty
        members: dict[str, int] = {c: t for c, t in placed.items() if c in all_chunks}
        rows = []
        for c in new:
            if c not in vectors:
                continue
            theme = order[int(np.argmax(matrix @ normalised(vectors[c][None, :])[0]))]
            members[c] = theme
            touched.add(theme)
            rows.append({"chunk_id": c, "theme_id": theme, "doc_id": all_chunks[c]})
        by_theme: dict[int, list[str]] = defaultdict(list)
        for c, t in members.items():
            if t in touched:
                by_theme[t].append(c)
        kept_vectors = self._store.vectors.vectors_of([c for cs in by_theme.values() for c in cs])
        with self._store.engine.begin() as conn:
            if gone:
                conn.execute(delete(theme_members).where(theme_members.c.chunk_id.in_(gone)))
            if rows:
                conn.execute(insert(theme_members), rows)
            for t in touched:
                vecs = [kept_vectors[c] for c in by_theme.get(t, []) if c in kept_vectors]
                if not vecs:
                    conn.execute(delete(themes).where(themes.c.id == t))
                    continue
                centre = normalised(np.stack(vecs).sum(axis=0, keepdims=True))[0]
                conn.execute(
                    update(themes).where(themes.c.id == t).values(centroid=centre.tobytes(), dirty=False)
                )
        return sorted(touched)

    def _mine_entities(self, chunk_ids: list[str], *, replace: bool) -> int:
        """Entity hyperedges: the known names each chunk mentions (its own document's names left out)."""
        if not chunk_ids:
            return 0
        wanted = set(chunk_ids)
        with self._store.engine.begin() as conn:
            known = frozenset(r for (r,) in conn.execute(select(aliases.c.norm).distinct()))
            own: dict[str, set[str]] = defaultdict(set)
            for row in conn.execute(select(aliases.c.origin, aliases.c.norm)):
                own[row.origin].add(row.norm)
            if replace:
                conn.execute(delete(chunk_entities))
            rows = []
            for row in conn.execute(select(chunks.c.id, chunks.c.doc_id, chunks.c.text)):
                if row.id not in wanted:
                    continue
                rows.append({"chunk_id": row.id, "norm": MINED, "doc_id": row.doc_id})  # mined, maybe nothing
                for norm in find_mentions(row.text, known, exclude=own.get(row.doc_id, ())):
                    rows.append({"chunk_id": row.id, "norm": norm, "doc_id": row.doc_id})
            for start in range(0, len(rows), 5000):
                conn.execute(insert(chunk_entities), rows[start : start + 5000])
        return len(wanted)

    def name_themes(self, namer: Namer) -> int:
        """Asks a model (when one is configured) to name and summarise each theme whose summary is missing or
        stale. The summary is stored with the chunks it was written from; see `views` for who may read it."""
        named = 0
        for theme_id, sources in self._central_chunks().items():
            texts = [t for _, t in sources]
            digest = _digest(texts)
            with self._store.engine.connect() as conn:
                current = conn.execute(select(themes.c.summary_hash).where(themes.c.id == theme_id)).scalar()
            if current == digest:
                continue
            terms = class_tfidf({theme_id: [_terms(t) for t in texts]}).get(theme_id, [])
            named_as = namer(terms, texts)
            if named_as is None:
                continue
            label, summary = named_as
            with self._store.engine.begin() as conn:
                conn.execute(
                    update(themes)
                    .where(themes.c.id == theme_id)
                    .values(
                        summary=f"{label.strip()}: {summary.strip()}" if label.strip() else summary.strip(),
                        summary_sources=json.dumps([c for c, _ in sources]),
                        summary_hash=digest,
                    )
                )
                _bump(conn)
            named += 1
        return named

    def _central_chunks(self) -> dict[int, list[tuple[str, str]]]:
        with self._store.engine.connect() as conn:
            centroids = {
                r.id: np.frombuffer(r.centroid, dtype=np.float32) for r in conn.execute(select(themes))
            }
            rows = conn.execute(
                select(theme_members.c.theme_id, chunks.c.id, chunks.c.text).join(
                    chunks, chunks.c.id == theme_members.c.chunk_id
                )
            ).all()
        by_theme: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for r in rows:
            by_theme[r.theme_id].append((r.id, r.text))
        vectors = self._store.vectors.vectors_of([r.id for r in rows])
        out = {}
        for theme_id, members in by_theme.items():
            centre = centroids.get(theme_id)
            if centre is None:
                continue
            members.sort(key=lambda m: -float(vectors[m[0]] @ centre) if m[0] in vectors else 0.0)
            out[theme_id] = sorted(members[:SUMMARY_CHUNKS])
        return out

    # ------------------------------------------------------------------ read side
    def views(self, principals: frozenset[str]) -> list[ThemeView]:
        """Every theme with at least one chunk the principals may see, largest first."""
        return list(self._visible(frozenset(principals)).views)

    def themes_for(self, query: str, principals: frozenset[str], k: int = 5) -> list[tuple[ThemeView, float]]:
        """The asker's themes nearest the query (cosine to the centroid of their visible chunks), best first."""
        visible = self._visible(frozenset(principals))
        if not visible.views or not query.strip():
            return []
        scores = visible.centroids @ self._store.vectors.embed_query(query)
        order = np.argsort(-scores)[:k]
        return [(visible.views[int(i)], float(scores[int(i)])) for i in order]

    def entities_of(self, chunk_ids: Iterable[str], principals: frozenset[str]) -> dict[str, tuple[str, ...]]:
        """Entity hyperedges of visible chunks: chunk id -> the visible names it mentions."""
        found = self._visible(frozenset(principals)).entities_of
        return {c: found[c] for c in chunk_ids if c in found}

    def co_occurring(self, name: str, principals: frozenset[str]) -> list[str]:
        """The names that share a visible chunk with `name`, most shared chunks first."""
        together: Counter[str] = Counter()
        for names in self._visible(frozenset(principals)).entities_of.values():
            if name in names:
                together.update(n for n in names if n != name)
        return [n for n, _ in together.most_common()]

    def _visible(self, principals: frozenset[str]) -> _Visible:
        key = (self._store.generation(), self._generation(), principals)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._build_visible(principals)
            if len(self._cache) >= CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = cached
        return cached

    def _build_visible(self, principals: frozenset[str]) -> _Visible:
        if not principals:
            return _Visible(views=[], centroids=np.zeros((0, 1), dtype=np.float32))
        visible = visible_doc_ids(principals)
        with self._store.engine.connect() as conn:
            rows = conn.execute(
                select(theme_members.c.theme_id, chunks.c.id, chunks.c.doc_id, chunks.c.text)
                .join(chunks, chunks.c.id == theme_members.c.chunk_id)
                .where(chunks.c.doc_id.in_(visible))
                .order_by(chunks.c.id)
            ).all()
            mentions = conn.execute(
                select(chunk_entities.c.chunk_id, chunk_entities.c.norm).where(
                    chunk_entities.c.doc_id.in_(visible)
                )
            ).all()
            summaries = {
                r.id: (r.summary, json.loads(r.summary_sources or "[]"), r.summary_hash)
                for r in conn.execute(
                    select(themes.c.id, themes.c.summary, themes.c.summary_sources, themes.c.summary_hash)
                )
            }
        graph = self._store.graph(principals)
        entities: dict[str, list[str]] = defaultdict(list)
        for m in mentions:
            if m.norm != MINED and graph.names.get(
                m.norm
            ):  # a name only an alias from a hidden page explains stays unnamed
                entities[m.chunk_id].append(graph.display.get(m.norm, m.norm))
        members: dict[int, list[Any]] = defaultdict(list)
        for r in rows:
            members[r.theme_id].append(r)
        texts = {r.id: r.text for r in rows}
        terms = class_tfidf({t: [_terms(r.text) for r in rs] for t, rs in members.items()}, top=KEY_TERMS)
        vectors = self._store.vectors.vectors_of([r.id for r in rows])
        views, centres = [], []
        for theme_id, rs in sorted(members.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            vecs = [vectors[r.id] for r in rs if r.id in vectors]
            if not vecs:
                continue
            docs = Counter(r.doc_id for r in rs)
            named = Counter(n for r in rs for n in entities.get(r.id, ()))
            summary, sources, digest = summaries.get(theme_id, ("", [], ""))
            shown = (
                bool(summary)
                and all(c in texts for c in sources)
                and _digest([texts[c] for c in sources]) == digest
            )
            key_terms = tuple(terms.get(theme_id, []))
            views.append(
                ThemeView(
                    id=theme_id,
                    label=" · ".join(key_terms[:LABEL_TERMS]) or UNTITLED,  # never the store's id
                    terms=key_terms,
                    size=len(rs),
                    docs=tuple(d for d, _ in docs.most_common()),
                    chunk_ids=tuple(r.id for r in rs),
                    entities=tuple(n for n, _ in named.most_common(TOP_ENTITIES)),
                    summary=summary if shown else None,
                )
            )
            centres.append(normalised(np.stack(vecs).sum(axis=0, keepdims=True))[0])
        matrix = np.stack(centres) if centres else np.zeros((0, 1), dtype=np.float32)
        return _Visible(views=views, centroids=matrix, entities_of={c: tuple(n) for c, n in entities.items()})

    def _generation(self) -> int:
        with self._store.engine.connect() as conn:
            value = conn.execute(
                select(store_meta.c.value).where(store_meta.c.key == _GENERATION_KEY)
            ).scalar()
        return int(value or 0)


def _terms(text: str) -> list[str]:
    """Key-term candidates: folded words without stopwords, digits-only tokens and one-letter pieces."""
    return [t for t in tokens(text) if t not in STOPWORDS and len(t) > 2 and not t.isdigit()]


def _digest(texts: Sequence[str]) -> str:
    return hashlib.sha1("\n\x00".join(texts).encode()).hexdigest()


def _bump(conn: Connection) -> None:
    current = conn.execute(select(store_meta.c.value).where(store_meta.c.key == _GENERATION_KEY)).scalar()
    if current is None:
        conn.execute(insert(store_meta).values(key=_GENERATION_KEY, value="1"))
    else:
        conn.execute(
            update(store_meta).where(store_meta.c.key == _GENERATION_KEY).values(value=str(int(current) + 1))
        )
