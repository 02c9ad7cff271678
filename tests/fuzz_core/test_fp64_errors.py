"""Errors against float64 are never 0 beside an infinite difference (Note [Errors against float64])."""

from __future__ import annotations

import math

import pytest
import torch

from fuzz_core.oracles import judge_leaf


def test_a_side_with_an_infinity_where_float64_is_finite_has_an_infinite_error() -> None:
    ref, test = torch.tensor([1.0, 2.0]), torch.tensor([1.0, math.inf])
    judgement = judge_leaf(ref, test, ref.double(), low_dtype=None, rtol=1.3e-6, atol=1e-5)
    assert judgement.test_error == math.inf
    assert judgement.ref_error == 0.0


def test_a_nan_where_float64_is_nan_too_is_no_error() -> None:
    ref, test = torch.tensor([math.nan]), torch.tensor([0.0])
    judgement = judge_leaf(ref, test, ref.double(), low_dtype=None, rtol=1.3e-6, atol=1e-5)
    assert (judgement.ref_error, judgement.test_error) == (0.0, math.inf)


def test_finite_results_keep_their_rmse() -> None:
    ref, fp64 = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0], dtype=torch.float64)
    judgement = judge_leaf(ref, torch.tensor([1.5, 2.0]), fp64, low_dtype=None, rtol=1.3e-6, atol=1e-5)
    assert judgement.test_error == pytest.approx(math.sqrt(0.125)) and judgement.ref_error == 0.0
