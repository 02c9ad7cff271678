"""Campaign progress for the review page: each run's harnesses, executions per second, verdicts over time."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db.base import utcnow
from db.models import Finding, Harness, Run


@dataclass
class RunProgress:
    id: int
    command: str
    started_at: datetime
    ended_at: datetime | None
    heartbeat_at: datetime | None
    exit_reason: str | None
    executions: int
    tasks_done: int
    harnesses: dict[str, int]  # harness status -> count, for harnesses this run claimed
    verdicts: dict[str, int]
    executions_per_s: float | None
    running: bool = field(default=False)


@dataclass
class VerdictPoint:
    at: datetime
    verdict: str


def _as_aware(value: datetime | None) -> datetime | None:
    # SQLite hands timestamps back without a zone; they were stored in UTC.
    if value is not None and value.tzinfo is None:
        from datetime import UTC

        return value.replace(tzinfo=UTC)
    return value


def _number(counters: dict[str, Any], key: str) -> int:
    value = counters.get(key, 0)
    return int(value) if isinstance(value, (int, float)) else 0


def campaign_progress(session: Session, *, limit: int = 20, now: datetime | None = None) -> list[RunProgress]:
    """The newest campaigns (fuzz runs) with their progress; running ones have no end time."""
    now = now or utcnow()
    runs = session.scalars(select(Run).order_by(Run.id.desc()).limit(limit)).all()
    if not runs:
        return []
    ids = [r.id for r in runs]
    harnesses: dict[int, dict[str, int]] = {}
    for run_id, status, count in session.execute(
        select(Harness.run_id, Harness.status, func.count()).where(Harness.run_id.in_(ids)).group_by(Harness.run_id, Harness.status)
    ):
        harnesses.setdefault(run_id, {})[status] = int(count)
    verdicts: dict[int, dict[str, int]] = {}
    for run_id, verdict, count in session.execute(
        select(Finding.run_id, Finding.verdict, func.count()).where(Finding.run_id.in_(ids)).group_by(Finding.run_id, Finding.verdict)
    ):
        verdicts.setdefault(run_id, {})[verdict] = int(count)
    out = []
    for run in runs:
        counters = dict(run.counters or {})
        started = _as_aware(run.started_at)
        last = _as_aware(run.ended_at) or _as_aware(run.heartbeat_at) or now
        seconds = (last - started).total_seconds() if started else 0.0
        executions = _number(counters, "executions")
        out.append(
            RunProgress(
                id=run.id,
                command=run.command,
                started_at=started or now,
                ended_at=_as_aware(run.ended_at),
                heartbeat_at=_as_aware(run.heartbeat_at),
                exit_reason=run.exit_reason,
                executions=executions,
                tasks_done=_number(counters, "tasks"),
                harnesses=harnesses.get(run.id, {}),
                verdicts=verdicts.get(run.id, {}),
                executions_per_s=executions / seconds if seconds > 0 else None,
                running=run.ended_at is None,
            )
        )
    return out


def pending_harness_count(session: Session) -> int:
    """Harnesses waiting for any campaign."""
    return int(session.scalar(select(func.count()).select_from(Harness).where(Harness.status == "pending")) or 0)


def verdict_timeline(session: Session, run_id: int, *, limit: int = 20000) -> list[VerdictPoint]:
    """(time, verdict) of a run's findings in the order they were stored, at most ``limit``."""
    rows = session.execute(
        select(Finding.created_at, Finding.verdict).where(Finding.run_id == run_id).order_by(Finding.id).limit(limit)
    ).all()
    return [VerdictPoint(at=_as_aware(at) or utcnow(), verdict=verdict) for at, verdict in rows]
