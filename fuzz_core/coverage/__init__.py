"""Coverage signals: ANN novelty over feature vectors, and (ATen op, dtype, layout) sets."""

from fuzz_core.coverage.ann import AnnCoverage, clean_features
from fuzz_core.coverage.features import ActivationCapture, resolve_layers, summary_features
from fuzz_core.coverage.ops import OpCoverage

__all__ = ["ActivationCapture", "AnnCoverage", "OpCoverage", "clean_features", "resolve_layers",
           "summary_features"]
