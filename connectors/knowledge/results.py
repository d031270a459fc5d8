"""What the store's reads return: plain records, importable without the store's machinery (Chroma, numpy), so the
flow's `KnowledgeReader` protocol can name them without loading the store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DocumentFields:
    """What a hit and a document's info both say about the document: what a citation shows."""

    title: str
    url: str
    source: str
    kind: str
    updated_at: str  # ISO 8601
    version: str


# A record of plain fields (like bot.jobs.Job); graph_flows.state.Evidence is its JSON copy in graph state.
@dataclass(frozen=True)
class Hit(DocumentFields):
    """A chunk as the flows see it, with everything needed to cite it."""

    chunk_id: str
    doc_id: str
    text: str
    score: float = 0.0
    lexical_rank: int | None = None
    dense_similarity: float | None = None


@dataclass(frozen=True)
class DocumentInfo(DocumentFields):
    id: str
    metadata: dict[str, Any]


@dataclass(frozen=True)
class ThemeView:
    """A theme as one asker sees it: everything here comes from chunks that asker may open."""

    id: int
    label: str
    terms: tuple[str, ...]
    size: int  # visible chunks
    docs: tuple[str, ...]  # visible documents, most chunks first
    chunk_ids: tuple[str, ...]
    entities: tuple[str, ...]  # names its chunks mention, most chunks first (display form)
    summary: str | None = None  # a model's summary, only when every chunk it was written from is visible
