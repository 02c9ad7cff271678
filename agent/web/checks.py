"""The five checks a value finding must survive (DESIGN.md, "Verdicts"), read back from a stored verdict.

fuzz_core runs the checks in order and stops at the first that fails, so the verdict and its
reason say how far a finding got: a confirmed finding passed all five, a flaky one failed the
re-run, a suspicious one stopped at an inconclusive check. Nothing here re-runs anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

CheckStatus = Literal["pass", "fail", "inconclusive", "not reached", "n/a"]
CHECK_NAMES = (
    "reproducible",
    "reference deterministic",
    "beyond tolerance",
    "worse than the reference (fp64)",
    "defined input",
)


@dataclass
class VerdictCheck:
    name: str
    status: CheckStatus
    detail: str


def _fmt(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _tolerance_detail(evidence: dict[str, Any]) -> str:
    diff = evidence.get("max_abs_diff")
    tol = evidence.get("tolerance")
    text = f"max |diff| {_fmt(diff)}" if diff is not None else "difference recorded"
    if isinstance(tol, dict):
        text += f" (rtol {_fmt(tol.get('rtol'))}, atol {_fmt(tol.get('atol'))})"
    return text


def _fp64_detail(evidence: dict[str, Any]) -> str:
    ref, test = evidence.get("ref_error_vs_fp64"), evidence.get("test_error_vs_fp64")
    if ref is None and test is None:
        return "no float64 errors recorded"
    return f"test rmse vs fp64 {_fmt(test)}, reference {_fmt(ref)}"


def verdict_checks(verdict: str, reason: str, evidence: dict[str, Any]) -> list[VerdictCheck]:
    """One row per check; ``n/a`` for every check when the verdict is not about values."""
    if verdict in ("crash", "hang", "error", "not_applicable"):
        return [VerdictCheck(name, "n/a", f"verdict {verdict}: no value comparison") for name in CHECK_NAMES]
    skipped = evidence.get("invalid_inputs")
    domain = "inputs outside the documented domain were skipped" + (f" ({skipped})" if skipped else "")
    statuses: list[tuple[CheckStatus, str]]
    if verdict == "passed":
        statuses = [
            ("not reached", ""),
            ("not reached", ""),
            ("fail", "no difference beyond tolerance"),
            ("not reached", ""),
            ("pass", domain),
        ]
    elif verdict == "flaky":
        statuses = [
            ("fail", "the difference did not reproduce on re-run"),
            ("pass", "the reference agrees with itself"),
            ("pass", _tolerance_detail(evidence)),
            ("not reached", ""),
            ("pass", domain),
        ]
    elif verdict == "confirmed":
        statuses = [
            ("pass", "same failure on re-run"),
            ("pass", "the reference agrees with itself"),
            ("pass", _tolerance_detail(evidence)),
            ("pass", _fp64_detail(evidence)),
            ("pass", domain),
        ]
    else:  # suspicious: the reason names the check that could not decide
        lowered = reason.lower()
        if "not deterministic" in lowered:
            statuses = [
                ("not reached", ""),
                ("fail", reason),
                ("pass", _tolerance_detail(evidence)),
                ("not reached", ""),
                ("pass", domain),
            ]
        else:
            in_domain = not any(w in lowered for w in ("extreme magnitude", "exceeds the range", "nan/inf"))
            statuses = [
                ("pass", "same failure on re-run"),
                ("pass", "the reference agrees with itself"),
                ("pass", _tolerance_detail(evidence)),
                ("inconclusive" if in_domain else "pass", reason if in_domain else _fp64_detail(evidence)),
                ("pass", domain) if in_domain else ("inconclusive", reason),
            ]
    return [VerdictCheck(name, status, detail) for name, (status, detail) in zip(CHECK_NAMES, statuses, strict=True)]
