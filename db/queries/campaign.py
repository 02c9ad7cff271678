"""The fuzz work queue and campaign bookkeeping: claim harnesses, store findings as they come.

Claiming locks the pending row with `FOR UPDATE SKIP LOCKED` (PostgreSQL: a second driver skips a
row the first is claiming instead of waiting for it) and then moves it pending → running with a
conditional UPDATE, so two drivers never hold the same harness. Each campaign beats a heartbeat on
its run (its lease); a harness left `running` by a campaign that ended or whose heartbeat went
stale (it was killed) is handed back to the queue. SQLite serialises writers, so there one live
driver at a time is allowed (`refuse_second_driver`).

Note [One verdict per claim]
Every claim bumps `harnesses.attempts`; a verdict row records the claim (`attempt`) and the precision
variant it came from, and (harness_id, attempt, variant) is unique. A result is written only while the
harness is still claimed by the writing run, under a row lock; a retried write (the database went away
after the commit but before the answer) finds its own row and does not add another.
"""

from __future__ import annotations

import hashlib
import json
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


class DriverBusy(RuntimeError):
    """Another campaign driver is live on a database that cannot share the queue (SQLite)."""


def live_runs(session: Session, command: str, stale_after: timedelta, now: datetime | None = None) -> list[int]:
    """Runs of `command` that have not ended and whose heartbeat is fresh."""
    cutoff = (now or utcnow()) - stale_after
    return list(session.scalars(
        select(models.Run.id).where(models.Run.command == command, models.Run.ended_at.is_(None),
                                    models.Run.heartbeat_at >= cutoff).order_by(models.Run.id)))


def refuse_second_driver(session: Session, stale_after: timedelta) -> None:
    """On SQLite one fuzz driver at a time: a second one is refused with the live run it would race."""
    if session.get_bind().dialect.name != "sqlite":
        return
    live = live_runs(session, "fuzz", stale_after)
    if live:
        raise DriverBusy(f"fuzz run {live[0]} is still running on this SQLite database (heartbeat within "
                         f"{stale_after.total_seconds():.0f} s); SQLite cannot share the queue between drivers: "
                         f"wait for it, or put many drivers on PostgreSQL (--db postgresql+psycopg://...)")


def variant_key(spec: dict[str, Any]) -> str:
    """A short content hash naming one variant of a harness's spec (Note [One verdict per claim])."""
    blob = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def claim(session: Session, harness_id: int, run_id: int | None = None) -> bool:
    """pending → running; False when another campaign got there first (or is claiming it right now)."""
    free = session.execute(
        select(models.Harness.id).where(models.Harness.id == harness_id, models.Harness.status == "pending")
        .with_for_update(skip_locked=True)
    ).scalar_one_or_none()
    if free is None:
        return False
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
                  evidence: dict[str, Any], repro: str, signature: str, variant: str = "") -> int | None:
    """Store one verdict; None when `run_id` no longer holds the harness's claim (another driver took it
    over after this run's lease lapsed), so nothing is written. Note [One verdict per claim]."""
    harness = session.execute(
        select(models.Harness).where(models.Harness.id == harness_id).with_for_update()
    ).scalar_one_or_none()
    attempt = None
    if run_id is not None and harness is not None:
        if harness.run_id != run_id:
            return None
        attempt = harness.attempts
        existing = session.scalar(select(models.Finding.id).where(
            models.Finding.harness_id == harness_id, models.Finding.attempt == attempt,
            models.Finding.variant == variant))
        if existing is not None:
            return existing
    finding = models.Finding(harness_id=harness_id, run_id=run_id, verdict=verdict, reason=reason,
                             evidence=evidence, repro=repro, signature=signature, attempt=attempt, variant=variant)
    session.add(finding)
    if harness is not None:
        # An inconclusive result (too few inputs to call it a pass) leaves the harness pending, so the next
        # campaign runs it again; so does any later variant of a harness one variant left pending.
        if verdict == "inconclusive" or (harness.status == "pending" and verdict != "error"):
            harness.status = "pending"
        else:
            harness.status = "error" if verdict == "error" else "done"
    session.flush()
    return finding.id


def verdict_counts(session: Session, run_id: int | None = None) -> dict[str, int]:
    stmt = select(models.Finding.verdict, func.count()).group_by(models.Finding.verdict)
    if run_id is not None:
        stmt = stmt.where(models.Finding.run_id == run_id)
    return {v: n for v, n in session.execute(stmt)}
