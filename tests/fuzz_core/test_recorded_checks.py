"""Each confirmation check that runs records its own outcome in the evidence (Note [Recorded checks])."""

from __future__ import annotations

import math

import torch

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.confirm import VALUE_CHECKS
from fuzz_core.evidence import CheckOutcome, Evidence
from fuzz_core.oracles import compare_outputs

# A layout bug: the non-contiguous path adds 1e-3, which float64 (contiguous) does not.
LAYOUT_OFFSET = '''
def make_inputs(seed):
    return (torch.arange(24, dtype=torch.float32).reshape(4, 6) / 4 + 1,), {}

def target(x):
    if x.is_contiguous():
        return x * 2
    return x * 2 + 1e-3
'''

# The non-contiguous path drops the last column: a shape mismatch.
LAYOUT_SHAPE = '''
def make_inputs(seed):
    return (torch.arange(24, dtype=torch.float32).reshape(4, 6) / 4 + 1,), {}

def target(x):
    if x.is_contiguous():
        return x * 2
    return (x * 2)[..., :-1]
'''

# The non-contiguous path raises.
LAYOUT_RAISES = '''
def make_inputs(seed):
    return (torch.arange(24, dtype=torch.float32).reshape(4, 6) / 4 + 1,), {}

def target(x):
    if not x.is_contiguous():
        raise RuntimeError("planted: non-contiguous input")
    return x * 2
'''

# Both modes give x - x (0) for finite x; the test mode alone turns the middle element into -inf.
ONE_D_INFINITY = '''
def make_inputs(seed):
    return (torch.tensor([1.0, 2.0, 3.0, 4.0]),), {}

def target(x):
    out = x * 2
    if not x.is_contiguous():
        out = out.clone()
        out[2] = -float("inf")
    return out
'''


def _checks(evidence: dict) -> list[CheckOutcome]:
    checks = Evidence.from_dict(evidence).checks
    assert checks is not None, "no checks recorded"
    return checks


def test_a_confirmed_value_finding_records_every_check_in_the_order_it_ran(tmp_path) -> None:
    spec = HarnessSpec(api="planted.offset", input_source="code", code=LAYOUT_OFFSET, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason
    checks = _checks(result.evidence)
    names = [c.check for c in checks]
    assert names == ["reference_accepts_input", "beyond_tolerance"] + [c.__name__ for c in VALUE_CHECKS]
    assert {c.status for c in checks} <= {"held", "skipped"}


def test_the_fp64_check_records_its_own_figures(tmp_path) -> None:
    spec = HarnessSpec(api="planted.offset", input_source="code", code=LAYOUT_OFFSET, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    fp64 = next(c for c in _checks(result.evidence) if c.check == "check_fp64")
    assert fp64.status == "held"
    assert fp64.figures["test_error_vs_fp64"] == result.evidence["test_error_vs_fp64"]
    assert fp64.figures["test_error_vs_fp64"] > fp64.figures["ref_error_vs_fp64"]


def test_a_shape_finding_records_only_the_checks_that_ran(tmp_path) -> None:
    spec = HarnessSpec(api="planted.shape", input_source="code", code=LAYOUT_SHAPE, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason
    assert [(c.check, c.status) for c in _checks(result.evidence)] == [
        ("reference_accepts_input", "held"), ("shape_differs", "held"), ("reproducible", "held")]


def test_an_exception_finding_records_the_rerun_and_the_oracle(tmp_path) -> None:
    spec = HarnessSpec(api="planted.raises", input_source="code", code=LAYOUT_RAISES, test_mode="layout:noncontiguous",
                       oracle="exception")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason
    assert [(c.check, c.status) for c in _checks(result.evidence)] == [
        ("reference_accepts_input", "held"), ("reproducible", "held"), ("oracle_is_exception", "held")]


def test_an_exception_under_a_value_oracle_records_the_oracle_check_as_failed(tmp_path) -> None:
    spec = HarnessSpec(api="planted.raises", input_source="code", code=LAYOUT_RAISES, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "suspicious", result.reason
    assert _checks(result.evidence)[-1].check == "oracle_is_exception"
    assert _checks(result.evidence)[-1].status == "failed"


def test_a_check_that_raises_is_recorded_as_an_error_and_nothing_after_it_runs(tmp_path) -> None:
    from tests.fuzz_core.test_confirm import PERTURBATION_RAISES

    spec = HarnessSpec(api="planted.fragile", input_source="code", code=PERTURBATION_RAISES,
                       test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    last = _checks(result.evidence)[-1]
    assert (last.check, last.status) == ("check_amplification", "error")
    assert "perturbed input" in last.detail


def test_a_nan_inf_finding_records_its_checks(tmp_path) -> None:
    spec = HarnessSpec(api="planted.inf", input_source="code", code=ONE_D_INFINITY, test_mode="layout:noncontiguous",
                       oracle="nan_inf")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason
    assert [c.check for c in _checks(result.evidence)] == [
        "reference_accepts_input", "inputs_finite", "float64_finite", "reference_mode_finite", "reproducible"]


def test_first_index_of_a_one_dimensional_output_has_one_coordinate() -> None:
    ref = torch.tensor([1.0, 2.0, 3.0, 4.0])
    test = torch.tensor([1.0, 2.0, -math.inf, 4.0])
    mismatch = compare_outputs(ref, test).first
    assert (mismatch.first_index, mismatch.shape) == ([2], [4])


# A 1-D input whose output is 2-D: the index is the output's, and the evidence names the output's shape.
OUTER = '''
def make_inputs(seed):
    return (torch.arange(1, 4, dtype=torch.float32),), {}

def target(x):
    out = torch.outer(x, x)
    if not x.is_contiguous():
        out = out + (out > 5) * 1e-2
    return out
'''


def test_first_index_is_in_the_coordinates_of_the_output_it_names(tmp_path) -> None:
    spec = HarnessSpec(api="planted.outer", input_source="code", code=OUTER, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=tmp_path, instrument="none")
    assert result.verdict == "confirmed", result.reason
    assert result.evidence["output_shape"] == [3, 3]
    assert result.evidence["first_index"] == [1, 2]  # 2 * 3 = 6 is the first product above 5


def test_stored_checks_read_back_as_typed_outcomes() -> None:
    evidence = Evidence()
    evidence.update({"checks": [CheckOutcome("check_fp64", "held", "fp64 rule", {"test_error_vs_fp64": math.inf})]})
    stored = evidence.to_dict()
    assert stored["checks"][0]["figures"]["test_error_vs_fp64"] == "inf"  # JSON has no inf
    assert Evidence.from_dict(stored).checks == [CheckOutcome("check_fp64", "held", "fp64 rule",
                                                              {"test_error_vs_fp64": "inf"})]


def test_an_older_finding_has_no_recorded_checks() -> None:
    assert Evidence.from_dict({"max_abs_diff": 1.0}).checks is None
