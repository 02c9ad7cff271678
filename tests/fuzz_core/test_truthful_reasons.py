"""Reasons name the values when NaN/Inf decide a finding, never an RMSE of nothing (Note [Truthful reasons])."""

from __future__ import annotations

import torch

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.oracles import judge_leaf
from fuzz_core.oracles.value_classes import describe_nonfinite

# The reference (contiguous input, as float64 runs it) divides zero by zero: nan, like var_mean of an empty
# tensor in eager; the test mode returns 0 there, like inductor.
NAN_VS_ZERO = '''
def make_inputs(seed):
    return (torch.tensor([1.5, 2.5, 3.5]),), {}

def target(x):
    if x.is_contiguous():
        return (x - x).sum() / (x - x).sum()
    return (x - x).sum()
'''

# The reference gives nan, the test mode -inf (log of zero): the absolute difference is no number at all.
NAN_VS_MINUS_INF = '''
def make_inputs(seed):
    return (torch.tensor([1.5, 2.5, 3.5]),), {}

def target(x):
    if x.is_contiguous():
        return (x - x) / (x - x)
    return torch.log(x - x)
'''


def test_nan_against_zero_is_reported_as_values_not_as_rmse(tmp_path) -> None:
    spec = HarnessSpec(api="planted.nan_vs_zero", input_source="code", code=NAN_VS_ZERO,
                       test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
    assert "rmse 0 vs 0" not in result.reason and "rmse" not in result.reason
    assert "eager gives nan" in result.reason and "gives 0," in result.reason
    assert "float64 gives nan" in result.reason


def test_nan_against_minus_inf_says_why_max_abs_diff_is_not_finite(tmp_path) -> None:
    spec = HarnessSpec(api="planted.nan_vs_minus_inf", input_source="code", code=NAN_VS_MINUS_INF,
                       test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
    assert result.evidence["max_abs_diff"] == "inf"  # the stored figure is unchanged
    assert "a NaN against a non-NaN value" in result.reason and "max abs diff inf" not in result.reason
    assert "eager gives nan" in result.reason and "gives -inf" in result.reason
    assert "eager gives nan" in result.evidence["max_abs_diff_cause"]


def test_judgement_with_no_finite_position_quotes_no_rmse() -> None:
    ref, test = torch.tensor([float("nan")]), torch.tensor([0.0])
    judgement = judge_leaf(ref, test, ref.double(), low_dtype=None, rtol=1.3e-6, atol=1e-5,
                           ref_name="eager", test_name="inductor")
    assert judgement.test_worse is True
    assert "rmse" not in judgement.detail
    assert "eager gives nan, inductor gives 0, float64 gives nan (at 1 element)" in judgement.detail


def test_finite_differences_still_quote_rmse_over_finite_positions() -> None:
    ref, fp64 = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0], dtype=torch.float64)
    judgement = judge_leaf(ref, torch.tensor([1.5, 2.0]), fp64, low_dtype=None, rtol=1.3e-6, atol=1e-5)
    assert judgement.test_worse is True and "test rmse 0.354 vs reference 0" in judgement.detail


def test_many_positions_show_classes_and_few_values() -> None:
    ref = torch.tensor([float("nan")] * 4 + [float("inf")])
    test = torch.tensor([0.0, 1.0, 2.0, 3.0, float("-inf")])
    text = describe_nonfinite(ref, test, ref.double(), ref_name="eager", test_name="inductor")
    assert text == ("eager gives nan, inductor gives finite values, float64 gives nan (at 4 elements); "
                    "eager gives inf, inductor gives -inf, float64 gives inf (at 1 element)")
