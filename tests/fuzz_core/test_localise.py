"""Localisation names the planted faulty op / module / compile stage."""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Iterator

import pytest
import torch
from torch import nn
from torch.utils._pytree import tree_map

from fuzz_core.localise import (
    bisect_compile_backends,
    first_divergent_module,
    first_divergent_op,
    tensor_difference,
)


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), nn.Linear(16, 4), nn.Tanh()).eval()


@contextlib.contextmanager
def faulty_sigmoid_kernel() -> Iterator[None]:
    """Replace the CPU kernel of aten::sigmoid with one that is off by 1e-3 (the planted bug)."""

    def wrong_sigmoid(t: torch.Tensor) -> torch.Tensor:
        return 1.0 / (1.0 + torch.exp(-t)) + 1e-3

    lib = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
        lib.impl("sigmoid", wrong_sigmoid, "CPU")
    try:
        yield
    finally:
        lib._destroy()


def test_first_divergent_op_names_the_planted_kernel() -> None:
    model = _model()
    x = torch.randn(3, 8)

    def faulty_mode(inp: torch.Tensor) -> torch.Tensor:
        with faulty_sigmoid_kernel():
            return model(inp)

    div = first_divergent_op(model, faulty_mode, (x,))
    assert div is not None
    assert div.name == "aten.sigmoid.default"
    assert div.introduced is True  # its inputs (the first addmm) still agreed
    assert div.max_abs_diff == pytest.approx(1e-3, rel=1e-2)
    assert torch.sigmoid(torch.zeros(1)).item() == 0.5  # the real kernel is back


def test_first_divergent_module_names_the_planted_module() -> None:
    model = _model()
    broken = copy.deepcopy(model)
    with torch.no_grad():
        broken[2].weight[0, 0] += 0.5  # a "new version" that changed one layer
    div = first_divergent_module(model, broken, (torch.randn(3, 8),))
    assert div is not None and div.name == "2" and div.module_type == "Linear"


def test_identical_modes_have_no_divergence() -> None:
    model = _model()
    x = torch.randn(3, 8)
    assert first_divergent_op(model, copy.deepcopy(model), (x,)) is None
    assert first_divergent_module(model, copy.deepcopy(model), (x,)) is None


def test_half_precision_divergence_starts_at_the_first_linear() -> None:
    model = _model()
    x = torch.randn(3, 8)
    half = copy.deepcopy(model).half()
    mod = first_divergent_module(model, half, (x,), (x.half(),))
    op = first_divergent_op(model, half, (x,), (x.half(),))
    assert mod is not None and mod.name == "0"
    # The cast of x is ignored in alignment; the first computing op is the addmm.
    assert op is not None and op.name == "aten.addmm.default" and op.introduced is True


def test_tensor_difference_nan_equal_and_tolerance() -> None:
    nan = float("nan")
    assert not tensor_difference(torch.tensor([nan, 1.0]), torch.tensor([nan, 1.0]))[0]
    assert tensor_difference(torch.tensor([1.0]), torch.tensor([1.001]))[0]
    assert not tensor_difference(torch.tensor([1.0]), torch.tensor([1.0]).half())[0]
    assert tensor_difference(torch.tensor([1.0]), torch.tensor([1.0, 2.0]))[0]


@pytest.mark.compile
def test_backend_bisection_names_the_stage_that_introduces_the_difference() -> None:
    def add_bias_backend(gm: torch.fx.GraphModule, example_inputs: list) -> object:
        def run(*args: object) -> object:
            return tree_map(lambda t: t + 1e-2 if isinstance(t, torch.Tensor) else t, gm(*args))

        return run

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x) * 2.0

    x = torch.randn(4, 4)
    result = bisect_compile_backends(
        fn, (x,), backends=("eager", "aot_eager", ("planted", add_bias_backend)))
    assert result.per_backend == {"eager": False, "aot_eager": False, "planted": True}
    assert result.first_bad_backend == "planted"


def test_localise_modes_names_the_op_for_fuzz_core_modes() -> None:
    from fuzz_core.inputs import Sample
    from fuzz_core.localise import localise_modes
    from fuzz_core.modes import get_mode
    from fuzz_core.target import build_target

    target = build_target("torch.nn.functional.gelu")
    sample = Sample(args=(torch.linspace(-3.0, 3.0, 64),))
    evidence = localise_modes(get_mode("eager"), get_mode("dtype:float16"), target, sample)
    assert evidence["first_divergent_op"]["name"] == "aten.gelu.default"
    same = localise_modes(get_mode("eager"), get_mode("eager"), target, sample)
    assert same["first_divergent_op"] is None


@pytest.mark.compile
def test_localise_modes_bisects_compile_modes_up_to_their_backend() -> None:
    from fuzz_core.inputs import Sample
    from fuzz_core.localise import localise_modes
    from fuzz_core.modes import get_mode
    from fuzz_core.target import build_target

    target = build_target("torch.nn.functional.gelu")
    sample = Sample(args=(torch.linspace(-3.0, 3.0, 64),))
    evidence = localise_modes(get_mode("eager"), get_mode("compile:aot_eager"), target, sample)
    bisection = evidence["backend_bisection"]
    assert bisection["per_backend"] == {"eager": False, "aot_eager": False}  # an honest negative
    assert bisection["first_bad_backend"] is None


@pytest.mark.compile
@pytest.mark.slow
def test_compiler_bisector_agrees_on_the_decomposition_that_changes_bits() -> None:
    # Not a bug claim: softmax's decomposition legitimately changes the last bits. Asking for
    # bitwise equality turns that into a known, planted "difference" both bisections must find.
    from fuzz_core.localise import run_compiler_bisector

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * 3.0, dim=-1).sum(dim=-1)

    def bitwise(ref: object, out: object) -> bool:
        return not torch.equal(ref, out)

    x = torch.randn(16, 500, generator=torch.Generator().manual_seed(0))
    stages = ("eager", "aot_eager", "aot_eager_decomp_partition")
    result = bisect_compile_backends(fn, (x,), backends=stages, differs=bitwise)
    assert result.first_bad_backend == "aot_eager_decomp_partition"
    found = run_compiler_bisector(fn, (x,), bitwise)
    assert found is not None
    assert found["backend"] == "aot_eager_decomp_partition" and found["subsystem"] == "decomposition"
    assert "_softmax" in found["debug_info"]
