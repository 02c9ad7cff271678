"""Coverage as approximate-nearest-neighbour novelty of feature vectors (a usearch HNSW index)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from usearch.index import Index

# Feature entries beyond this are clipped: squared distances must stay finite in float64.
FEATURE_CLIP = 1e15


def clean_features(vec: np.ndarray) -> np.ndarray:
    """A finite float64 copy: NaN → 0, ±Inf and huge values → ±FEATURE_CLIP."""
    arr = np.asarray(vec, dtype=np.float64).reshape(-1)
    return np.clip(np.nan_to_num(arr, nan=0.0, posinf=FEATURE_CLIP, neginf=-FEATURE_CLIP),
                   -FEATURE_CLIP, FEATURE_CLIP)


@dataclass
class AnnCoverage:
    """Novelty detector: a vector is new coverage when its nearest stored neighbour is farther
    than `threshold`.

    The distance is squared Euclidean, as in TensorFuzz's FLANN set-up, so thresholds carry
    over. usearch adds to its HNSW graph incrementally, so TensorFuzz's exact-search buffer and
    periodic index rebuilds are not needed.
    """

    threshold: float
    metric: str = "l2sq"
    index: Index | None = None
    dim: int | None = None
    added: int = 0
    _key: int = 0

    def _ensure(self, dim: int) -> Index:
        if self.index is None:
            self.dim = dim
            self.index = Index(ndim=dim, metric=self.metric, dtype="f64")
        elif dim != self.dim:
            raise ValueError(f"coverage vector has {dim} entries, the index holds {self.dim}")
        return self.index

    def __len__(self) -> int:
        return self.added

    def nearest_distance(self, vec: np.ndarray) -> float:
        """Distance to the nearest stored vector (inf while the index is empty)."""
        arr = clean_features(vec)
        index = self._ensure(arr.shape[0])
        if len(index) == 0:
            return float("inf")
        match = index.search(arr, 1)
        return float(np.asarray(match.distances).reshape(-1)[0])

    def add(self, vec: np.ndarray) -> int:
        """Store a vector unconditionally (seeds); return its key."""
        arr = clean_features(vec)
        index = self._ensure(arr.shape[0])
        key = self._key
        index.add(key, arr)
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
