"""The confirmation checks: a check that cannot run never confirms; rounding depth; test-only infinities."""

from __future__ import annotations

import pytest

from fuzz_core import HarnessSpec, run_harness

# The reference raises on any input but the seed's exact quarter values, so the amplification check
# (which perturbs the input) cannot run; the layout difference itself is certain.
PERTURBATION_RAISES = '''
def make_inputs(seed):
    return (torch.arange(24, dtype=torch.float32).reshape(4, 6) / 4 + 1,), {}

def target(x):
    if not bool((x * 4 == torch.round(x * 4)).all()):
        raise ValueError("perturbed input")
    if x.is_contiguous():
        return x * 2
    return x * 2 + 1e-3
'''

# Twelve multiplications that fp16 rounds away each time (1.0004 is below half an fp16 ulp at [1, 2)):
# about 6 fp16 ulps off the rounded float32 result, which is rounding of a 12-step composite.
TWELVE_ROUNDINGS = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(64, generator=g) + 1,), {}

def target(x):
    for _ in range(12):
        x = x * 1.0004
    return x
'''

# Centring around a mean of ~100: in fp16 the rounded mean is off by up to 1/32, hundreds of ulps of the small
# centred outputs, and exactly what the same two steps give when each result is rounded to fp16.
CENTRED = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (100 + torch.rand(32, generator=g) / 2,), {}

def target(x):
    return (x - x.mean()) * 3.0
'''

# The test mode computes asinh as log(|x| + sqrt(x*x + 1)): x*x overflows float32 beyond ~1.8e19,
# where asinh itself (and float64) is a small finite number.
NAIVE_ASINH = '''
def make_inputs(seed):
    return (torch.tensor([1e19, 3e19, -2e19, 0.5]),), {}

def target(x):
    if x.is_contiguous():
        return torch.asinh(x)
    return torch.sign(x) * torch.log(x.abs() + torch.sqrt(x * x + 1))
'''


def test_a_confirmation_check_that_raises_leaves_the_finding_suspicious(tmp_path) -> None:
    spec = HarnessSpec(api="planted.fragile", input_source="code", code=PERTURBATION_RAISES,
                       test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "suspicious", result.reason
    assert "check_amplification could not run" in result.reason and "perturbed input" in result.reason
    assert result.evidence["failed_check"] == "check_amplification"


def test_rounding_of_a_composite_op_is_within_its_depth_allowance(tmp_path) -> None:
    spec = HarnessSpec(api="planted.twelve_steps", input_source="code", code=TWELVE_ROUNDINGS,
                       test_mode="dtype:float16")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "passed", result.reason
    assert result.evidence["rounding_accepted"] == 1
    assert "rounding allowance" in result.reason


def test_rounding_no_worse_than_the_composite_rounded_at_every_step_is_not_confirmed(tmp_path) -> None:
    spec = HarnessSpec(api="planted.centred", input_source="code", code=CENTRED, test_mode="dtype:float16")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "passed", result.reason
    assert result.evidence["rounding_accepted"] == 1


def test_garbage_in_low_precision_is_still_confirmed_and_localised(tmp_path) -> None:
    spec = HarnessSpec(api="torch.nn.functional.soft_margin_loss", test_mode="dtype:float16")
    result = run_harness(spec, max_executions=30, workdir=tmp_path, instrument="op")
    assert result.verdict == "confirmed", result.reason
    assert result.evidence["max_abs_diff"] == "inf"
    assert result.evidence["first_divergent_op"]["name"] == "aten.soft_margin_loss.default"
    bare = run_harness(spec, max_executions=30, workdir=tmp_path, instrument="none")
    assert bare.verdict == "confirmed" and "first_divergent_op" not in bare.evidence


SUMMED_IN_ANOTHER_ORDER = '''
def make_inputs(seed):
    return (torch.tensor([3e38, -3e38, 3e38]),), {}

def target(x):
    if x.is_contiguous():
        return (x[0] + x[1]) + x[2]
    return (x[0] + x[2]) + x[1]
'''


def test_an_overflow_that_only_the_order_of_summation_decides_is_suspicious(tmp_path) -> None:
    # Note [Partial sums at the range edge]: the answer (3e38) fits, but |terms| sum to 9e38
    spec = HarnessSpec(api="planted.reordered_sum", input_source="code", code=SUMMED_IN_ANOTHER_ORDER,
                       test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "suspicious", result.reason
    assert "order of summation" in result.reason
    assert result.evidence["intermediate_bound"] == pytest.approx(9e38, rel=1e-6)  # float32 inputs, summed in float64


def test_an_infinity_only_the_test_mode_produces_on_huge_inputs_is_confirmed(tmp_path) -> None:
    spec = HarnessSpec(api="planted.naive_asinh", input_source="code", code=NAIVE_ASINH,
                       test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
    assert result.evidence["test_only_infinities"] == 2
    assert result.evidence["perturbation_overflows"] is False


# A product whose second prefix (8.6e69) is beyond every low dtype's range and whose third comes back to 2.5e31:
# float32 eager carries the prefix in a double accumulator, a bfloat16 kernel in a float one.
CUMPROD_PAST_AN_OVERFLOW = '''
def make_inputs(seed):
    return (torch.tensor([-8.632194e34, -9.930268e34, 2.938736e-39]), 0), {}

def target(x, dim):
    return torch.cumprod(x, dim)
'''


def test_a_scan_that_recovers_from_an_overflowed_prefix_only_in_float32_is_suspicious(tmp_path) -> None:
    # Note [A scan passes through its own outputs]: the bound at the last element is its prefix's 8.6e69
    spec = HarnessSpec(api="planted.cumprod", input_source="code", code=CUMPROD_PAST_AN_OVERFLOW,
                       test_mode="dtype:bfloat16")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "suspicious", result.reason
    assert result.evidence["intermediate_bound"] == pytest.approx(8.572e69, rel=1e-3)


# The test mode computes the variance as E[x^2] - E[x]^2 in float32 (squares overflow beyond ~1.8e19).
NAIVE_VARIANCE = '''
def make_inputs(seed):
    return (torch.tensor({values}),), {{}}

def target(x):
    if x.is_contiguous():
        return torch.var_mean(x, correction=0)
    m = x.mean()
    return ((x * x).mean() - m * m, m)
'''


def test_a_variance_whose_sum_of_squares_no_float_accumulator_holds_is_suspicious(tmp_path) -> None:
    # Note [A float accumulator's own range]: var([0, 3.7e19, 0, 0]) fits, its M2 (1.02e39) does not
    spec = HarnessSpec(api="planted.var_mean", input_source="code", test_mode="layout:noncontiguous",
                       code=NAIVE_VARIANCE.format(values="[0.0, 3.6893486e19, 0.0, 0.0]"))
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "suspicious", result.reason
    assert result.evidence["intermediate_bound"] > 3.4028235e38


def test_a_variance_overflow_a_float_accumulator_would_avoid_is_confirmed(tmp_path) -> None:
    # the squares overflow float32, but the sum of squared deviations (about 1e36) fits: a real bug
    spec = HarnessSpec(api="planted.var_mean", input_source="code", test_mode="layout:noncontiguous",
                       code=NAIVE_VARIANCE.format(values="[2e19, 2e19, 2e19, 2.1e19]"))
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason


# Sixteen values of magnitude ~40 into one element, whose mean is ~0.24: float16 rounds each partial sum.
INDEX_REDUCE_MEAN = '''
def make_inputs(seed):
    src = torch.randn(1, 16, generator=torch.Generator().manual_seed(11)) * 40
    return (torch.tensor([[0.5, 1.0]]), 1, torch.zeros(16, dtype=torch.long), src, "mean"), {{}}

def target(x, dim, index, source, reduce):
    out = torch.Tensor.index_reduce(x, dim, index, source, reduce)
    return out{wrong}
'''


def test_rounding_of_values_accumulated_in_a_low_dtype_output_is_suspicious(tmp_path) -> None:
    # Note [Accumulating writes in a low dtype]: 17 values into one element, each partial sum rounded to float16
    spec = HarnessSpec(api="planted.index_reduce", input_source="code", code=INDEX_REDUCE_MEAN.format(wrong=""),
                       test_mode="dtype:float16")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "suspicious", result.reason
    assert result.evidence["accumulation_depth"] == 17


def test_an_accumulating_write_wrong_beyond_its_roundings_is_confirmed(tmp_path) -> None:
    wrong = " + (0.25 if out.dtype == torch.float16 else 0.0)"
    spec = HarnessSpec(api="planted.index_reduce", input_source="code", code=INDEX_REDUCE_MEAN.format(wrong=wrong),
                       test_mode="dtype:float16")
    result = run_harness(spec, max_executions=1, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
