"""How the fuzz stage shares its budget among harnesses: evenly (the old rule), or by successive halving.

Successive halving (Jamieson & Talwalkar, AISTATS 2016; the inner loop of Hyperband): every harness gets
a short probe; then, round by round, the better-scoring half of the harnesses still in play gets the next
share of the remaining time, until the budget is spent. A harness's score is its signal: how close its
worst agreeing difference came to the tolerance, suspicious or flaky outcomes, NaN/Inf outputs, new
coverage, and too few executed inputs to call a pass. Pure logic: the stage does the I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

SCHEDULERS = ("halving", "even")
INCONCLUSIVE = "inconclusive"
# Verdicts after which more time on the same harness cannot change the outcome.
FINAL_VERDICTS = ("confirmed", "crash", "hang", "error", "not_applicable")
# Strongest first: the verdict a harness keeps across rounds (inconclusive is decided at the end).
_RANK = {"confirmed": 0, "crash": 1, "hang": 2, "suspicious": 3, "flaky": 4, "error": 5, "passed": 6,
         "not_applicable": 7}


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
        ev = result.evidence or {}
        closeness = ev.get("closeness")
        if isinstance(closeness, (int, float)) and math.isfinite(closeness):
            score = max(score, min(float(closeness), 1.0))
    verdicts = {r.verdict for r in state.results}
    if verdicts & {"suspicious", "flaky"}:
        score += 1.0
    last = state.results[-1].evidence or {} if state.results else {}
    if int(last.get("nonfinite_outputs") or 0) > 0:
        score += 0.5
    coverage = last.get("coverage") or {}
    added = int(coverage.get("feature_additions") or 0) + int(coverage.get("op_additions") or 0)
    score += 0.5 * min(1.0, added / 10)
    if state.executions < min_inputs:
        score += 1.0  # not yet enough inputs to call it anything
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
    """The one result stored for a task: its strongest verdict; a pass on fewer than `min_inputs` executed
    inputs (over all rounds) is `inconclusive`."""
    best = state.best
    executions = state.executions
    evidence = dict(best.evidence or {})
    evidence.update(rounds=state.rounds, executions_total=executions, min_inputs=min_inputs,
                    elapsed_s_total=round(sum(float(r.elapsed_s) for r in state.results), 3),
                    compile_s_total=round(sum(float((r.evidence or {}).get("compile_s") or 0) for r in state.results), 3))
    verdict, reason = best.verdict, best.reason
    if verdict == "passed" and executions < min_inputs:
        verdict = INCONCLUSIVE
        reason = (f"only {executions} inputs executed (a pass needs {min_inputs}); retried by the next fuzz "
                  f"[{best.reason}]")
    elif verdict == "passed" and state.rounds > 1:
        reason = f"{executions} inputs agree over {state.rounds} rounds"
    return result_type(verdict=verdict, reason=reason, executions=executions,
                       elapsed_s=sum(float(r.elapsed_s) for r in state.results), evidence=evidence, repro=best.repro,
                       signature=best.signature, spec_id=best.spec_id, exit_reason=best.exit_reason)
