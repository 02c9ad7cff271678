"""Coverage as nearest-neighbour novelty of feature vectors (exact while small, then a usearch HNSW index)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from usearch.index import Index

# Feature entries beyond this are clipped: squared distances must stay finite in float64.
FEATURE_CLIP = 1e15


def clean_features(vec: np.ndarray) -> np.ndarray:
    """A finite float64 copy: NaN → 0, ±Inf and huge values → ±FEATURE_CLIP."""
    arr = np.asarray(vec, dtype=np.float64).reshape(-1)
    if arr.size and np.abs(arr).max() <= FEATURE_CLIP:  # the common vector: already clean (NaN compares false)
        return arr.copy()
    return np.clip(np.nan_to_num(arr, nan=0.0, posinf=FEATURE_CLIP, neginf=-FEATURE_CLIP),
                   -FEATURE_CLIP, FEATURE_CLIP)


# Note [Exact search first]
# A measured input pays one nearest-neighbour query (Note [Sampled coverage] in fuzz_core/cgf/selector.py), and a
# campaign's index holds tens to hundreds of vectors of 7 entries a tensor. At that size a usearch query costs
# about 15 microseconds of call overhead (26 with its wrapper) and returns a float32 distance, where a numpy scan of
# the stored rows costs a few and is exact. So the first EXACT_MAX vectors are kept in a numpy buffer and searched
# exactly; the HNSW index is built from them when the buffer fills, and takes every vector after.
EXACT_MAX = 4096


@dataclass
class AnnCoverage:
    """Novelty detector: a vector is new coverage when its nearest stored neighbour is farther
    than `threshold`.

    The distance is squared Euclidean, as in TensorFuzz's FLANN set-up, so thresholds carry
    over. Up to EXACT_MAX vectors the search is exact (Note [Exact search first]); past that a usearch HNSW index,
    which adds incrementally, so TensorFuzz's periodic index rebuilds are not needed.
    """

    threshold: float
    metric: str = "l2sq"
    index: Index | None = None
    dim: int | None = None
    added: int = 0
    _key: int = 0
    _rows: np.ndarray | None = None  # the exact buffer (its first `added` rows), while added <= EXACT_MAX

    def _ensure(self, dim: int) -> None:
        if self.dim is None:
            self.dim = dim
        elif dim != self.dim:
            raise ValueError(f"coverage vector has {dim} entries, the index holds {self.dim}")

    def __len__(self) -> int:
        return self.added

    def nearest_distance(self, vec: np.ndarray) -> float:
        """Distance to the nearest stored vector (inf while the index is empty)."""
        arr = clean_features(vec)
        self._ensure(arr.shape[0])
        if self.added == 0:
            return float("inf")
        if self.index is None:
            assert self._rows is not None
            diff = self._rows[:self.added] - arr
            diff *= diff
            return float(diff.sum(axis=1).min())
        match = self.index.search(arr, 1)
        return float(np.asarray(match.distances).reshape(-1)[0])

    def add(self, vec: np.ndarray) -> int:
        """Store a vector unconditionally (seeds); return its key."""
        arr = clean_features(vec)
        self._ensure(arr.shape[0])
        key = self._key
        if self.index is None and self.added < EXACT_MAX:
            if self._rows is None or self._rows.shape[0] == self.added:  # grow the buffer by doubling
                grown = np.empty((max(16, 2 * self.added), arr.shape[0]), dtype=np.float64)
                if self._rows is not None:
                    grown[:self.added] = self._rows[:self.added]
                self._rows = grown
            self._rows[self.added] = arr
        else:
            if self.index is None:  # the buffer is full: the HNSW index takes its rows, then every new vector
                assert self._rows is not None
                self.index = Index(ndim=arr.shape[0], metric=self.metric, dtype="f64")
                self.index.add(np.arange(self.added, dtype=np.uint64), self._rows[:self.added])
                self._rows = None
            self.index.add(key, arr)
        self._key += 1
        self.added += 1
        return key

    def is_novel(self, vec: np.ndarray) -> tuple[bool, float]:
        distance = self.nearest_distance(vec)
        return distance > self.threshold, distance

    def maybe_add(self, vec: np.ndarray) -> bool:
        """Add the vector when it is novel; return whether it was."""
        novel, _ = self.is_novel(vec)
        if novel:
            self.add(vec)
        return novel
