"""What the flow needs from the knowledge store, as a narrow protocol, and the asker-bound lexicon.

Nodes never call a connector; they read the store through this interface, always with the asker's principals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol

from connectors.knowledge.graph import Neighbor, VisibleGraph
from connectors.knowledge.results import Hit
from connectors.text import normalise


class KnowledgeReader(Protocol):
    """The store's read side as the flow uses it (connectors.knowledge.store.KnowledgeStore); every result is a
    typed record, so a node reads fields, not guesses (tests/unit/graph_flows/test_knowledge.py keeps it so)."""

    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[Hit]: ...

    def similarity(
        self, query: str, chunk_ids: Sequence[str], principals: frozenset[str]
    ) -> dict[str, float]: ...

    def text_similarity(self, query: str, texts: Sequence[str]) -> list[float]: ...

    def chunks_of(self, doc_id: str, principals: frozenset[str]) -> list[Hit]: ...

    def read(self, chunk_id: str, principals: frozenset[str]) -> Hit | None: ...

    def neighbors(
        self, seeds: Iterable[str], principals: frozenset[str], types: set[str] | None = None
    ) -> list[Neighbor]: ...

    def expand(
        self, seeds: Iterable[str], principals: frozenset[str], k: int = 10
    ) -> list[tuple[str, float]]: ...

    def resolve(self, names: Iterable[str], principals: frozenset[str]) -> dict[str, list[str]]: ...

    def graph(self, principals: frozenset[str]) -> VisibleGraph: ...

    def term_frequencies(
        self, stems: Iterable[str], principals: frozenset[str]
    ) -> tuple[int, dict[str, int]]: ...


class StoreLexicon:
    """Names and term weights as one asker sees them: only visible documents contribute."""

    def __init__(self, knowledge: KnowledgeReader, principals: frozenset[str]) -> None:
        self._knowledge = knowledge
        self._principals = principals
        self._graph = knowledge.graph(principals)
        self._idf: dict[str, float] = {}
        self._resolved: dict[str, list[str]] = {}  # one question's step resolves the same names many times

    def names_in(self, text: str, *, strict: bool = True) -> list[str]:
        found = list(self._graph.mentions(text, require_capital=strict))
        if text == text.lower():
            # Typed all in lower case ("ios crash triage"): names of two or more words are still names. Where
            # the writer capitalises, a lower-case phrase ("place of birth") is not a name.
            found += [
                n for n in self._graph.mentions(text, require_capital=False) if n not in found and " " in n
            ]
        return [self._graph.display.get(n, n) for n in found]

    def resolve(self, name: str) -> list[str]:
        if name not in self._resolved:
            self._resolved[name] = sorted(self._knowledge.resolve([name], self._principals).get(name, []))
        return list(self._resolved[name])

    def aliases(self, name: str) -> list[str]:
        key = normalise(name)
        return sorted(
            {n for doc in self.resolve(name) for n in self._graph.names_of(doc) if normalise(n) != key}
        )

    def idf(self, term: str) -> float:
        if term not in self._idf:
            self.prefetch([term])
        return self._idf[term]

    def prefetch(self, stems: Iterable[str]) -> None:
        wanted = [s for s in dict.fromkeys(stems) if s not in self._idf]
        if not wanted:
            return
        total, freq = self._knowledge.term_frequencies(wanted, self._principals)
        for s in wanted:
            df = freq.get(s, 0)
            self._idf[s] = math.log(1.0 + (total - df + 0.5) / (df + 0.5))

    def similarity(self, query: str, texts: list[str]) -> list[float]:
        """Dense similarity of the query to texts already read (sentences of visible evidence)."""
        return self._knowledge.text_similarity(query, texts)
