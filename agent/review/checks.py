"""The confirmation checks a finding's evidence records, as rows for people (review show, the review page, reports).

Only recorded outcomes are shown (Note [Recorded checks] in fuzz_core/evidence.py): fuzz_core writes
one record per check that ran on the finding's input, and nothing here infers a check from the verdict
or its reason. A finding stored before the records existed gets one row that says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from fuzz_core.evidence import CheckOutcome, Evidence

RowStatus = Literal["held", "failed", "skipped", "decided", "error", "not recorded", "none"]
NOT_RECORDED = "checks not recorded (stored by an older version)"
# Verdicts that come from a difference found on an input: the engine records their checks.
CHECKED_VERDICTS = ("confirmed", "suspicious", "flaky")
MAX_FIGURES_CHARS = 300


@dataclass
class CheckRow:
    name: str
    status: RowStatus
    detail: str


def check_name(name: str) -> str:
    """`check_reference_deterministic` → `reference deterministic`."""
    return name.removeprefix("check_").replace("_", " ")


def _figure(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def figures_text(figures: dict[str, Any]) -> str:
    text = ", ".join(f"{key} {_figure(value)}" for key, value in figures.items())
    return text if len(text) <= MAX_FIGURES_CHARS else text[:MAX_FIGURES_CHARS - 1] + "…"


def check_row(outcome: CheckOutcome) -> CheckRow:
    figures = {k: v for k, v in outcome.figures.items() if k != "verdict"}
    detail = outcome.detail
    if outcome.status == "decided" and "verdict" in outcome.figures:
        detail = f"verdict {outcome.figures['verdict']}: {detail}"
    if figures:
        detail = f"{detail} ({figures_text(figures)})" if detail else figures_text(figures)
    return CheckRow(check_name(outcome.check), outcome.status, detail)


def recorded_checks(verdict: str, evidence: Evidence | dict[str, Any]) -> list[CheckRow]:
    """One row per recorded check, in the order they ran; a single row when none are recorded."""
    checks = Evidence.of(evidence).checks
    if checks is not None:
        return [check_row(c) for c in checks]
    if verdict in CHECKED_VERDICTS:
        return [CheckRow("checks", "not recorded", NOT_RECORDED)]
    return [CheckRow("checks", "none", f"no confirmation check runs for a {verdict} verdict "
                                       "(no difference was found on an input)")]


def check_lines(verdict: str, evidence: Evidence | dict[str, Any]) -> list[str]:
    """The text `review show` prints under "Checks:", each field on one line and free of control sequences."""
    from agent.text_safety import one_line

    rows = [(one_line(r.name), r.status, one_line(r.detail)) for r in recorded_checks(verdict, evidence)]
    width = max(len(name) for name, _, _ in rows)
    return [f"  {name.ljust(width)}  {status}: {detail}" if detail else f"  {name.ljust(width)}  {status}"
            for name, status, detail in rows]
