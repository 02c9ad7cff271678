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
    """Pending harnesses, fairly ordered: every pattern's source re-check, then every pattern's
    best target, then the second best, … so a short budget still covers every pattern."""
    rows = session.execute(
        select(models.Harness.id, models.Harness.spec, models.Candidate.pattern_id, models.Candidate.score,
               models.Candidate.status)
        .outerjoin(models.Candidate, models.Harness.candidate_id == models.Candidate.id)
        .where(models.Harness.status == "pending")
        .order_by(models.Harness.id)
    ).all()
    by_pattern: dict[Any, list[tuple[int, float, int, dict[str, Any]]]] = {}
    for hid, spec, pattern_id, score, status in rows:
        priority = 0 if status == "source" else 1
        by_pattern.setdefault(pattern_id, []).append((priority, -(score or 0.0), hid, spec))
    ordered: list[tuple[int, int, Any, int, dict[str, Any]]] = []
    for pattern_id, items in by_pattern.items():
        items.sort()
        for rank, (_, _, hid, spec) in enumerate(items):
            ordered.append((rank, pattern_id if pattern_id is not None else -1, hid, spec))
    ordered.sort(key=lambda item: (item[0], item[1], item[2]))
    return [(hid, spec) for _, _, hid, spec in ordered]


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
