"""The budget split's pure rules: signal score, successive halving, and the inconclusive verdict."""

from __future__ import annotations

from agent.campaign.schedule import TaskState, aggregate, halving_keep, rounds_left, signal_score
from fuzz_core.result import HarnessResult


def _state(hid: int, *results: HarnessResult) -> TaskState:
    return TaskState(hid, {"api": "torch.relu"}, list(results))


def _passed(executions: int, **evidence: object) -> HarnessResult:
    """A passed round; every input compared unless the evidence says otherwise."""
    return HarnessResult("passed", f"{executions} inputs agree", executions, 1.0, {"compared": executions, **evidence})


def _inconclusive(executions: int, compared: int) -> HarnessResult:
    return HarnessResult("inconclusive", f"only {compared} inputs compared", executions, 1.0,
                         {"compared": compared, "invalid_inputs": executions - compared})


def test_a_difference_near_tolerance_scores_above_an_exact_agreement() -> None:
    near, exact = _state(1, _passed(80, closeness=0.9)), _state(2, _passed(80, closeness=0.0))
    assert signal_score(near, 50) > signal_score(exact, 50)


def test_too_few_inputs_suspicion_and_nonfinite_outputs_each_add_signal() -> None:
    base = signal_score(_state(1, _passed(80)), 50)
    assert signal_score(_state(2, _passed(3)), 50) > base
    assert signal_score(_state(3, HarnessResult("suspicious", "amplification", 80, 1.0, {})), 50) > base
    assert signal_score(_state(4, _passed(80, nonfinite_outputs=2)), 50) > base
    assert signal_score(_state(5, _passed(80, coverage={"feature_additions": 10})), 50) > base


def test_halving_keeps_the_better_half_and_respects_the_cap() -> None:
    states = [_state(i, _passed(80, closeness=i / 10)) for i in range(6)]
    kept, dropped = halving_keep(states, 50)
    assert [s.hid for s in kept] == [5, 4, 3] and {s.hid for s in dropped} == {0, 1, 2}
    kept, _ = halving_keep(states, 50, most=1)
    assert [s.hid for s in kept] == [5]
    assert rounds_left(1) == 1 and rounds_left(8) == 4


def test_a_pass_on_too_few_inputs_over_all_rounds_is_inconclusive() -> None:
    few = aggregate(_state(1, _passed(10), _passed(20)), 50, HarnessResult)
    assert few.verdict == "inconclusive" and few.executions == 30 and "needs 50" in few.reason
    enough = aggregate(_state(2, _passed(30), _passed(30)), 50, HarnessResult)
    assert enough.verdict == "passed" and enough.evidence["rounds"] == 2 and enough.evidence["executions_total"] == 60


def test_the_strongest_verdict_of_any_round_is_kept() -> None:
    found = HarnessResult("suspicious", "amplification", 5, 1.0, {"max_abs_diff": 1.0})
    result = aggregate(_state(1, _passed(10), found), 50, HarnessResult)
    assert result.verdict == "suspicious" and result.evidence["max_abs_diff"] == 1.0 and result.executions == 15


def test_a_pass_counts_compared_inputs_not_executed_ones() -> None:
    result = aggregate(_state(1, _passed(80, compared=3, invalid_inputs=77)), 50, HarnessResult)
    assert result.verdict == "inconclusive" and result.executions == 80, result.reason
    assert "only 3 inputs compared" in result.reason and "77 rejected" in result.reason
    assert result.evidence["compared_total"] == 3


def test_rounds_too_short_alone_pass_on_their_compared_inputs_together() -> None:
    result = aggregate(_state(1, _inconclusive(40, 30), _inconclusive(40, 30)), 50, HarnessResult)
    assert result.verdict == "passed" and result.evidence["compared_total"] == 60, result.reason


def test_a_pass_that_does_not_say_how_many_inputs_it_compared_is_not_earned() -> None:
    silent = HarnessResult("passed", "80 inputs agree", 80, 1.0, {})
    assert aggregate(_state(1, silent), 50, HarnessResult).verdict == "inconclusive"


def test_too_few_compared_inputs_add_signal_however_many_executed() -> None:
    assert signal_score(_state(1, _passed(80, compared=3)), 50) > signal_score(_state(2, _passed(80)), 50)
