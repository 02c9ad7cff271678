"""After minimisation a finding shows one input: reason, figures, checks, repro and outputs of the smallest input."""

from __future__ import annotations

import pytest

from fuzz_core import HarnessSpec, run_harness
from fuzz_core.minimise_finding import minimise_result
from fuzz_core.result import HarnessResult
from fuzz_core.saved_inputs import load_inputs
from fuzz_core.saved_outputs import load_outputs

# The non-contiguous path adds 1 wherever x > 3: 35 of the 48 seed elements differ; far fewer after shrinking.
THRESHOLD = '''
def make_inputs(seed):
    return (torch.arange(48, dtype=torch.float32).reshape(4, 12) / 4,), {}

def target(x):
    out = x * 2
    if not x.is_contiguous():
        out = torch.where(x > 3.0, x * 2 + 1.0, out)
    return out
'''


@pytest.fixture(scope="module")
def minimised(tmp_path_factory: pytest.TempPathFactory) -> HarnessResult:
    work = tmp_path_factory.mktemp("work")
    spec = HarnessSpec(api="planted.threshold", input_source="code", code=THRESHOLD, test_mode="layout:noncontiguous")
    result = run_harness(spec, max_executions=1, workdir=work, instrument="none")
    assert result.verdict == "confirmed", result.reason
    return minimise_result(spec, result, work, budget_s=30)


def _smallest(result: HarnessResult):  # type: ignore[no-untyped-def]
    (x,) = load_inputs(result.evidence["inputs_path"])["args"]
    return x


def test_the_finding_adopts_the_smallest_input(minimised: HarnessResult) -> None:
    assert minimised.evidence["minimised"]["adopted"] is True
    assert minimised.evidence["inputs_path"] == minimised.evidence["minimised"]["inputs_path"]
    assert _smallest(minimised).numel() < 48


def test_the_reason_quotes_the_smallest_input(minimised: HarnessResult) -> None:
    x = _smallest(minimised)
    differing = int((x > 3.0).sum())
    assert f"({differing} of {x.numel()} elements differ" in minimised.reason
    assert minimised.evidence["mismatch_count"] == differing


def test_first_index_is_a_differing_element_of_the_smallest_output(minimised: HarnessResult) -> None:
    x = _smallest(minimised)
    index = minimised.evidence["first_index"]
    assert len(index) == x.dim()
    assert float(x[tuple(index)]) > 3.0


def test_the_plot_outputs_are_those_of_the_smallest_input(minimised: HarnessResult) -> None:
    outputs = load_outputs(minimised.evidence["outputs_path"])
    assert outputs["test"].shape == _smallest(minimised).shape


def test_the_repro_loads_the_smallest_input(minimised: HarnessResult) -> None:
    assert repr(minimised.evidence["inputs_path"]) in minimised.repro


def test_the_recorded_checks_ran_on_the_smallest_input(minimised: HarnessResult) -> None:
    tolerance = next(c for c in minimised.evidence["checks"] if c["check"] == "beyond_tolerance")
    assert tolerance["figures"]["mismatch_count"] == minimised.evidence["mismatch_count"]


def test_what_the_fuzzer_first_found_is_kept_apart(minimised: HarnessResult) -> None:
    original = minimised.evidence["original"]
    assert "(35 of 48 elements differ" in original["reason"]
    assert original["mismatch_count"] == 35 and original["inputs_path"] != minimised.evidence["inputs_path"]


def test_a_worker_returns_the_finding_on_its_smallest_input(tmp_path) -> None:
    from fuzz_core import WorkerPool

    spec = HarnessSpec(api="planted.threshold", input_source="code", code=THRESHOLD, test_mode="layout:noncontiguous")
    with WorkerPool(1, task_timeout_s=300, workdir=tmp_path, minimise_s=20.0, preload_opinfo=False) as pool:
        result = pool.submit(spec, max_executions=1).result()
    assert result.verdict == "confirmed", result.reason
    assert result.evidence["minimised"]["adopted"] is True
    assert result.reason != result.evidence["original"]["reason"]
    assert f"of {_smallest(result).numel()} elements differ" in result.reason
