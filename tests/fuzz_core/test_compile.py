"""torch.compile through the worker pool: a wrong backend is confirmed, an honest op is not (few, slow)."""

from __future__ import annotations

import pytest
import torch

from fuzz_core import HarnessSpec, WorkerPool

WRONG_BACKEND = '''
def _wrong_backend(gm, example_inputs):
    def run(*args):
        out = gm(*args)
        # Deliberately wrong: shift every floating output by 1e-2.
        if isinstance(out, (tuple, list)):
            return type(out)(o + 1e-2 if o.is_floating_point() else o for o in out)
        return out + 1e-2
    return run

torch._dynamo.register_backend(name="tf_wrong_backend")(_wrong_backend)

def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(4, 5, generator=g),), {}

def target(x):
    return torch.sin(x) * 2
'''


@pytest.mark.compile
def test_wrong_compile_backend_is_confirmed_and_honest_inductor_is_not(tmp_path) -> None:
    with WorkerPool(1, task_timeout_s=240, preload_opinfo=False, workdir=tmp_path) as pool:
        wrong = pool.submit(HarnessSpec(api="planted.sin", input_source="code", code=WRONG_BACKEND,
                                        test_mode="compile:tf_wrong_backend", kind="Compile_Eager_Mismatch"),
                            max_executions=5).result()
        honest = pool.submit(HarnessSpec(api="planted.sin", input_source="code", code=WRONG_BACKEND,
                                         test_mode="compile:inductor"), max_executions=4).result()
    assert wrong.verdict == "confirmed", wrong.reason
    ev = wrong.evidence
    assert ev["max_abs_diff"] == pytest.approx(1e-2, rel=1e-3)
    assert ev["backend_ablation"]["tf_wrong_backend"] == "differs"
    assert ev["backend_ablation"]["inductor"] == "matches" and ev["backend_ablation"]["eager"] == "matches"
    assert ev["config"]["inductor.fallback_random"] is True
    assert honest.verdict == "passed", honest.reason
    assert honest.evidence["compiled"]["compiled_calls"] == honest.evidence["compared"]


@pytest.mark.compile
def test_cached_compiled_callable_sees_each_new_input() -> None:
    # Regression: a wrapper holding the first call's tensors made dynamo return stale results later
    # (Note [Stale closure tensors] in fuzz_core/modes/compile.py).
    import torch

    from fuzz_core.inputs import Sample
    from fuzz_core.modes import get_mode
    from fuzz_core.target import build_target

    mode, target = get_mode("compile:eager"), build_target("torch.add")
    first = Sample(args=(torch.ones(3), torch.ones(3)), kwargs={"alpha": 2})
    second = Sample(args=(torch.full((3,), 5.0), torch.full((3,), 7.0)), kwargs={"alpha": 2})
    assert torch.equal(mode.run(target, first), torch.full((3,), 3.0))
    assert torch.equal(mode.run(target, second), torch.full((3,), 19.0))


@pytest.mark.compile
def test_a_compiled_callable_is_reused_for_value_mutations(tmp_path) -> None:
    """Compile once, run many: most inputs reuse compiled code; compile time is booked apart."""
    from fuzz_core import run_harness

    spec = HarnessSpec(api="torch.sigmoid", test_mode="compile:inductor", seed=1)
    result = run_harness(spec, max_executions=300, workdir=tmp_path)  # work bounded by inputs, not a time budget
    assert result.verdict == "passed", result.reason
    ev = result.evidence
    assert result.executions == 300 and result.exit_reason == "max_executions"
    assert 1 <= ev["compiles"] < result.executions / 20
    assert ev["compile_s"] > 0 and ev["execute_s"] > 0
    assert ev["compile_s"] + ev["execute_s"] <= result.elapsed_s
    # dynamo's own counters for this harness say the same: few frames converted, every call ran compiled code
    compiled = ev["compiled"]
    assert compiled["frames_total"] == ev["compiles"] and 1 <= compiled["graphs"] <= compiled["frames_total"]
    assert compiled["compiled_calls"] == compiled["calls"] >= result.executions
    assert compiled["graph_breaks"] == 0 and compiled["not_compiled_calls"] == 0


@pytest.mark.compile
def test_a_compilation_longer_than_the_budget_still_reaches_the_minimum_inputs(tmp_path, monkeypatch) -> None:
    """The overrun counts from the end of the compilation and stops at the minimum. Its length is widened here so
    that how busy the machine is decides nothing (no wall-clock threshold in a test)."""
    from fuzz_core import campaign, run_harness

    monkeypatch.setattr(campaign, "MIN_INPUTS_OVERRUN_S", 300.0)
    spec = HarnessSpec(api="torch.tanh", test_mode="compile:inductor", seed=2)
    result = run_harness(spec, budget_s=0.05, workdir=tmp_path, min_inputs=50)
    assert result.evidence["compile_s"] > 0.05  # the first compilation alone outlasts the budget
    assert result.verdict == "passed", result.reason
    assert result.evidence["compared"] == 50  # past the budget, the loop stops once the minimum is reached


@pytest.mark.compile
def test_what_a_compilation_leaves_is_frozen_for_the_loop_and_released_after_it(tmp_path) -> None:
    """Note [Compiled objects and the collector]: the collector's full passes skip the compiled objects while the
    harness runs (no stall in the loop) and see them again once it returns."""
    import gc

    from fuzz_core import run_harness

    torch._dynamo.reset()  # the graphs earlier tests compiled for tanh would spare this harness its compilation
    frozen: list[int] = []
    spec = HarnessSpec(api="torch.tanh", test_mode="compile:inductor", seed=3)
    result = run_harness(spec, max_executions=20, workdir=tmp_path,
                         progress=lambda _: frozen.append(gc.get_freeze_count()))
    assert result.verdict == "passed", result.reason
    assert frozen[0] == 0 and frozen[-1] > 10_000, frozen[:3] + frozen[-3:]
    assert gc.get_freeze_count() == 0


SKIPPED_FRAME = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(4, 5, generator=g),), {}

@torch._dynamo.disable
def target(x):
    return torch.sin(x) * 2
'''


@pytest.mark.compile
@pytest.mark.parametrize("mode", ["compile:inductor", "grad:compile:inductor"])
def test_a_target_dynamo_skips_is_not_compiled_never_passed(mode: str, tmp_path) -> None:
    """Note [Proof of compilation]: eager against an eager run under torch.compile compares nothing."""
    from fuzz_core import run_harness

    spec = HarnessSpec(api="planted.skipped", input_source="code", code=SKIPPED_FRAME, test_mode=mode)
    result = run_harness(spec, max_executions=8, workdir=tmp_path)
    assert result.verdict == "not_applicable", result.reason
    assert result.reason.startswith("not compiled: dynamo ran the target outside compiled graphs (graph break: "
                                    "Skip calling `torch.compiler.disable()`d function)"), result.reason
    compiled = result.evidence["compiled"]
    assert compiled["calls"] >= 1 and compiled["compiled_calls"] == 0 and compiled["graph_ops"] == 0
    assert compiled["not_compiled_calls"] == compiled["calls"] and compiled["graph_breaks"] >= 1
    assert result.evidence["compared"] == 0


@pytest.mark.compile
def test_each_compiled_mode_books_its_own_conversions_only() -> None:
    """Note [Counters per call]: a call books dynamo's counters only when it converted a frame, against the counters
    as they were before it, so conversions by another compiled callable in between are not booked to this one."""
    import torch
    from torch._dynamo.utils import counters

    from fuzz_core.inputs import Sample
    from fuzz_core.modes import get_mode
    from fuzz_core.target import build_target

    first, second = get_mode("compile:eager"), get_mode("compile:eager")
    sin, cos = build_target("torch.sin"), build_target("torch.cos")
    start = counters["frames"]["total"], counters["stats"]["unique_graphs"]
    for n in (3, 3, 4, 3, 5, 5):
        first.run(sin, Sample(args=(torch.ones(n),)))
        second.run(cos, Sample(args=(torch.ones(n, 2),)))
        torch.compile(torch.tan, backend="eager")(torch.ones(n + 7))  # conversions neither mode made
    frames = counters["frames"]["total"] - start[0]
    for mode in (first, second):
        record = mode.record.to_dict()
        assert record["calls"] == record["compiled_calls"] == 6
        assert record["frames_total"] == mode.compiles >= 1 and 1 <= record["graphs"] <= record["frames_total"]
        assert record["ops"] == {("torch.sin" if mode is first else "torch.cos"): 6}
    assert first.record.frames_total + second.record.frames_total < frames  # tan's own were not booked
    assert counters["stats"]["unique_graphs"] - start[1] >= first.record.graphs + second.record.graphs


@pytest.mark.compile
def test_inputs_the_reference_rejects_book_no_compilation(tmp_path, monkeypatch) -> None:
    """An input the reference rejects never reaches the compiled mode, so it compiles nothing: the harness's
    compilations are dynamo's converted frames, however many inputs the reference turned away. New shapes are
    always admitted here (COMPILE_SHARE 1), so the inputs do not depend on how long compilations take."""
    from fuzz_core import campaign, run_harness

    monkeypatch.setattr(campaign, "COMPILE_SHARE", 1.0)

    tensor = {"kind": "tensor", "tensor": {"shape": [4, 4]}}
    spec = HarnessSpec(api="torch.add", input_source="described", inputs={"args": [tensor, tensor]},
                       test_mode="compile:eager", seed=3)
    result = run_harness(spec, max_executions=600, workdir=tmp_path)
    ev = result.evidence
    assert ev["invalid_inputs"] > 0, "the shape mutators gave no pair of shapes add rejects"
    assert ev["compiles"] == ev["compiled"]["frames_total"]
