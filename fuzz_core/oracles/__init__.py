"""Oracles: value/shape/dtype comparison, the float64 rule, sensitivity, and the NaN/Inf objective."""

from __future__ import annotations

from fuzz_core.oracles.compare import Comparison, Mismatch, compare_outputs, has_ties
from fuzz_core.oracles.fp64 import Judgement, judge_leaf
from fuzz_core.oracles.nan_inf import inputs_finite, unexpected_nonfinite
from fuzz_core.oracles.sensitivity import SensitivityError, amplification, perturbation_overflows
from fuzz_core.oracles.tolerance import DTYPE_PRECISIONS, same_tol, tolerance_for

__all__ = [
    "Comparison", "Mismatch", "compare_outputs", "has_ties", "Judgement", "judge_leaf", "inputs_finite",
    "unexpected_nonfinite", "amplification", "perturbation_overflows", "SensitivityError", "DTYPE_PRECISIONS", "same_tol", "tolerance_for",
]
