"""The review page's checks table: the outcomes fuzz_core recorded for each check that ran (agent/review/checks.py).

Nothing here re-runs or infers anything: a finding stored before the records existed shows one row
saying so (Note [Recorded checks] in fuzz_core/evidence.py).
"""

from __future__ import annotations

from typing import Any

from agent.review.checks import CheckRow, RowStatus, recorded_checks

CheckStatus = RowStatus
VerdictCheck = CheckRow


def verdict_checks(verdict: str, evidence: dict[str, Any]) -> list[VerdictCheck]:
    """The checks table of one finding."""
    return recorded_checks(verdict, evidence)
