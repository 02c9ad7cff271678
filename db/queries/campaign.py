"""The fuzz work queue and campaign bookkeeping: claim harnesses, store findings as they come.

Claiming is one conditional UPDATE per harness (pending → running), which is safe for many
workers on PostgreSQL and on SQLite alike; a harness left `running` by a killed campaign is
handed back after its lease expires.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from db import models
from db.base import utcnow


def start_run(session: Session, command: str, config: dict[str, Any]) -> int:
    run = models.Run(command=command, config=config, counters={})
    session.add(run)
    session.flush()
    return run.id


def finish_run(session: Session, run_id: int, exit_reason: str, counters: dict[str, Any]) -> None:
    run = session.get(models.Run, run_id)
    if run is not None:
        run.ended_at = utcnow()
        run.exit_reason = exit_reason
        run.counters = dict(counters)


def save_counters(session: Session, run_id: int, counters: dict[str, Any]) -> None:
    session.execute(update(models.Run).where(models.Run.id == run_id).values(counters=dict(counters)))


def reclaim_stale(session: Session, lease: timedelta, now: datetime | None = None) -> int:
    """Hand back harnesses whose campaign died while running them."""
    cutoff = (now or utcnow()) - lease
    result = session.execute(
        update(models.Harness)
        .where(models.Harness.status == "running", models.Harness.claimed_at < cutoff)
        .values(status="pending", claimed_at=None)
    )
    return result.rowcount or 0


def pending_harnesses(session: Session) -> list[tuple[int, dict[str, Any]]]:
    rows = session.execute(
        select(models.Harness.id, models.Harness.spec).where(models.Harness.status == "pending").order_by(models.Harness.id)
    )
    return [(hid, spec) for hid, spec in rows]


def claim(session: Session, harness_id: int) -> bool:
    """pending → running; False when another worker got there first."""
    result = session.execute(
        update(models.Harness)
        .where(models.Harness.id == harness_id, models.Harness.status == "pending")
        .values(status="running", claimed_at=utcnow(), attempts=models.Harness.attempts + 1)
    )
    return (result.rowcount or 0) == 1


def release(session: Session, harness_id: int) -> None:
    """Give a claimed harness back untouched (budget ran out before it started)."""
    session.execute(
        update(models.Harness).where(models.Harness.id == harness_id, models.Harness.status == "running")
        .values(status="pending", claimed_at=None)
    )


def record_result(session: Session, harness_id: int, run_id: int | None, *, verdict: str, reason: str,
                  evidence: dict[str, Any], repro: str, signature: str) -> int:
    finding = models.Finding(harness_id=harness_id, run_id=run_id, verdict=verdict, reason=reason,
                             evidence=evidence, repro=repro, signature=signature)
    session.add(finding)
    harness = session.get(models.Harness, harness_id)
    if harness is not None:
        harness.status = "error" if verdict == "error" else "done"
    session.flush()
    return finding.id


def verdict_counts(session: Session, run_id: int | None = None) -> dict[str, int]:
    stmt = select(models.Finding.verdict, func.count()).group_by(models.Finding.verdict)
    if run_id is not None:
        stmt = stmt.where(models.Finding.run_id == run_id)
    return {v: n for v, n in session.execute(stmt)}
