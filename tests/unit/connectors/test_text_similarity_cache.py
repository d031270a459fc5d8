"""Sentence vectors are cached between calls with a bound: a call holding more new sentences than the bound
still scores every one of them (the cache once evicted a call's own vectors before reading them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder


def test_a_call_larger_than_the_cache_scores_every_text(tmp_path: Path) -> None:
    vectors = ChunkVectors(HashEmbedder(), path=tmp_path / "chroma")
    vectors.text_cache_size = 3
    texts = [f"The Quillon pump holds {n} seals." for n in range(8)]
    scores = vectors.text_similarity("How many seals does the Quillon pump hold?", [*texts, texts[0]])
    fresh = ChunkVectors(HashEmbedder(), path=tmp_path / "other")
    expected = fresh.text_similarity("How many seals does the Quillon pump hold?", texts)
    assert np.allclose(scores[:-1], expected) and scores[-1] == scores[0]
    assert len(vectors._text_cache) <= 3
