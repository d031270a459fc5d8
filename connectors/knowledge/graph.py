"""The link/entity graph as each principal set sees it: built from the ACL-filtered tables *before* any
traversal, cached per (store generation, principal set), walked by neighbours and personalised PageRank.

Nodes are document ids, plus `entity:<name>` for names that link documents but have no document of their own.
An edge is kept only when the document it was read from (its origin) and both ends are visible; a by-name
edge resolves only through aliases whose origin is visible, so an alias learned from a restricted page
never connects anything for someone who cannot open that page.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from sqlalchemy import Connection, select

from connectors.knowledge.acl import visible_doc_ids
from connectors.knowledge.tables import aliases, documents, edges
from connectors.text import disambiguated_base, find_mentions, normalise

ENTITY_PREFIX = "entity:"
PPR_ALPHA = 0.2  # teleport probability: higher keeps the walk closer to the seeds
PPR_EPSILON = 1e-5
CACHE_SIZE = 16
MENTIONS_KEPT = 50_000  # texts whose mentions a graph remembers (a passage's text is read many times)


@dataclass(frozen=True)
class Neighbor:
    doc_id: str
    via: str  # edge type
    seed: str  # the seed node it was reached from
    outgoing: bool  # seed -> neighbour (True) or neighbour -> seed


@dataclass
class VisibleGraph:
    """Adjacency of what one principal set may see. Built once, read by many queries."""

    docs: set[str]
    titles: dict[str, str]
    names: dict[str, set[str]]  # normalised alias -> visible document ids
    display: dict[str, str] = field(default_factory=dict)  # normalised alias -> a name as written
    adjacency: dict[str, list[tuple[str, str, bool]]] = field(default_factory=lambda: defaultdict(list))
    _names_of: dict[str, list[str]] | None = field(default=None, repr=False, compare=False)
    _by_base: dict[str, list[str]] | None = field(default=None, repr=False, compare=False)
    _mentions: dict[tuple[str, bool], tuple[str, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def resolve(self, name: str) -> set[str]:
        if name in self.docs:
            return {name}
        return set(self.names.get(normalise(name), ()))

    def names_of(self, doc_id: str) -> list[str]:
        """Every name (title, alias) a visible document is known by, as written."""
        if self._names_of is None:  # built on first need, kept with the graph it reads
            found: dict[str, list[str]] = defaultdict(list)
            for alias, docs in self.names.items():
                for doc in docs:
                    found[doc].append(self.display.get(alias, alias))
            self._names_of = dict(found)
        return list(self._names_of.get(doc_id, ()))

    def mentions(self, text: str, *, require_capital: bool = True) -> tuple[str, ...]:
        """The visible names a text mentions (`find_mentions`), kept with the graph: every round of a question,
        and every question after it, reads the same passages again."""
        key = (text, require_capital)
        found = self._mentions.get(key)
        if found is None:
            if len(self._mentions) >= MENTIONS_KEPT:
                self._mentions.clear()
            found = self._mentions[key] = tuple(
                find_mentions(text, self.names, require_capital=require_capital)
            )
        return found

    def disambiguated(self, word: str) -> list[str]:
        """The titles that are one word with a disambiguator ("Brand" -> "Brand (play)"): that word alone is not
        a name mined from text (it would match every "brand"), but a question naming it means one of these."""
        if self._by_base is None:  # built on first need, kept with the graph it reads
            found: dict[str, list[str]] = defaultdict(list)
            for title in self.titles.values():
                base = disambiguated_base(title)
                if base and " " not in base.strip():
                    found[normalise(base)].append(title)
            self._by_base = dict(found)
        return sorted(set(self._by_base.get(normalise(word), ())))

    def seeds_to_nodes(self, seeds: Iterable[str]) -> list[str]:
        nodes: list[str] = []
        for seed in seeds:
            found = self.resolve(seed)
            if not found and seed.startswith(ENTITY_PREFIX) and seed in self.adjacency:
                found = {seed}
            for node in sorted(found):
                if node not in nodes:
                    nodes.append(node)
        return nodes

    def neighbors(self, seeds: Iterable[str], types: set[str] | None = None) -> list[Neighbor]:
        out: list[Neighbor] = []
        seen: set[tuple[str, str]] = set()
        for seed in self.seeds_to_nodes(seeds):
            for other, etype, outgoing in self.adjacency.get(seed, ()):
                if types and etype not in types:
                    continue
                hops = [other]
                if other.startswith(ENTITY_PREFIX):  # an entity joins the documents that share it
                    hops = [n for n, _, _ in self.adjacency.get(other, ()) if n != seed]
                for doc in hops:
                    if doc in self.docs and (seed, doc) not in seen and doc != seed:
                        seen.add((seed, doc))
                        out.append(Neighbor(doc_id=doc, via=etype, seed=seed, outgoing=outgoing))
        return out

    @cached_property
    def _walkable(self) -> tuple[dict[str, int], list[str], list[list[int]], list[float]]:
        """The adjacency as integers for the walk, built once per graph: node -> index, index -> node, each
        node's neighbour indices (one per edge, as `adjacency` lists them) and the residual it needs before
        it pushes (PPR_EPSILON x degree, at least one). Lists indexed by integers, not dictionaries keyed by
        ids, are what keeps a walk of tens of thousands of pushes cheap."""
        names = list(self.adjacency)
        index = {node: i for i, node in enumerate(names)}
        links = [[index[other] for other, _, _ in self.adjacency[node]] for node in names]
        thresholds = [PPR_EPSILON * max(len(out), 1) for out in links]
        return index, names, links, thresholds

    def personalised_pagerank(self, seeds: Iterable[str], k: int) -> list[tuple[str, float]]:
        """Approximate PPR by local push (Andersen, Chung, Lang 2006): cost grows with the explored area,
        not with the graph, so it stays fast on large corpora."""
        start = self.seeds_to_nodes(seeds)
        if not start:
            return []
        index, names, adjacency, threshold = self._walkable
        rank: dict[str, float] = defaultdict(float)
        for node in start:
            if node not in index:  # a seed without edges keeps its share
                rank[node] += 1.0 / len(start)
        residual: dict[int, float] = {index[s]: 1.0 / len(start) for s in start if s in index}
        scores: dict[int, float] = defaultdict(float)
        queue = [index[s] for s in start if s in index]
        pushes = 0
        while queue and pushes < 50_000:
            node = queue.pop()
            r = residual.get(node, 0.0)
            links = adjacency[node]
            if not links:
                scores[node] += r
                residual[node] = 0.0
                continue
            if r < threshold[node]:
                continue
            pushes += 1
            scores[node] += PPR_ALPHA * r
            share = (1 - PPR_ALPHA) * r / len(links)
            residual[node] = 0.0
            for other in links:
                before = residual.get(other, 0.0)
                after = residual[other] = before + share
                if before < threshold[other] <= after:
                    queue.append(other)
        for i, score in scores.items():
            rank[names[i]] += score
        scored = [(n, s) for n, s in rank.items() if n in self.docs]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]


def build_visible_graph(conn: Connection, principals: frozenset[str]) -> VisibleGraph:
    visible = visible_doc_ids(principals)
    doc_rows = conn.execute(
        select(documents.c.id, documents.c.title).where(documents.c.id.in_(visible))
    ).all()
    docs = {r.id for r in doc_rows}
    titles = {r.id: r.title for r in doc_rows}
    names: dict[str, set[str]] = defaultdict(set)
    display: dict[str, str] = {}
    for row in conn.execute(
        select(aliases.c.norm, aliases.c.name, aliases.c.target).where(
            aliases.c.origin.in_(visible_doc_ids(principals))
        )
    ):
        if row.target in docs:
            names[row.norm].add(row.target)
            display.setdefault(row.norm, row.name)
    graph = VisibleGraph(docs=docs, titles=titles, names=dict(names), display=display)
    rows = conn.execute(
        select(edges.c.src, edges.c.target, edges.c.by_name, edges.c.type).where(
            edges.c.origin.in_(visible_doc_ids(principals))
        )
    )
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        if row.src not in docs:
            continue
        if row.by_name:
            targets = graph.names.get(row.target) or {ENTITY_PREFIX + row.target}
        else:
            targets = {row.target} if row.target in docs else set()
        for target in targets:
            if target == row.src or (row.src, target, row.type) in seen:
                continue
            seen.add((row.src, target, row.type))
            graph.adjacency[row.src].append((target, row.type, True))
            graph.adjacency[target].append((row.src, row.type, False))
    # Entity nodes that join fewer than two documents carry no information.
    for node in [n for n in graph.adjacency if n.startswith(ENTITY_PREFIX)]:
        if len(graph.adjacency[node]) < 2:
            for other, _, _ in graph.adjacency.pop(node):
                graph.adjacency[other] = [e for e in graph.adjacency[other] if e[0] != node]
    return graph


class GraphCache:
    """Visible graphs keyed by (store generation, principal set): a cache that can never serve one user's
    graph to another, and is dropped as soon as the store changes."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[tuple[int, frozenset[str]], VisibleGraph] = OrderedDict()
        self._lock = threading.Lock()

    def cached(self, generation: int, principals: frozenset[str]) -> VisibleGraph | None:
        """The graph if it is built already (no database connection needed to ask)."""
        with self._lock:
            graph = self._items.get((generation, principals))
            if graph is not None:
                self._items.move_to_end((generation, principals))
            return graph

    def get(self, conn: Connection, generation: int, principals: frozenset[str]) -> VisibleGraph:
        key = (generation, principals)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        graph = build_visible_graph(conn, principals)
        with self._lock:
            self._items[key] = graph
            for stale in [k for k in self._items if k[0] != generation]:
                del self._items[stale]
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return graph
