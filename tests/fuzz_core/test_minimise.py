"""The shrinker: smaller while the predicate holds, never worse than the start, stops on its budget; and in a real worker."""

from __future__ import annotations

import torch

from fuzz_core import HarnessSpec, WorkerPool
from fuzz_core.inputs import Sample
from fuzz_core.minimise import EXIT_TRIES, minimise, size_key
from fuzz_core.tensors import tensor_leaves


# lp_pool1d(x, norm_type=4, kernel_size=1) on a (2, 8) input with values in [-30, 30]: the output is |x| per element.
LP_POOL_INPUTS = {"args": [{"kind": "tensor", "tensor": {"shape": [2, 8], "low": -30.0, "high": 30.0}},
                           {"kind": "float", "value": 4.0}, {"kind": "int", "value": 1}]}


def _has_negative(sample: Sample) -> bool:
    return bool((sample.args[0] < 0).any())


def test_shrinks_to_one_simple_element_that_still_fails() -> None:
    x = torch.tensor([[0.37, 5.25, -2.71828, 9.5], [1.5, 2.5, 3.5, 4.5]])
    smallest, stats = minimise(Sample((x,)), _has_negative, budget_s=30)
    (t,) = tensor_leaves(smallest.tree())
    assert _has_negative(smallest)
    assert t.numel() == 1 and stats.elements_before == 8 and stats.elements_after == 1
    assert t.item() == -1.0  # -2.71828 → -3 (an integer) → -1 (toward zero); 0 and 1 do not fail
    assert stats.dims_after < stats.dims_before


def test_empty_tensor_shrinks_to_one_empty_dimension() -> None:
    # No element to drop, yet (5, 5, 0) is not the simplest empty input: its extents and dimensions go.
    smallest, stats = minimise(Sample((torch.empty(5, 5, 0),)), lambda s: s.args[0].numel() == 0, budget_s=30)
    assert tuple(smallest.args[0].shape) == (0,)
    assert (stats.dims_before, stats.dims_after) == (3, 1) and stats.elements_after == 0


def test_never_accepts_a_candidate_the_predicate_rejects() -> None:
    x = torch.arange(6.0).reshape(2, 3) + 0.5
    start = Sample((x,), {"dim": 1})
    smallest, stats = minimise(start, lambda s: bool((s.args[0] > 5).any()) and "dim" in s.kwargs, budget_s=30)
    assert "dim" in smallest.kwargs and bool((smallest.args[0] > 5).any())
    assert size_key(smallest) < size_key(start) and stats.accepted >= 1


def test_stops_at_its_predicate_budget() -> None:
    calls = []

    def fails(sample: Sample) -> bool:
        calls.append(sample)
        return True

    _, stats = minimise(Sample((torch.randn(16, 16),)), fails, budget_s=60, max_tries=3)
    assert len(calls) == 3 and stats.exit_reason == EXIT_TRIES


def test_worker_minimises_a_confirmed_finding_and_writes_a_short_repro_that_exits_1(tmp_path) -> None:
    # float16 lp_pool1d with norm_type=4 raises x to the 4th power in float16: |x| >= 16 gives x**4 > 65504, so it
    # returns inf where float32 and float64 give |x| (at most 30, far inside float16's range): a real, confirmed
    # finding. (logit with eps=1e-6 is no longer one: 1 - 1e-6 rounds to 1 in float16, docs/verdicts.md.)
    spec = HarnessSpec(api="torch.nn.functional.lp_pool1d", reference_mode="eager", test_mode="dtype:float16",
                       input_source="described", inputs=LP_POOL_INPUTS, oracle="nan_inf", seed=1776983066,
                       kind="Precision_Mismatch")
    with WorkerPool(1, task_timeout_s=300, workdir=tmp_path, minimise_s=20.0) as pool:
        result = pool.submit(spec, budget_s=60).result()
    assert result.verdict == "confirmed", result.reason
    minimised = result.evidence["minimised"]
    shrink = minimised["shrink"]
    assert shrink["elements_after"] < shrink["elements_before"]
    assert minimised["short_repro_exit"] == 1, minimised.get("short_repro_output")
    assert minimised["short_repro_lines"] <= 22
    assert minimised["inputs_path"] != result.evidence["original"]["inputs_path"]  # stored beside the original
    assert result.evidence["inputs_path"] == minimised["inputs_path"]  # Note [One input per finding]
