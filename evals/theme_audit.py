"""Theme probes for `sleuth audit permissions`: a theme is derived content, so what it shows (label, key terms,
entities, summary, member chunks and documents) must carry nothing of a document the asker may not open, whether
listed, matched against the document's own title, read as entity hyperedges, or reached by a broad question."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Protocol


class _Doc(Protocol):
    id: str
    title: str
    chunk_ids: tuple[str, ...]


def theme_probes(
    store: Any,
    investigator: Any,
    user: str,
    principals: frozenset[str],
    doc: _Doc,
    leaks: Callable[..., bool],
) -> Iterator[tuple[str, bool]]:
    """(path, leaked) per probe; `leaks(value, asked)` says whether a value betrays the document (its id, title
    or sentences, minus what the asker typed)."""
    themes = getattr(store, "themes", None)
    if themes is None:
        return
    views = themes.views(principals)
    yield "themes:list", _holds(views, doc) or leaks(_shown(views))
    matched = [view for view, _ in themes.themes_for(doc.title, principals, 8)]
    yield "themes:match", _holds(matched, doc) or leaks(_shown(matched))
    yield "themes:entities", bool(themes.entities_of(doc.chunk_ids, principals))
    question = f"summarise the open issues and problems around {doc.title}"
    out = investigator.ask(f"audit-themes:{user}:{doc.id}", question, asker=user, principals=principals)
    yield (
        "themes:flow",
        any(e["doc_id"] == doc.id for e in out.get("evidence") or [])
        or leaks({"answer": out.get("answer"), "trace": out.get("trace")}, question),
    )


def _holds(views: list[Any], doc: _Doc) -> bool:
    return any(doc.id in v.docs or set(doc.chunk_ids) & set(v.chunk_ids) for v in views)


def _shown(views: list[Any]) -> str:
    return json.dumps(
        [{"label": v.label, "terms": v.terms, "entities": v.entities, "summary": v.summary} for v in views],
        ensure_ascii=False,
    )
