"""ANN novelty: threshold semantics, agreement with exact search, robustness to NaN features."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fuzz_core.coverage import AnnCoverage


def test_novelty_is_squared_distance_beyond_threshold() -> None:
    cov = AnnCoverage(threshold=1.0)
    assert cov.maybe_add(np.array([0.0, 0.0]))  # empty index: everything is new
    assert not cov.maybe_add(np.array([0.5, 0.5]))  # 0.5 ≤ 1.0
    assert cov.maybe_add(np.array([1.0, 1.0]))  # 2.0 > 1.0
    assert len(cov) == 2
    assert cov.nearest_distance(np.array([1.0, 2.0])) == pytest.approx(1.0)


def test_a_small_index_searches_exactly_in_float64() -> None:
    """Note [Exact search first]: below EXACT_MAX vectors the distance is the exact one, not a float32 rounding."""
    rng = np.random.default_rng(1)
    stored = rng.normal(size=(200, 7)) * 1e3
    cov = AnnCoverage(threshold=0.0)
    for v in stored:
        cov.add(v)
    assert cov.index is None
    for q in rng.normal(size=(50, 7)) * 1e3:
        assert cov.nearest_distance(q) == pytest.approx(np.min(np.sum((stored - q) ** 2, axis=1)), rel=1e-12)


def test_ann_distance_matches_exact_nearest_neighbour(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past EXACT_MAX vectors (here 64) the HNSW index answers, for the buffered vectors and the later ones."""
    import fuzz_core.coverage.ann as ann

    monkeypatch.setattr(ann, "EXACT_MAX", 64)
    rng = np.random.default_rng(0)
    stored = rng.normal(size=(300, 8))
    cov = AnnCoverage(threshold=0.0)
    for v in stored:
        cov.add(v)
    assert cov.index is not None and len(cov.index) == 300
    queries = rng.normal(size=(100, 8))
    exact = np.array([np.min(np.sum((stored - q) ** 2, axis=1)) for q in queries])
    approx = np.array([cov.nearest_distance(q) for q in queries])
    # An approximate index can miss the true neighbour (larger distance) but never invent a
    # closer one; at this size HNSW should nearly always be exact. usearch returns distances
    # in float32, hence a float32 relative resolution (1e-6) in the comparison.
    assert np.all(approx >= exact * (1 - 1e-6))
    assert np.mean(np.isclose(approx, exact, rtol=1e-6, atol=0.0)) >= 0.95


def test_nonfinite_features_are_cleaned_not_fatal() -> None:
    cov = AnnCoverage(threshold=0.5)
    cov.add(np.array([0.0, 0.0]))
    distance = cov.nearest_distance(np.array([math.nan, math.inf]))
    assert math.isfinite(distance) and distance > 1e20


def test_dimension_change_is_a_clear_error() -> None:
    cov = AnnCoverage(threshold=0.5)
    cov.add(np.zeros(3))
    with pytest.raises(ValueError, match="3"):
        cov.add(np.zeros(4))
