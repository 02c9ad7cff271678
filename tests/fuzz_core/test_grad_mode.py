"""Gradient modes: analytic reverse mode against float64 central differences, and compiled backward."""

from __future__ import annotations

import pytest
import torch

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.inputs import Sample
from fuzz_core.kinds import KIND_MODE_PAIRS
from fuzz_core.modes import NotApplicable, get_mode
from fuzz_core.modes.device import DeviceMode
from fuzz_core.modes.grad import (
    GradMode,
    NonDifferentiable,
    gradient_reference,
    index_like_positions,
    numeric_gradients,
    smoothness,
)
from fuzz_core.target import build_target
from tests.fuzz_core.planted import WRONG_SQUARE_BACKWARD

# A planted wrong backward with its inputs: d(x*x)/dx is 2x, the Function says 2.01x (a certain positive).
WRONG_SQUARE = WRONG_SQUARE_BACKWARD + '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(3, 4, generator=g),), {}
'''

# torch.prod's backward has a separate path for inputs containing zeros (one zero, several zeros).
PROD_WITH_ZEROS = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 4, generator=g)
    x[0, 1] = 0.0
    x[2, 0] = 0.0
    x[2, 3] = 0.0
    return (x,), {"dim": 1}
'''


def test_gradient_kind_compares_analytic_with_numeric() -> None:
    assert KIND_MODE_PAIRS["Gradient_Mismatch"] == ("grad:numeric", "grad")


def test_planted_wrong_backward_is_confirmed(tmp_path) -> None:
    spec = HarnessSpec(api="planted.wrong_square", input_source="code", code=WRONG_SQUARE,
                       reference_mode="grad:numeric", test_mode="grad", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=10, workdir=tmp_path)
    assert result.verdict == "confirmed", result.reason
    assert result.evidence["test_error_vs_fp64"] > 100 * result.evidence["ref_error_vs_fp64"]


def test_prod_gradient_with_zeros_matches_numeric(tmp_path) -> None:
    spec = HarnessSpec(api="torch.prod", input_source="code", code=PROD_WITH_ZEROS, reference_mode="grad:numeric",
                       test_mode="grad", kind="Gradient_Mismatch", max_executions=12)
    result = run_harness(spec, max_executions=12, workdir=tmp_path)
    assert result.verdict == "passed", result.reason


def test_numeric_gradient_is_gradchecks_central_difference() -> None:
    target = build_target("torch.sin")
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64)
    (numeric,) = numeric_gradients(target, Sample(args=(x,)), strict=True)
    (analytic,) = get_mode("grad").run(target, Sample(args=(x,)))
    torch.testing.assert_close(numeric, analytic, rtol=1e-3, atol=1e-5)


def test_kink_rejects_the_input_as_mode_but_gives_a_subgradient_as_reference() -> None:
    target = build_target("torch.abs")
    sample = Sample(args=(torch.tensor([0.0, 1.0]),))
    with pytest.raises(NonDifferentiable):
        numeric_gradients(target, sample, strict=True)
    (lenient,) = numeric_gradients(target, sample, strict=False)
    assert torch.isfinite(lenient).all()


@pytest.mark.compile
def test_compiled_backward_of_prod_agrees_with_eager(tmp_path) -> None:
    spec = HarnessSpec(api="torch.prod", input_source="code", code=PROD_WITH_ZEROS, reference_mode="grad",
                       test_mode="grad:compile:inductor", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=6, workdir=tmp_path)
    assert result.verdict == "passed", result.reason


def test_numeric_gradient_refuses_a_step_float64_cannot_resolve() -> None:
    # One element near 3.7e19 makes l1_loss's mean ~1e19: a 1e-6 step on any element is rounding noise.
    target = build_target("torch.nn.functional.l1_loss")
    x = torch.tensor([0.5, -1.0, 3.7e19], dtype=torch.float64)
    sample = Sample(args=(x, torch.zeros(3, dtype=torch.float64)))
    for strict in (True, False):
        with pytest.raises(NonDifferentiable, match="cannot resolve"):
            numeric_gradients(target, sample, strict=strict)
    ordinary = Sample(args=(torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64), torch.zeros(3, dtype=torch.float64)))
    numeric = numeric_gradients(target, ordinary, strict=True)
    analytic = get_mode("grad").run(target, ordinary)
    torch.testing.assert_close(numeric, analytic, rtol=1e-3, atol=1e-5)


def test_graph_building_modes_run_without_op_coverage_dispatch(tmp_path) -> None:
    # A TorchDispatchMode around jit.trace breaks the trace (`_local_scalar_dense` on an int): the
    # campaign records op coverage only where the mode runs op by op.
    assert get_mode("eager").dispatch_observable and get_mode("dtype:float16").dispatch_observable
    assert not get_mode("jit.trace").dispatch_observable and not get_mode("compile:inductor").dispatch_observable
    assert not get_mode("grad:compile:inductor").dispatch_observable
    spec = HarnessSpec(api="torch.add", test_mode="jit.trace")
    result = run_harness(spec, max_executions=20, workdir=tmp_path, instrument="op")
    assert result.verdict == "passed", result.reason


def test_numeric_gradient_refuses_a_step_that_leaves_the_domain() -> None:
    # kl_div's target at the smallest normal float64: target - eps is negative, log of it is nan, so the
    # central difference is nan where the analytic gradient is exact (a false "NaN vs finite" otherwise).
    target = build_target("torch.nn.functional.kl_div")
    x = torch.tensor([-3.7, 0.5], dtype=torch.float64)
    y = torch.tensor([2.2250738585072014e-308, 0.25], dtype=torch.float64)
    sample = Sample(args=(x, y), kwargs={"reduction": "sum"})
    for strict in (True, False):
        with pytest.raises(NonDifferentiable, match="leaves the function's domain"):
            numeric_gradients(target, sample, strict=strict)


def test_numeric_gradient_divides_by_the_step_float64_really_took() -> None:
    # At 5e7 the float64 ulp is 7.45e-9, so x + 1e-6 is off by up to 0.4 % of the step: dividing by the
    # nominal 2e-6 gave a gradient 0.0014 off for multilabel_margin_loss (a false confirmation).
    target = build_target("torch.sub")
    x = torch.tensor([5.03316e7, -3.0, 5.03316e7 + 1], dtype=torch.float64)
    y = x - torch.tensor([0.5, 0.25, 1.5], dtype=torch.float64)  # small outputs: only the inputs are large
    numeric = numeric_gradients(target, Sample(args=(x, y)), strict=True)
    analytic = get_mode("grad").run(target, Sample(args=(x, y)))
    torch.testing.assert_close(numeric[0], analytic[0], rtol=1e-7, atol=1e-9)


# -- Note [Numeric gradients are defined only where they are defined] / Note [Gradient fp64 reference] ----------
def test_numeric_gradient_refuses_an_infinite_input() -> None:
    # x + eps is x at ±inf: the difference is 0/0, never evidence against autograd.
    target = build_target("torch.mul")
    x = torch.tensor([1.0, float("inf"), -2.0], dtype=torch.float64)
    with pytest.raises(NonDifferentiable, match="±inf/NaN"):
        numeric_gradients(target, Sample(args=(x, torch.ones(3, dtype=torch.float64))), strict=True)


def test_numeric_gradient_refuses_a_nan_input_that_the_output_masks() -> None:
    # masked_fill overwrites the NaN, so the output is finite, yet no difference is defined at the NaN element.
    target = build_target("torch.masked_fill")
    x = torch.tensor([float("nan"), 0.5, -1.5], dtype=torch.float64)
    mask = torch.tensor([True, False, False])
    with pytest.raises(NonDifferentiable):
        numeric_gradients(target, Sample(args=(x, mask, 2.0)), strict=False)


def test_reference_is_float64_autograd_where_differences_are_undefined() -> None:
    target = build_target("torch.gather")
    x = torch.tensor([[1.0, float("inf")], [0.5, -2.0]])
    index = torch.tensor([[0, 0], [1, 0]])
    reference = gradient_reference(target, Sample(args=(x, 1, index)))
    assert reference.basis == "float64 autograd"
    assert "±inf/NaN" in reference.detail
    (grad,) = reference.grads
    assert grad.dtype == torch.float64 and bool(torch.isfinite(grad).all())


def test_reference_is_float64_autograd_where_both_sides_agree() -> None:
    target = build_target("torch.sin")
    reference = gradient_reference(target, Sample(args=(torch.tensor([0.3, -1.2, 2.0]),)))
    assert reference.basis == "float64 autograd"
    assert "agree" in reference.detail


def test_central_differences_arbitrate_a_wrong_backward_at_a_smooth_point() -> None:
    target = build_target("planted.wrong_square", WRONG_SQUARE)
    x = torch.tensor([0.7, -1.3, 2.1])
    reference = gradient_reference(target, Sample(args=(x,)))
    assert reference.basis == "float64 central differences"
    torch.testing.assert_close(reference.grads[0], 2 * x.double() * _cotangent_of(x), rtol=1e-6, atol=1e-6)


def test_forward_mode_finds_a_kink_between_neighbours() -> None:
    # abs at 1e-6 from its kink: the neighbours at ±1e-4 lie on both sides, so no smooth point to judge at.
    target = build_target("torch.abs")
    smooth, _, words = smoothness(target, Sample(args=(torch.tensor([1e-6], dtype=torch.float64),)), frozenset())
    assert smooth is False and "kink" in words
    smooth, _, _ = smoothness(target, Sample(args=(torch.tensor([0.5], dtype=torch.float64),)), frozenset())
    assert smooth is True


def test_index_and_mask_arguments_are_never_differentiated() -> None:
    # A floating `index` argument selects positions: it gets no gradient slot in any gradient mode.
    code = '''
def target(x, index):
    return x[index.long()] * 3.0

def make_inputs(seed):
    return (torch.tensor([1.0, 2.0, 3.0]),), {"index": torch.tensor([2.0, 0.0])}
'''
    target = build_target("planted.float_index", code)
    sample = Sample(args=(torch.tensor([1.0, 2.0, 3.0]),), kwargs={"index": torch.tensor([2.0, 0.0])})
    assert index_like_positions(target, sample) == frozenset({1})
    assert len(get_mode("grad").run(target, sample)) == 1
    assert len(get_mode("grad:numeric").run(target, sample)) == 1


def test_gradient_at_an_infinite_input_is_never_confirmed(tmp_path) -> None:
    # index_select's backward at a row holding -inf: autograd is finite and right, differences are undefined.
    code = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 4, generator=g)
    x[1, 2] = float("-inf")
    return (x, 0, torch.tensor([0, 0, 2])), {}
'''
    spec = HarnessSpec(api="torch.index_select", input_source="code", code=code, reference_mode="grad:numeric",
                       test_mode="grad", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=20, workdir=tmp_path, instrument="none")
    assert result.verdict != "confirmed", result.reason


def _cotangent_of(x: torch.Tensor) -> torch.Tensor:
    from fuzz_core.modes.grad import COTANGENT_SEED

    return torch.randn(x.shape, generator=torch.Generator().manual_seed(COTANGENT_SEED), dtype=torch.float64)


def test_an_op_without_a_backward_formula_is_not_applicable(tmp_path) -> None:
    # torch.unique has no derivative: autograd raising there says nothing about a bug.
    code = '''
def make_inputs(seed):
    return (torch.tensor([3.0, 1.0, 2.5, 2.0]),), {}
'''
    spec = HarnessSpec(api="torch.unique", input_source="code", code=code, reference_mode="grad:numeric",
                       test_mode="grad", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=5, workdir=tmp_path, instrument="none")
    assert result.verdict == "not_applicable", result.reason
    assert "derivative" in result.reason


def test_an_argument_without_a_gradient_is_not_applicable(tmp_path) -> None:
    # soft_margin_loss has no gradient for its target: autograd refusing it there says nothing about a bug.
    code = '''
def make_inputs(seed):
    return (torch.tensor([0.3, -1.2, 2.0]), torch.tensor([1.0, -1.0, 1.0])), {}
'''
    spec = HarnessSpec(api="torch.nn.functional.soft_margin_loss", input_source="code", code=code,
                       reference_mode="grad:numeric", test_mode="grad", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=5, workdir=tmp_path, instrument="none")
    assert result.verdict == "not_applicable", result.reason
    assert "not differentiable with respect to argument 'target'" in result.reason


def test_gradient_on_a_device_is_not_applicable_without_cuda() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    mode = get_mode("grad:device:cuda")
    sample = Sample(args=(torch.randn(3),))
    with pytest.raises(NotApplicable, match="CUDA is not available"):
        mode.check(build_target("torch.sin"), sample)


def test_gradients_flow_back_through_the_device_copies() -> None:
    # The mode's plumbing, run with the CPU standing in for the device: the inputs are moved and the outputs
    # moved back by differentiable copies, so the gradients are plain autograd's.
    mode = GradMode(name="grad:device:cpu")
    mode.inner = DeviceMode(name="device:cpu")
    target = build_target("torch.nn.functional.softplus")
    sample = Sample(args=(torch.randn(4, 3, generator=torch.Generator().manual_seed(1)),), kwargs={"beta": 2.0})
    torch.testing.assert_close(mode.run(target, sample), get_mode("grad").run(target, sample), rtol=0, atol=0)


def test_gradient_on_a_device_repro_runs_the_forward_there_and_matches_autograd() -> None:
    mode = GradMode(name="grad:device:cpu")
    mode.inner = DeviceMode(name="device:cpu")
    source = mode.repro_source()
    assert "copy.deepcopy(fn).to('cpu')" in source and "t.to('cpu')" in source
    namespace: dict = {"torch": torch}
    exec(compile(source, "<repro>", "exec"), namespace)  # our own generated source, as a repro file runs it
    x = torch.randn(5, generator=torch.Generator().manual_seed(2))
    layer = torch.nn.Linear(5, 2)
    expected = get_mode("grad").run(build_target("torch.sin"), Sample(args=(x,)))
    torch.testing.assert_close(namespace["run_mode"](torch.sin, (x,), {}), expected, rtol=0, atol=0)
    (through_module,) = namespace["run_mode"](layer, (x,), {})
    assert through_module.shape == x.shape and torch.isfinite(through_module).all()


@pytest.mark.cuda
def test_gradient_on_cuda_harness_agrees_with_the_cpu(tmp_path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("torch.cuda.is_available() is False: no CUDA device (or a CPU-only torch) on this machine")
    spec = HarnessSpec(api="torch.prod", input_source="code", code=PROD_WITH_ZEROS, reference_mode="grad",
                       test_mode="grad:device:cuda", kind="Gradient_Mismatch")
    result = run_harness(spec, max_executions=12, workdir=tmp_path)
    assert result.verdict in ("passed", "suspicious", "confirmed"), result.reason
    assert "CUDA is not available" not in result.reason and result.executions >= 1
