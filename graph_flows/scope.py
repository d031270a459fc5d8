"""Which sources one turn may read: a channel's `sources` setting, applied on top of the asker's permissions.

A scope is a list of entries, each a source name (`acme`) or a part of one (`acme/wiki/hr` a folder's path,
`jira/ENG` a project, `wiki/OPS` a Confluence space). `ScopedKnowledge` wraps the store's read side and drops
every record of a document outside the turn's scope; it only ever removes what the asker's principals already
returned, so a scope narrows what a turn may use and can never widen it (no read skips the principals).

The scope travels in a context variable, like the live access check: the flow is compiled once, and LangGraph
runs the nodes in copies of the caller's context. No scope (None) reads everything the asker may see.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from connectors.knowledge.graph import ENTITY_PREFIX, Neighbor, VisibleGraph
from connectors.knowledge.results import DocumentInfo, Hit, ThemeView
from graph_flows.broad import ThemeReader
from graph_flows.knowledge import KnowledgeReader

OVERFETCH = (4, 16)  # a scoped search asks for k times these until k in-scope hits are found
MAX_FETCH = 400
_TICKET_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)-\d+$")


@runtime_checkable
class DocumentReader(Protocol):
    """A document's metadata (a Confluence page's space) as one asker may see it."""

    def document(self, doc_id: str, principals: frozenset[str]) -> DocumentInfo | None: ...


@dataclass(frozen=True)
class Scope:
    """Parsed entries: source -> its parts (empty: the whole source)."""

    parts: dict[str, frozenset[str]]
    _seen: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def parse(cls, entries: Iterable[str]) -> Scope:
        parts: dict[str, set[str]] = {}
        whole: set[str] = set()
        for entry in entries:
            source, _, part = entry.strip().strip("/").partition("/")
            if not source:
                continue
            if part:
                parts.setdefault(source, set()).add(part.strip("/"))
            else:
                whole.add(source)
        result = {s: frozenset(p) for s, p in parts.items() if s not in whole}
        result.update({s: frozenset() for s in whole})
        return cls(result)

    def allows(self, doc_id: str, metadata: Callable[[], dict[str, Any]] | None = None) -> bool:
        """Whether a document (by id, and its metadata when its id does not say) is in scope."""
        if doc_id.startswith(ENTITY_PREFIX):
            return True  # an entity node only joins documents, which are checked themselves
        cached = self._seen.get(doc_id)
        if cached is not None:
            return cached
        source, _, native = doc_id.partition(":")
        wanted = self.parts.get(source)
        if wanted is None:
            allowed = False
        elif not wanted or _names_part(native, wanted):
            allowed = True
        else:
            meta = metadata() if metadata is not None else {}
            allowed = any(str(meta.get(key) or "") in wanted for key in ("space", "project"))
        self._seen[doc_id] = allowed
        return allowed


def _names_part(native: str, wanted: frozenset[str]) -> bool:
    """A folder path under a wanted folder, or a ticket key of a wanted project."""
    key = _TICKET_KEY.match(native)
    if key and key.group(1) in wanted:
        return True
    return any(native == part or native.startswith(part + "/") for part in wanted)


_SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("sleuth_source_scope", default=None)


@contextmanager
def source_scope(entries: Sequence[str] | None) -> Iterator[None]:
    """The sources this turn may read; None or empty: every source."""
    token = _SCOPE.set(Scope.parse(entries) if entries else None)
    try:
        yield
    finally:
        _SCOPE.reset(token)


class ScopedKnowledge:
    """The store's read side with the turn's scope applied to every record it returns."""

    def __init__(self, inner: KnowledgeReader) -> None:
        self._inner = inner
        self._documents = inner if isinstance(inner, DocumentReader) else None

    def scoped_themes(self, themes: ThemeReader) -> ScopedThemes:
        return ScopedThemes(themes, self)

    def in_scope(self, doc_id: str, principals: frozenset[str]) -> bool:
        scope = _SCOPE.get()
        if scope is None:
            return True
        documents = self._documents

        def metadata() -> dict[str, Any]:
            info = documents.document(doc_id, principals) if documents is not None else None
            return info.metadata if info is not None else {}

        return scope.allows(doc_id, metadata)

    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[Hit]:
        if _SCOPE.get() is None:
            return self._inner.search_text(query, principals, k, mode=mode)
        kept: list[Hit] = []
        for factor in OVERFETCH:
            fetch = min(MAX_FETCH, k * factor)
            hits = self._inner.search_text(query, principals, fetch, mode=mode)
            kept = [h for h in hits if self.in_scope(h.doc_id, principals)]
            if len(kept) >= k or len(hits) < fetch or fetch == MAX_FETCH:
                break
        return kept[:k]

    def similarity(
        self, query: str, chunk_ids: Sequence[str], principals: frozenset[str]
    ) -> dict[str, float]:
        return self._inner.similarity(query, chunk_ids, principals)

    def text_similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        return self._inner.text_similarity(query, texts)

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[Hit]:
        return self._inner.chunks_of(doc_id, principals) if self.in_scope(doc_id, principals) else []

    def read(self, chunk_id: str, principals: frozenset[str]) -> Hit | None:
        hit = self._inner.read(chunk_id, principals)
        return hit if hit is not None and self.in_scope(hit.doc_id, principals) else None

    def neighbors(
        self, seeds: Iterable[str], principals: frozenset[str], types: set[str] | None = None
    ) -> list[Neighbor]:
        found = self._inner.neighbors(seeds, principals, types)
        return [n for n in found if self.in_scope(n.doc_id, principals)]

    def expand(
        self, seeds: Iterable[str], principals: frozenset[str], k: int = 10
    ) -> list[tuple[str, float]]:
        found = self._inner.expand(seeds, principals, k)
        return [(doc, score) for doc, score in found if self.in_scope(doc, principals)]

    def resolve(self, names: Iterable[str], principals: frozenset[str]) -> dict[str, list[str]]:
        found = self._inner.resolve(names, principals)
        return {name: [d for d in docs if self.in_scope(d, principals)] for name, docs in found.items()}

    def graph(self, principals: frozenset[str]) -> VisibleGraph:
        full = self._inner.graph(principals)
        if _SCOPE.get() is None:
            return full
        return _scoped_graph(full, lambda doc: self.in_scope(doc, principals))

    def term_frequencies(
        self, stems: Iterable[str], principals: frozenset[str]
    ) -> tuple[int, dict[str, int]]:
        return self._inner.term_frequencies(stems, principals)


def _scoped_graph(full: VisibleGraph, keep: Callable[[str], bool]) -> VisibleGraph:
    """The part of a visible graph inside the scope: its documents, their names and the edges between them."""
    docs = {d for d in full.docs if keep(d)}
    names = {alias: kept for alias, ids in full.names.items() if (kept := {d for d in ids if d in docs})}
    adjacency: dict[str, list[tuple[str, str, bool]]] = {}
    for node, edges in full.adjacency.items():
        if node in docs or node.startswith(ENTITY_PREFIX):
            kept_edges = [e for e in edges if e[0] in docs or e[0].startswith(ENTITY_PREFIX)]
            if kept_edges:
                adjacency[node] = kept_edges
    return VisibleGraph(
        docs=docs,
        titles={d: t for d, t in full.titles.items() if d in docs},
        names=names,
        display={alias: shown for alias, shown in full.display.items() if alias in names},
        adjacency=adjacency,
    )


class ScopedThemes:
    """The theme layer with each theme cut to its in-scope documents (a theme left empty is dropped)."""

    def __init__(self, inner: ThemeReader, knowledge: ScopedKnowledge) -> None:
        self._inner, self._knowledge = inner, knowledge

    def themes_for(self, query: str, principals: frozenset[str], k: int = 5) -> list[tuple[ThemeView, float]]:
        found = self._inner.themes_for(query, principals, k)
        cut = [(self._cut(view, principals), score) for view, score in found]
        return [(view, score) for view, score in cut if view is not None]

    def views(self, principals: frozenset[str]) -> list[ThemeView]:
        return [v for v in (self._cut(view, principals) for view in self._inner.views(principals)) if v]

    def entities_of(self, chunk_ids: Iterable[str], principals: frozenset[str]) -> dict[str, tuple[str, ...]]:
        return self._inner.entities_of(chunk_ids, principals)

    def _cut(self, view: ThemeView, principals: frozenset[str]) -> ThemeView | None:
        if _SCOPE.get() is None:
            return view
        docs = tuple(d for d in view.docs if self._knowledge.in_scope(d, principals))
        if not docs:
            return None
        chunks = tuple(c for c in view.chunk_ids if _chunk_doc(c) in docs)
        summary = view.summary if len(docs) == len(view.docs) else None
        return ThemeView(
            id=view.id, label=view.label, terms=view.terms, size=len(chunks), docs=docs,
            chunk_ids=chunks, entities=view.entities, summary=summary,
        )  # fmt: skip


def _chunk_doc(chunk_id: str) -> str:
    """A chunk id is "{doc id}#{n}"."""
    return chunk_id.rsplit("#", 1)[0]
