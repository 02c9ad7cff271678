"""The fuzz work queue and campaign bookkeeping: claim harnesses, store findings as they come.

Claiming is one conditional UPDATE per harness (pending → running), which is safe for many
campaigns on PostgreSQL and on SQLite alike. Each campaign beats a heartbeat on its run; a
harness left `running` by a campaign that ended or whose heartbeat went stale (it was killed)
is handed back to the queue.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from db import models
from db.base import utcnow


def start_run(session: Session, command: str, config: dict[str, Any]) -> int:
    run = models.Run(command=command, config=config, counters={}, heartbeat_at=utcnow())
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


def heartbeat(session: Session, run_id: int) -> None:
    session.execute(update(models.Run).where(models.Run.id == run_id).values(heartbeat_at=utcnow()))


def reclaim_stale(session: Session, stale_after: timedelta, now: datetime | None = None) -> int:
    """Hand back harnesses whose campaign died while running them."""
    cutoff = (now or utcnow()) - stale_after
    dead_runs = select(models.Run.id).where(
        or_(models.Run.ended_at.is_not(None), models.Run.heartbeat_at.is_(None), models.Run.heartbeat_at < cutoff)
    )
    result = session.execute(
        update(models.Harness)
        .where(
            models.Harness.status == "running",
            or_(models.Harness.run_id.is_(None), models.Harness.run_id.in_(dead_runs)),
        )
        .values(status="pending", claimed_at=None, run_id=None)
        .execution_options(synchronize_session=False)
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


def claim(session: Session, harness_id: int, run_id: int | None = None) -> bool:
    """pending → running; False when another campaign got there first."""
    result = session.execute(
        update(models.Harness)
        .where(models.Harness.id == harness_id, models.Harness.status == "pending")
        .values(status="running", claimed_at=utcnow(), run_id=run_id, attempts=models.Harness.attempts + 1)
    )
    return (result.rowcount or 0) == 1


def release(session: Session, harness_id: int) -> None:
    """Give a claimed harness back untouched (budget ran out before it started)."""
    session.execute(
        update(models.Harness).where(models.Harness.id == harness_id, models.Harness.status == "running")
        .values(status="pending", claimed_at=None, run_id=None)
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
