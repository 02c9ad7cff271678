"""Oracles on real tensors: per-dtype tolerances, NaN == NaN, index ties, the fp64 rule, NaN/Inf objective."""

from __future__ import annotations

import torch

from fuzz_core.oracles import compare_outputs, judge_leaf, unexpected_nonfinite


def test_float32_tolerance_and_nan_equality() -> None:
    ref = torch.tensor([1.0, float("nan"), float("inf"), 0.0])
    assert compare_outputs(ref, ref.clone()).ok
    assert compare_outputs(ref, ref + torch.tensor([1e-7, 0, 0, 1e-6])).ok  # inside rtol 1.3e-6 / atol 1e-5
    result = compare_outputs(ref, ref + torch.tensor([1e-3, 0, 0, 0]))
    assert not result.ok and result.first.kind == "value" and result.first.first_index == [0]
    assert not compare_outputs(ref, torch.tensor([1.0, 0.0, float("inf"), 0.0])).ok  # NaN vs number


def test_low_dtype_compares_against_rounded_reference_with_its_tolerance() -> None:
    ref = torch.tensor([1.0001, 2.0, 3.0])
    half = ref.half()
    assert compare_outputs(ref, half, low_dtype=torch.float16, compares_dtype=False).ok
    assert not compare_outputs(ref, half + 0.01, low_dtype=torch.float16, compares_dtype=False).ok


def test_shape_and_dtype_mismatches_are_structural() -> None:
    assert compare_outputs(torch.zeros(2, 3), torch.zeros(3, 2)).first.kind == "shape"
    assert compare_outputs(torch.zeros(2), torch.zeros(2, dtype=torch.float64)).first.kind == "dtype"


def test_index_outputs_skip_comparison_only_with_ties() -> None:
    tied = torch.tensor([1.0, 3.0, 3.0])
    r = compare_outputs(torch.tensor(1), torch.tensor(2), returns_indices=True, inputs=[tied])
    assert r.ok and r.notes
    distinct = torch.tensor([1.0, 3.0, 2.0])
    assert not compare_outputs(torch.tensor(1), torch.tensor(2), returns_indices=True, inputs=[distinct]).ok


def test_fp64_rule_accepts_a_more_accurate_test_and_rejects_a_wrong_one() -> None:
    g = torch.Generator().manual_seed(0)
    # Large values that cancel: float32 cumsum loses the small ones, a float64 sum keeps them.
    x = torch.randn(300, generator=g, dtype=torch.float64)
    x[::3] = 1e8
    x[2::3] = -1e8
    x32 = x.float()
    fp64 = (x32[0::3].double() + x32[1::3].double()) + x32[2::3].double()
    ref = (x32[0::3] + x32[1::3]) + x32[2::3]
    better = fp64.float()
    rtol, atol = 1.3e-6, 1e-5
    assert not compare_outputs(ref, better).ok  # beyond tolerance ...
    assert judge_leaf(ref, better, fp64, low_dtype=None, rtol=rtol, atol=atol).test_worse is False
    wrong = ref + 10.0  # far beyond 3x the reference's own (large) error
    judgement = judge_leaf(ref, wrong, fp64, low_dtype=None, rtol=rtol, atol=atol)
    assert judgement.test_worse is True and judgement.test_error > judgement.ref_error


def test_fp64_rule_on_nan_mismatch_sides_with_float64() -> None:
    ref = torch.tensor([1.0, 2.0])
    fp64 = torch.tensor([1.0, 2.0], dtype=torch.float64)
    test = torch.tensor([1.0, float("nan")])
    assert judge_leaf(ref, test, fp64, low_dtype=None, rtol=1.3e-6, atol=1e-5).test_worse is True
    # Both the reference and the test disagree with fp64 on the NaN: no decision.
    ref_bad = torch.tensor([1.0, float("inf")])
    assert judge_leaf(ref_bad, test, fp64, low_dtype=None, rtol=1.3e-6, atol=1e-5).test_worse is None


def test_nan_inf_objective_ignores_ieee_demanded_values() -> None:
    fp64 = torch.tensor([1.0, float("nan"), 1e300], dtype=torch.float64)
    out = torch.tensor([1.0, float("nan"), float("inf")])  # NaN demanded, inf is overflow of 1e300
    assert unexpected_nonfinite(out, fp64) is None
    out_bad = torch.tensor([float("inf"), float("nan"), float("inf")])
    assert unexpected_nonfinite(out_bad, fp64) == ("out", 1, [0])


def test_low_precision_allows_a_few_ulps_but_not_more() -> None:
    ref = torch.tensor([40.0, 0.3])  # float16 ulp: 0.03125 at 40, 2.4e-4 at 0.3
    few = torch.tensor([40.0 + 3 * 0.03125, 0.3]).half()
    many = torch.tensor([40.0 + 20 * 0.03125, 0.3]).half()
    assert compare_outputs(ref, few, low_dtype=torch.float16, compares_dtype=False).ok
    assert not compare_outputs(ref, many, low_dtype=torch.float16, compares_dtype=False).ok
