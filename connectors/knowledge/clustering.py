"""The two pure computations behind themes: grouping chunk vectors (spherical k-means) and naming each group by
the terms that set it apart from the others (class-based TF-IDF, as BERTopic does).

Pure numpy and plain Python so themes build offline with what the store already has: no model, no download.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

KMEANS_ITERATIONS = 25
MIN_THEMES = 2
MAX_THEMES = 400


def theme_count(n_chunks: int) -> int:
    """How many themes a corpus of n chunks gets: sqrt(n / 2) (a common rule of thumb for k), so a hundred
    chunks give 7 themes and six thousand give 55, clipped to [MIN_THEMES, MAX_THEMES] and never above n."""
    if n_chunks <= MIN_THEMES:
        return max(1, n_chunks)
    return int(min(n_chunks, MAX_THEMES, max(MIN_THEMES, round(math.sqrt(n_chunks / 2)))))


def normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def spherical_kmeans(vectors: np.ndarray, k: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Clusters unit vectors by cosine similarity: (labels per row, unit centroids per cluster).

    k-means++ seeding with a fixed seed, so the same corpus always gives the same themes; empty clusters are
    dropped (labels are renumbered densely)."""
    x = normalised(np.asarray(vectors, dtype=np.float32))
    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, x.shape[1] if x.ndim == 2 else 0), dtype=np.float32)
    k = max(1, min(k, n))
    rng = np.random.default_rng(seed)
    centroids = np.empty((k, x.shape[1]), dtype=np.float32)
    centroids[0] = x[rng.integers(n)]
    closest = 1.0 - x @ centroids[0]
    for i in range(1, k):
        weights = np.clip(closest, 0, None) ** 2
        total = float(weights.sum())
        pick = int(rng.choice(n, p=weights / total)) if total > 0 else int(rng.integers(n))
        centroids[i] = x[pick]
        closest = np.minimum(closest, 1.0 - x @ centroids[i])
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(KMEANS_ITERATIONS):
        new = np.argmax(x @ centroids.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            members = x[labels == c]
            if len(members):
                centroids[c] = normalised(members.sum(axis=0, keepdims=True))[0]
    used = np.unique(labels)
    renumber = {int(old): new for new, old in enumerate(used)}
    return np.array([renumber[int(v)] for v in labels], dtype=np.int64), centroids[used]


def class_tfidf(groups: Mapping[int, Sequence[Sequence[str]]], top: int = 8) -> dict[int, list[str]]:
    """Key terms per group: c-TF-IDF (Grootendorst 2022), tf(t, c) * log(1 + A / f(t)), where tf is the term's
    share of the group's words, f(t) its count over all groups and A the mean word count of a group. Terms that
    occur in only one chunk of a group are left out when the group has several (a name said once is no theme)."""
    counts: dict[int, Counter[str]] = {}
    spread: dict[int, Counter[str]] = {}
    for gid, docs in groups.items():
        counts[gid] = Counter(t for doc in docs for t in doc)
        spread[gid] = Counter(t for doc in docs for t in set(doc))
    if not counts:
        return {}
    overall: Counter[str] = Counter()
    for c in counts.values():
        overall.update(c)
    mean_words = sum(overall.values()) / len(counts)
    out: dict[int, list[str]] = {}
    for gid, c in counts.items():
        words = sum(c.values()) or 1
        several = len(groups[gid]) > 1
        scored = [
            (n / words * math.log(1 + mean_words / overall[t]), t)
            for t, n in c.items()
            if not several or spread[gid][t] > 1
        ]
        scored.sort(key=lambda s: (-s[0], s[1]))
        out[gid] = [t for _, t in scored[:top]]
    return out
