"""Themes: built at sync from the chunks, kept current by lineage, shown only from what the asker may see."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sqlalchemy import select, update

from connectors.knowledge.clustering import class_tfidf, spherical_kmeans, theme_count
from connectors.knowledge.store import KnowledgeStore
from connectors.knowledge.tables import theme_members, themes
from connectors.knowledge.themes import _digest
from connectors.sync import sync_source
from tests.conftest import folder

PUBLIC = frozenset({"public"})
SECURITY = frozenset({"public", "group:acme:security"})
PENTEST = "acme:wiki/security/pentest-report-2026"


def _members(store: KnowledgeStore) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {r.chunk_id: r.theme_id for r in conn.execute(select(theme_members))}


def _centroids(store: KnowledgeStore) -> dict[int, bytes]:
    with store.engine.connect() as conn:
        return {r.id: r.centroid for r in conn.execute(select(themes))}


def test_theme_count_grows_with_the_corpus() -> None:
    assert theme_count(1) == 1
    assert theme_count(100) == 7
    assert theme_count(6119) == 55
    assert theme_count(10**7) == 400


def test_kmeans_separates_two_directions_and_is_deterministic() -> None:
    rng = np.random.default_rng(1)
    a = np.array([1.0, 0, 0]) + 0.05 * rng.standard_normal((20, 3))
    b = np.array([0, 1.0, 0]) + 0.05 * rng.standard_normal((20, 3))
    labels, centres = spherical_kmeans(np.vstack([a, b]), 2)
    assert len(set(labels[:20])) == 1 and len(set(labels[20:])) == 1 and labels[0] != labels[20]
    again, _ = spherical_kmeans(np.vstack([a, b]), 2)
    assert list(labels) == list(again) and centres.shape == (2, 3)


def test_class_tfidf_prefers_terms_that_set_a_group_apart() -> None:
    groups = {
        1: [["motor", "bearing", "noise", "robot"], ["motor", "bearing", "robot"]],
        2: [["crash", "android", "robot"], ["crash", "android", "map", "robot"]],
    }
    terms = class_tfidf(groups, top=2)
    assert set(terms[1]) == {"motor", "bearing"} and set(terms[2]) == {"crash", "android"}


def test_sync_builds_themes_and_unchanged_resync_recomputes_nothing(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    sync_source(store, connector)
    members = _members(store)
    assert len(set(members.values())) >= 5 and len(members) == store.stats()["chunks"]

    again = store.themes.refresh()
    assert again.touched == () and not again.full and again.assigned == 0
    sync_source(store, connector)
    assert _members(store) == members


def test_one_changed_document_touches_only_its_themes(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    sync_source(store, connector)
    before_members, before_centroids = _members(store), _centroids(store)

    page = acme_copy / "wiki/ops/kestrel-motion-systems.md"
    page.write_text(page.read_text() + "\n\nNew: Kestrel opened a second plant in Brno.\n")
    sync_source(store, connector)
    after_members, after_centroids = _members(store), _centroids(store)
    result = store.themes.refresh()
    assert result.touched == ()  # the sync already placed it
    moved = {t for t, c in after_centroids.items() if before_centroids.get(t) != c}
    kestrel = {t for c, t in {**before_members, **after_members}.items() if "kestrel-motion-systems" in c}
    assert moved and moved <= kestrel
    assert len(moved) < len(after_centroids) / 2
    others = {c: t for c, t in before_members.items() if "kestrel-motion-systems" not in c}
    assert all(after_members[c] == t for c, t in others.items())


def test_deleted_document_leaves_its_themes(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    sync_source(store, connector)
    (acme_copy / "wiki/ops/kestrel-motion-systems.md").unlink()
    sync_source(store, connector)
    assert not any("kestrel-motion-systems" in c for c in _members(store))
    shown = " ".join(d for v in store.themes.views(PUBLIC) for d in v.docs)
    assert "kestrel-motion-systems" not in shown


def test_theme_views_come_only_from_visible_chunks(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    sync_source(store, folder(acme_copy))
    public_views = store.themes.views(PUBLIC)
    security_views = store.themes.views(SECURITY)
    assert any(PENTEST in v.docs for v in security_views)
    assert not any(PENTEST in v.docs for v in public_views)
    hidden = {c for c, _ in [(h.chunk_id, h) for h in store.chunks_of(PENTEST, SECURITY)]}
    assert hidden and not any(hidden & set(v.chunk_ids) for v in public_views)
    assert sum(v.size for v in public_views) < sum(v.size for v in security_views)
    for view in public_views:
        visible_text = " ".join(h.text.lower() for c in view.chunk_ids if (h := store.read(c, PUBLIC)))
        assert all(t in visible_text for t in view.terms)  # every key term comes from a chunk they may read


def test_a_theme_whose_chunks_are_all_hidden_is_absent_not_an_id(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    sync_source(store, folder(acme_copy))
    hidden = [h.chunk_id for h in store.chunks_of(PENTEST, SECURITY)]
    with store.engine.begin() as conn:  # the pentest report's chunks become a theme of their own
        theme = next(iter(_centroids(store).values()))
        new = conn.execute(themes.insert().values(centroid=theme, dirty=False, summary="", summary_sources="[]",
                                                  summary_hash="")).inserted_primary_key[0]  # fmt: skip
        conn.execute(update(theme_members).where(theme_members.c.chunk_id.in_(hidden)).values(theme_id=new))
    store.themes._cache.clear()
    assert [v.id for v in store.themes.views(SECURITY) if set(v.chunk_ids) == set(hidden)] == [new]
    public = store.themes.views(PUBLIC)
    assert new not in {v.id for v in public} and public  # absent for who may read none of it...
    assert not any("theme " in v.label for v in public)  # ...and no label names a store id


def test_summary_is_shown_only_while_all_its_sources_are_visible_and_unchanged(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    sync_source(store, connector)
    assert store.themes.name_themes(lambda terms, texts: ("Label", "a summary")) > 0
    assert any(v.summary for v in store.themes.views(PUBLIC))
    # One theme's summary written from a restricted chunk and a public one: only who sees both may read it.
    hidden = store.chunks_of(PENTEST, SECURITY)[0]
    public = next(h for h in store.chunks_of("acme:wiki/security/password-and-mfa-policy", PUBLIC))
    theme_id = _members(store)[public.chunk_id]
    with store.engine.begin() as conn:
        conn.execute(
            update(themes)
            .where(themes.c.id == theme_id)
            .values(
                summary="Label: restricted summary",
                summary_sources=json.dumps([hidden.chunk_id, public.chunk_id]),
                summary_hash=_digest([hidden.text, public.text]),
            )
        )
    with store.engine.begin() as conn:
        store._bump(conn)  # the view cache keys on the store's generation
    assert (
        next(v for v in store.themes.views(SECURITY) if v.id == theme_id).summary
        == "Label: restricted summary"
    )
    assert next(v for v in store.themes.views(PUBLIC) if v.id == theme_id).summary is None


def test_a_summary_goes_stale_when_a_source_changes(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    connector = folder(acme_copy)
    sync_source(store, connector)
    store.themes.name_themes(lambda terms, texts: ("Label", "a summary"))
    with store.engine.connect() as conn:
        sources = {r.id: json.loads(r.summary_sources) for r in conn.execute(select(themes))}
    theme_id, chunk_ids = next(
        (t, cs) for t, cs in sources.items() if any("#" in c and "wiki/" in c for c in cs)
    )
    source = next(c for c in chunk_ids if "wiki/" in c)
    doc = source.split("#")[0]
    path = acme_copy / (doc.split(":", 1)[1] + ".md")
    hit = store.read(source, frozenset({"public", "group:acme:security", "group:acme:finance"}))
    assert hit is not None
    line = next(x for x in hit.text.splitlines() if len(x) > 20 and x in path.read_text())
    path.write_text(path.read_text().replace(line, line + " (edited)"))
    sync_source(store, connector)
    views = {
        v.id: v
        for v in store.themes.views(
            frozenset(
                {
                    "public",
                    "group:acme:security",
                    "group:acme:finance",
                    "group:acme:hr",
                    "group:acme:leadership",
                    "user:dana@acme.io",
                }
            )
        )
    }
    assert theme_id not in views or views[theme_id].summary is None
    untouched = [
        t for t, cs in sources.items() if not any(c.startswith(doc + "#") for c in cs) and t in views
    ]
    assert untouched and all(views[t].summary for t in untouched)


def test_entity_hyperedges_join_the_names_a_chunk_mentions(
    make_store: Callable[..., KnowledgeStore], acme_copy: Path
) -> None:
    store = make_store()
    sync_source(store, folder(acme_copy))
    chunk_ids = [h.chunk_id for h in store.chunks_of("acme:SUP-117", PUBLIC)]
    edges = store.themes.entities_of(chunk_ids, PUBLIC)
    names = {n for ns in edges.values() for n in ns}
    assert "OPS-40" in names
    assert any("OPS-40" in ns and len(ns) >= 2 for ns in edges.values()) or store.themes.co_occurring(
        "OPS-40", PUBLIC
    )
