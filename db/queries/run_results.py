"""The verdicts one fuzz run wrote, with what each harness checked: the rows a CI report is made of."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db import models


@dataclass
class RunVerdict:
    finding_id: int
    harness_id: int
    verdict: str
    reason: str
    signature: str
    spec: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    executions: int = 0


def run_verdicts(session: Session, run_id: int) -> list[RunVerdict]:
    """Every verdict row of `run_id`, oldest first."""
    rows = session.execute(
        select(models.Finding, models.Harness.spec)
        .join(models.Harness, models.Finding.harness_id == models.Harness.id)
        .where(models.Finding.run_id == run_id)
        .order_by(models.Finding.id)
    ).all()
    out = []
    for finding, spec in rows:
        evidence = finding.evidence or {}
        out.append(RunVerdict(
            finding_id=finding.id, harness_id=finding.harness_id, verdict=finding.verdict, reason=finding.reason or "",
            signature=finding.signature or "", spec=dict(spec or {}),
            elapsed_s=float(evidence.get("elapsed_s_total") or evidence.get("elapsed_s") or 0.0),
            executions=int(evidence.get("executions_total") or evidence.get("executions") or 0)))
    return out
