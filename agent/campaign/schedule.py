"""How the fuzz stage shares its budget among harnesses: evenly (the old rule), or by successive halving.

Successive halving (Jamieson & Talwalkar, AISTATS 2016; the inner loop of Hyperband): every harness gets
a short probe; then, round by round, the better-scoring half of the harnesses still in play gets the next
share of the remaining time, until the budget is spent. A harness's score is its signal: how close its
worst agreeing difference came to the tolerance, suspicious or flaky outcomes, NaN/Inf outputs, new
coverage, and too few compared inputs to call a pass. Pure logic: the stage does the I/O.

A pass is earned by compared inputs (both modes ran and the oracle compared them; Note [Earned passes] in
fuzz_core/campaign.py), summed over a task's rounds from each round's evidence (Evidence.compared): inputs the
reference rejected or that were not applicable never count towards one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from fuzz_core.evidence import Evidence

SCHEDULERS = ("halving", "even")
INCONCLUSIVE = "inconclusive"
# Verdicts after which more time on the same harness cannot change the outcome.
FINAL_VERDICTS = ("confirmed", "crash", "hang", "error", "not_applicable")
# Strongest first: the verdict a harness keeps across rounds (inconclusive is decided at the end).
# A round's `inconclusive` (too few compared inputs in that round) ranks with `passed`: both are agreement,
# and the task's verdict is decided on the compared inputs of all its rounds.
_RANK = {"confirmed": 0, "crash": 1, "hang": 2, "suspicious": 3, "flaky": 4, "error": 5, "passed": 6,
         INCONCLUSIVE: 6, "not_applicable": 7}
_AGREEMENT = ("passed", INCONCLUSIVE)


def compared_inputs(result: Any) -> int:
    """Inputs of one round that both modes ran and that were compared; a result that does not say: none."""
    value = Evidence.of(result.evidence).compared
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _uncompared_inputs(result: Any) -> int:
    ev = Evidence.of(result.evidence)
    return sum(int(v) for v in (ev.invalid_inputs, ev.not_applicable_inputs)
               if isinstance(v, (int, float)) and not isinstance(v, bool))


@dataclass
class TaskState:
    """One harness variant across the rounds it gets."""

    hid: int
    spec: dict[str, Any]
    results: list[Any] = field(default_factory=list)  # HarnessResult per round
    done: bool = False

    @property
    def executions(self) -> int:
        return sum(int(r.executions) for r in self.results)

    @property
    def compared(self) -> int:
        return sum(compared_inputs(r) for r in self.results)

    @property
    def rounds(self) -> int:
        return len(self.results)

    @property
    def best(self) -> Any:
        return min(self.results, key=lambda r: (_RANK.get(r.verdict, 9), -int(r.executions)))

    def is_final(self) -> bool:
        return bool(self.results) and self.results[-1].verdict in FINAL_VERDICTS


def signal_score(state: TaskState, min_inputs: int) -> float:
    """Higher means more worth another round."""
    score = 0.0
    for result in state.results:
        closeness = Evidence.of(result.evidence).closeness
        if isinstance(closeness, (int, float)) and math.isfinite(closeness):
            score = max(score, min(float(closeness), 1.0))
    verdicts = {r.verdict for r in state.results}
    if verdicts & {"suspicious", "flaky"}:
        score += 1.0
    last = Evidence.of(state.results[-1].evidence if state.results else None)
    if int(last.nonfinite_outputs or 0) > 0:
        score += 0.5
    coverage = last.coverage or {}
    added = int(coverage.get("feature_additions") or 0) + int(coverage.get("op_additions") or 0)
    score += 0.5 * min(1.0, added / 10)
    if state.compared < min_inputs:
        score += 1.0  # not yet enough compared inputs to call it anything
    return score


def halving_keep(states: list[TaskState], min_inputs: int, most: int | None = None
                 ) -> tuple[list[TaskState], list[TaskState]]:
    """(kept, dropped): the better-scoring half (at least one, at most `most`) goes on; ties keep the
    less-run task."""
    ranked = sorted(states, key=lambda s: (-signal_score(s, min_inputs), s.executions, s.hid))
    keep = max(1, math.ceil(len(ranked) / 2)) if ranked else 0
    if most is not None:
        keep = max(1, min(keep, most)) if ranked else 0
    return ranked[:keep], ranked[keep:]


def rounds_left(candidates: int) -> int:
    """Halving rounds still to come for this many candidates (1, 2, 4, ... → 1, 2, 3, ...)."""
    return max(1, math.ceil(math.log2(max(candidates, 1))) + 1)


def aggregate(state: TaskState, min_inputs: int, result_type: Any) -> Any:
    """The one result stored for a task: its strongest verdict; agreement on fewer than `min_inputs` compared
    inputs (over all rounds) is `inconclusive`, on at least that many `passed`."""
    best = state.best
    executions, compared = state.executions, state.compared
    uncompared = sum(_uncompared_inputs(r) for r in state.results)
    evidence = dict(best.evidence or {})
    evidence.update(rounds=state.rounds, executions_total=executions, compared_total=compared,
                    min_inputs=min_inputs,
                    elapsed_s_total=round(sum(float(r.elapsed_s) for r in state.results), 3),
                    compile_s_total=round(sum(float(Evidence.of(r.evidence).compile_s or 0) for r in state.results), 3))
    verdict, reason = best.verdict, best.reason
    if verdict in _AGREEMENT:
        figures = (f"{compared} of {executions} inputs compared, {uncompared} rejected by the reference or not "
                   f"applicable")
        if compared < min_inputs:
            verdict = INCONCLUSIVE
            reason = (f"only {compared} inputs compared (a pass needs {min_inputs}); retried by the next fuzz "
                      f"[{figures}; {best.reason}]")
        else:
            verdict = "passed"
            if state.rounds > 1 or best.verdict != "passed":
                reason = f"{compared} inputs agree" + (f" over {state.rounds} rounds" if state.rounds > 1 else "")
                if uncompared > compared:
                    reason += f" [most inputs were not compared: {figures}]"
    return result_type(verdict=verdict, reason=reason, executions=executions,
                       elapsed_s=sum(float(r.elapsed_s) for r in state.results), evidence=evidence, repro=best.repro,
                       signature=best.signature, spec_id=best.spec_id, exit_reason=best.exit_reason)
