"""`variant:decomp`: the call against its torch._decomp decompositions (Note [An op against its own decomposition])."""

from __future__ import annotations

import pytest
import torch
from torch._decomp import decomposition_table

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.campaign import build_target_for
from fuzz_core.inputs import Sample
from fuzz_core.modes import NotApplicable, get_mode


def _run(api: str, sample: Sample):
    spec = HarnessSpec(api=api, test_mode="variant:decomp")
    return get_mode("variant:decomp").run(build_target_for(spec), sample)


def test_an_op_with_a_decomposition_runs_as_that_decomposition_and_agrees_to_rounding() -> None:
    x = torch.rand(1, 3, 10, 10, generator=torch.Generator().manual_seed(0))
    sample = Sample((x,), {"size": (1, 1), "mode": "bilinear", "align_corners": False})
    decomposed = _run("torch.nn.functional.interpolate", sample)
    kernel = torch.nn.functional.interpolate(x, (1, 1), mode="bilinear", align_corners=False)
    torch.testing.assert_close(decomposed, kernel)


def test_a_call_whose_ops_have_no_decomposition_is_not_applicable_and_names_them() -> None:
    with pytest.raises(NotApplicable, match=r"no op of this call has a decomposition.*aten\.mm"):
        _run("torch.mm", Sample((torch.ones(2, 3), torch.ones(3, 2))))


def test_views_are_never_decomposed_so_aliasing_survives() -> None:
    with pytest.raises(NotApplicable, match="no op of this call has a decomposition"):
        _run("torch.narrow", Sample((torch.arange(6.0), 0, 1, 3)))


def test_ops_that_draw_random_numbers_are_never_decomposed() -> None:
    with pytest.raises(NotApplicable, match="no op of this call has a decomposition"):
        _run("torch.bernoulli", Sample((torch.full((8,), 0.5),)))


def test_a_kernel_that_disagrees_with_its_decomposition_is_confirmed(monkeypatch) -> None:
    # a decomposition that drops a term stands for a kernel and a decomposition that disagree
    monkeypatch.setitem(decomposition_table, torch.ops.aten.sigmoid.default, lambda x: 1 / (2 + torch.exp(-x)))
    result = run_harness(HarnessSpec(api="torch.sigmoid", test_mode="variant:decomp", kind="Variant_Mismatch",
                                     max_executions=200, seed=3))
    assert result.verdict == "confirmed", result.reason


def test_a_decomposition_that_does_not_cover_the_case_leaves_it_to_the_kernel(monkeypatch) -> None:
    def uncovered(*args, **kwargs):
        raise NotImplementedError("this decomposition covers float64 only")

    monkeypatch.setitem(decomposition_table, torch.ops.aten.sigmoid.default, uncovered)
    with pytest.raises(NotApplicable, match=r"aten\.sigmoid"):
        _run("torch.sigmoid", Sample((torch.linspace(-2, 2, 5),)))


def test_an_agreeing_op_passes_on_compared_inputs() -> None:
    result = run_harness(HarnessSpec(api="torch.nn.functional.softplus", test_mode="variant:decomp",
                                     kind="Variant_Mismatch", max_executions=300, seed=1))
    assert result.verdict == "passed", result.reason
    assert result.evidence["compared"] >= 50


def test_the_repro_mode_source_computes_what_the_mode_runs() -> None:
    mode = get_mode("variant:decomp")
    namespace: dict = {"torch": torch}
    exec(compile(mode.repro_source(), "repro_mode.py", "exec"), namespace)  # noqa: S102 - our own template
    x = torch.linspace(-3, 3, 7).reshape(1, 7)
    expected = _run("torch.nn.functional.layer_norm", Sample((x, (7,))))
    got = namespace["run_mode"](torch.nn.functional.layer_norm, (x, (7,)), {})
    assert torch.equal(got, expected)
