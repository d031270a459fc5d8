from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from evals.modes import CITED_TOP_K, HOP_PER_SEED, ModeRunner


@dataclass(frozen=True)
class _Hit:
    doc_id: str


@dataclass(frozen=True)
class _Neighbor:
    doc_id: str
    via: str
    seed: str
    outgoing: bool


class _Store:
    """Records calls; answers searches with fixed chunk hits and the graph with fixed mention edges."""

    def __init__(self, hits: list[str], mentions: dict[str, list[str]]) -> None:
        self.hits = hits
        self.mentions = mentions
        self.calls: list[tuple[str, Any]] = []

    def search_text(
        self, query: str, principals: frozenset[str], k: int = 10, *, mode: str = "hybrid"
    ) -> list[_Hit]:
        self.calls.append(("search", (mode, principals)))
        return [_Hit(d) for d in self.hits][:k]

    def neighbors(
        self, seeds: Iterable[str], principals: frozenset[str], types: set[str] | None = None
    ) -> list[_Neighbor]:
        (seed,) = list(seeds)
        self.calls.append(("neighbors", (seed, types)))
        out = [_Neighbor(d, "mentions", seed, True) for d in self.mentions.get(seed, [])]
        return [*out, _Neighbor("incoming", "mentions", seed, False)]  # docs that mention the seed: not a hop


PRINCIPALS = frozenset({"public"})


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_single_shot_ranks_distinct_passages_and_cites_the_top(mode: str) -> None:
    store = _Store(["a", "a", "b", "c", "d", "e", "f", "g"], {})
    out = ModeRunner(store).run(mode, "q", principals=PRINCIPALS, thread="t")  # type: ignore[arg-type]
    assert out.ranked == ["a", "b", "c", "d", "e", "f", "g"]
    assert out.cited == out.ranked[:CITED_TOP_K]
    assert out.rounds == 1
    assert store.calls == [("search", (mode, PRINCIPALS))]


def test_naive_hop_puts_mentioned_passages_behind_their_seed() -> None:
    store = _Store(["s1", "s2", "x"], {"s1": ["m1", "m2", "m3"], "s2": ["s1", "m4"]})
    out = ModeRunner(store).run("naive-hop", "q", principals=PRINCIPALS, thread="t")  # type: ignore[arg-type]
    assert out.ranked == ["s1", "m1", "m2", "s2", "m4", "x"]
    assert "incoming" not in out.ranked  # only outgoing mention edges are followed
    assert HOP_PER_SEED == 2
    assert ("neighbors", ("s1", {"mentions"})) in store.calls


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        ModeRunner(_Store([], {})).run("colbert", "q", principals=PRINCIPALS, thread="t")  # type: ignore[arg-type]
