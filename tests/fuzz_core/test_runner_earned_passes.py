"""Passes are earned (Note [Earned passes] in fuzz_core/campaign.py): only compared inputs count towards one."""

from __future__ import annotations

from fuzz_core import HarnessSpec, run_harness

# The reference accepts one input (the first seed's values); every other seed and nearly every mutant is
# outside its domain.
NARROW_DOMAIN = '''
def make_inputs(seed):
    return (torch.arange(4.0) + seed,), {}

def target(x):
    if not torch.equal(x, torch.arange(4.0)):
        raise ValueError("x must be arange(4)")
    return x * 2
'''

NO_DOMAIN = '''
def make_inputs(seed):
    return (torch.ones(4),), {}

def target(x):
    raise ValueError("no input is in this domain")
'''


def _narrow(**kwargs) -> HarnessSpec:
    return HarnessSpec(api="planted.narrow", input_source="code", code=NARROW_DOMAIN,
                       test_mode="layout:noncontiguous", **kwargs)


def test_mostly_rejected_inputs_are_not_a_pass_below_the_minimum(tmp_path) -> None:
    result = run_harness(_narrow(), max_executions=30, workdir=tmp_path, min_inputs=10)
    ev = result.evidence
    assert result.verdict == "inconclusive", result.reason
    assert 1 <= ev["compared"] < 10 and ev["compared"] + ev["invalid_inputs"] + ev["not_applicable_inputs"] == 30
    assert f"only {ev['compared']} inputs compared (a pass needs 10)" in result.reason
    assert f"{ev['invalid_inputs']} rejected by the reference" in result.reason
    assert "x must be arange(4)" in result.reason  # the health check names why most inputs were not compared


def test_the_health_check_fails_a_run_that_compared_few_among_many_rejected(tmp_path) -> None:
    result = run_harness(_narrow(), max_executions=60, workdir=tmp_path)  # no minimum asked for
    assert result.verdict == "inconclusive", result.reason
    assert result.reason.startswith("health check failed") and "most inputs were not compared" in result.reason
    assert result.evidence["compared"] < 10 and result.evidence["invalid_inputs"] >= 50


def test_a_harness_that_never_got_a_valid_input_is_not_applicable_with_the_reason(tmp_path) -> None:
    # jit.trace applies to every input (layout:noncontiguous does not apply to a mutant with one element or none,
    # which would make the run's reason "rejected N inputs" instead): every input reaches the reference.
    spec = HarnessSpec(api="planted.nothing", input_source="code", code=NO_DOMAIN, test_mode="jit.trace")
    result = run_harness(spec, max_executions=12, workdir=tmp_path)
    assert result.verdict == "not_applicable", result.reason
    assert "the reference mode rejected every input: ValueError: no input is in this domain" in result.reason
    assert "0 of 12 inputs compared, 12 rejected by the reference" in result.reason
    assert result.evidence["compared"] == 0


def test_a_pass_on_enough_compared_inputs_says_how_many_agree(tmp_path) -> None:
    spec = HarnessSpec(api="torch.relu", test_mode="layout:noncontiguous", seed=1)
    result = run_harness(spec, max_executions=12, workdir=tmp_path, min_inputs=10)
    compared = result.evidence["compared"]
    assert result.verdict == "passed" and compared >= 10, result.reason
    assert result.reason.startswith(f"{compared} inputs agree")
