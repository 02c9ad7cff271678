"""run_harness end to end in this process: certain positives, honest negatives, not_applicable, errors."""

from __future__ import annotations

import pytest
import torch

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.saved_inputs import load_inputs
from fuzz_core.spec import SpecError
from tests.fuzz_core.planted import LAYOUT_BUG, LAYOUT_MORE_ACCURATE


def test_planted_layout_bug_is_confirmed_with_evidence(tmp_path) -> None:
    spec = HarnessSpec(api="planted.scale", input_source="code", code=LAYOUT_BUG, test_mode="layout:noncontiguous",
                       kind="Layout_Mismatch")
    result = run_harness(spec, max_executions=20, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
    ev = result.evidence
    assert ev["max_abs_diff"] == pytest.approx(1e-3, rel=1e-2)
    assert ev["mismatch_count"] == 24 and ev["first_index"] == [0, 0]
    assert ev["test_error_vs_fp64"] > 10 * ev["ref_error_vs_fp64"]
    assert ev["torch_version"] == torch.__version__
    loaded = load_inputs(ev["inputs_path"])
    assert loaded["args"][0].shape == (4, 6)
    assert "import fuzz_core" not in result.repro and "transfuzz" not in result.repro.split('"""', 2)[2].lower()
    assert result.signature == "planted.scale|eager->layout:noncontiguous|Layout_Mismatch|value:out"
    assert result.exit_reason == "confirmed" and result.executions == 1


def test_more_accurate_test_mode_is_not_confirmed(tmp_path) -> None:
    spec = HarnessSpec(api="honest.sum", input_source="code", code=LAYOUT_MORE_ACCURATE,
                       test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=6, workdir=tmp_path)
    assert result.verdict == "passed", result.reason
    # The difference was real and beyond tolerance; the float64 rule is what kept it from `confirmed`.
    assert result.evidence["fp64_accepted"] >= 1


@pytest.mark.parametrize("api,mode", [
    ("torch.nn.functional.relu6", "jit.trace"),
    ("torch.sum", "dtype:float16"),
    ("torch.mm", "autocast:bfloat16"),
    ("torch.add", "variant:out"),
    ("torch.nn.functional.softmax", "layout:noncontiguous"),
])
def test_honest_library_ops_are_not_confirmed(api: str, mode: str, tmp_path) -> None:
    result = run_harness(HarnessSpec(api=api, test_mode=mode, seed=1), max_executions=60, workdir=tmp_path)
    assert result.verdict in ("passed", "suspicious", "flaky"), (result.verdict, result.reason)
    assert result.verdict == "passed" or result.reason  # anything but a pass says why


@pytest.mark.parametrize("api,mode,why", [
    ("torch.add", "device:cuda", "CUDA"),
    ("torch.nn.functional.relu6", "layout:channels_last", "4-D"),
    ("torch.matmul", "variant:inplace", "in-place"),
])
def test_modes_that_cannot_apply_are_not_applicable(api: str, mode: str, why: str, tmp_path) -> None:
    if mode == "device:cuda" and torch.cuda.is_available():
        pytest.skip("CUDA present")
    result = run_harness(HarnessSpec(api=api, test_mode=mode), max_executions=30, workdir=tmp_path)
    assert result.verdict == "not_applicable" and why in result.reason


def test_an_in_place_comparison_keeping_its_inputs_dtype_is_no_finding(tmp_path) -> None:
    # x.greater_(y) writes 0./1. into float x while torch.greater returns bool: the in-place contract
    result = run_harness(HarnessSpec(api="torch.greater", test_mode="variant:inplace", seed=1), max_executions=200,
                         workdir=tmp_path)
    assert result.verdict == "passed", result.reason


def test_an_in_place_value_that_differs_is_still_a_mismatch() -> None:
    from fuzz_core.modes import get_mode
    from fuzz_core.oracles import compare_outputs

    mode = get_mode("variant:inplace", {})
    functional, written = torch.tensor([True, False, True]), torch.tensor([1.0, 1.0, 1.0])
    comparison = compare_outputs(functional, written, compares_dtype=mode.compares_dtype)
    assert not comparison.ok and [m.kind for m in comparison.mismatches] == ["value"]
    assert compare_outputs(functional, torch.tensor([1.0, 0.0, 1.0]), compares_dtype=mode.compares_dtype).ok


def test_broken_harnesses_are_errors_not_findings(tmp_path) -> None:
    broken = run_harness(HarnessSpec(api="x.y", input_source="code", code="def target(x):\n    return x\n"),
                         max_executions=3, workdir=tmp_path)
    assert broken.verdict == "error" and "make_inputs" in broken.reason
    with pytest.raises(SpecError, match="torch has no torch.not_an_op"):  # an unknown API is no spec at all
        HarnessSpec(api="torch.not_an_op")


def test_random_op_is_compared_under_a_reseeded_rng(tmp_path) -> None:
    code = '''
def make_inputs(seed):
    return (torch.ones(16, 16),), {}

def target(x):
    return torch.nn.functional.dropout(x, p=0.5, training=True)
'''
    result = run_harness(HarnessSpec(api="random.dropout", input_source="code", code=code, test_mode="jit.trace"),
                         max_executions=10, workdir=tmp_path)
    assert result.verdict == "passed", result.reason
    assert result.evidence["random_op"] is True


def test_nan_inf_objective_finds_fp16_style_overflow_in_an_intermediate(tmp_path) -> None:
    # mean computed as sum/numel in float16 overflows although the mean itself is small.
    code = '''
def make_inputs(seed):
    return (torch.full((4096,), 30.0, dtype=torch.float16),), {}

def target(x):
    return x.sum() / x.numel()
'''
    result = run_harness(HarnessSpec(api="planted.mean", input_source="code", code=code, oracle="nan_inf",
                                     kind="NaN_Inf"), max_executions=5, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason


def test_extreme_magnitude_and_nonfinite_inputs_stay_suspicious(tmp_path) -> None:
    # The same planted layout bug, but on inputs no user writes: maintainers would not accept it.
    huge = LAYOUT_BUG.replace("torch.randn(4, 6, generator=g)", "torch.randn(4, 6, generator=g) * 1e30").replace(
        "x * 2 + 1e-3", "x * 2.002")
    assert "2.002" in huge
    result = run_harness(HarnessSpec(api="planted.huge", input_source="code", code=huge,
                                     test_mode="layout:noncontiguous"), max_executions=3, workdir=tmp_path)
    assert result.verdict == "suspicious" and "extreme magnitude" in result.reason
    # A test mode that turns NaN into inf on NaN inputs: which non-finite value is "right" is moot.
    nan_class = '''
def make_inputs(seed):
    return (torch.tensor([1.0, float("nan"), 2.0]),), {}

def target(x):
    y = x * 2
    if not x.is_contiguous():
        y = torch.where(y.isnan(), torch.full_like(y, float("inf")), y)
    return y
'''
    moot = run_harness(HarnessSpec(api="planted.nan_class", input_source="code", code=nan_class,
                                   test_mode="layout:noncontiguous"), max_executions=3, workdir=tmp_path)
    assert moot.verdict == "suspicious" and "NaN/Inf" in moot.reason
    # Dropping the NaN altogether is the real bug class (a max/min that silently drops NaN).
    dropped = nan_class.replace('float("inf")', "0.0")
    real = run_harness(HarnessSpec(api="planted.nan_drop", input_source="code", code=dropped,
                                   test_mode="layout:noncontiguous"), max_executions=3, workdir=tmp_path)
    assert real.verdict == "confirmed", real.reason


def test_nan_inf_shared_by_both_modes_is_not_a_mode_difference(tmp_path) -> None:
    # The float16 sum overflows in eager and in the strided layout alike: the pair agrees.
    code = '''
def make_inputs(seed):
    return (torch.full((64, 64), 30.0, dtype=torch.float16),), {}

def target(x):
    return x.sum() / x.numel()
'''
    result = run_harness(HarnessSpec(api="planted.mean_both", input_source="code", code=code, oracle="nan_inf",
                                     test_mode="layout:noncontiguous", kind="NaN_Inf"), max_executions=5,
                         workdir=tmp_path)
    assert result.verdict == "passed", result.reason


def test_nan_inf_on_extreme_magnitude_inputs_stays_suspicious(tmp_path) -> None:
    code = '''
def make_inputs(seed):
    return (torch.full((8,), 3e20),), {}

def target(x):
    return (x * x).sqrt()
'''
    result = run_harness(HarnessSpec(api="planted.square", input_source="code", code=code, oracle="nan_inf",
                                     kind="NaN_Inf"), max_executions=3, workdir=tmp_path)
    assert result.verdict == "suspicious" and "extreme magnitude" in result.reason


class _RaisesOnEveryInput:
    """A mutator that cannot edit any input it is given (as a value-filling edit on a quantized tensor)."""

    name = "raises"
    weight = 1.0

    def mutate(self, sample, gen):  # type: ignore[no-untyped-def]
        raise NotImplementedError("no kernel for this input")


def test_a_mutator_that_raises_does_not_apply_and_the_harness_goes_on(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Note [Mutators that raise]: the raising mutation is skipped (never recorded, so replays never meet it), the
    other mutators carry the run to a verdict, and the failures are counted in the evidence."""
    from fuzz_core.mutators import GaussianNoise

    spec = HarnessSpec(api="torch.sigmoid", test_mode="jit.trace", seed=4)
    recorded: list[dict] = []
    result = run_harness(spec, max_executions=120, workdir=tmp_path, progress=recorded.append,
                         mutators=[_RaisesOnEveryInput(), GaussianNoise()])
    assert result.verdict == "passed", result.reason
    assert result.executions == 120
    assert all(step[0] != "raises" for record in recorded for step in record["steps"])
    errors = result.evidence["mutator_errors"]
    assert set(errors) == {"raises: NotImplementedError"} and errors["raises: NotImplementedError"] > 0
