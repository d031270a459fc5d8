"""What every embedder is: the `Embedder` protocol, its error, and row normalisation. The runners
(minilm.py, embedder.py) build on this module, so neither needs the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


class EmbedderError(RuntimeError):
    """An embedder cannot load its model or its endpoint answered with something unusable."""


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit vectors; `name` identifies the vector space in index cache keys."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array whose rows are L2-normalised."""
        ...


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows in float32; an all-zero row stays zero instead of turning into NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.float32(1e-12))
