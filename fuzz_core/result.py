"""The outcome of one harness: a verdict, why, and the evidence behind it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

CONFIRMED = "confirmed"
SUSPICIOUS = "suspicious"
PASSED = "passed"
CRASH = "crash"
HANG = "hang"
ERROR = "error"
NOT_APPLICABLE = "not_applicable"
FLAKY = "flaky"
# Agreed on too few executed inputs to call it a pass (the campaign's minimum); the next fuzz retries it.
INCONCLUSIVE = "inconclusive"

VERDICTS: tuple[str, ...] = (CONFIRMED, SUSPICIOUS, PASSED, CRASH, HANG, ERROR, NOT_APPLICABLE, FLAKY, INCONCLUSIVE)

# When a campaign sees several outcomes, the one a reviewer most needs to see wins.
VERDICT_RANK: dict[str, int] = {
    CONFIRMED: 0, CRASH: 1, HANG: 2, SUSPICIOUS: 3, FLAKY: 4, ERROR: 5, INCONCLUSIVE: 6, PASSED: 7, NOT_APPLICABLE: 8,
}


@dataclass
class HarnessResult:
    verdict: str
    reason: str = ""
    executions: int = 0
    elapsed_s: float = 0.0
    evidence: dict[str, Any] = field(default_factory=dict)
    repro: str = ""
    signature: str = ""
    spec_id: str = ""
    exit_reason: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; expected one of {', '.join(VERDICTS)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HarnessResult:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})
