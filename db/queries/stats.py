"""Counts per table and per status, for `transfuzz stats`."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models

# table name -> (model, status column or None)
_STATUS_COLUMNS = {
    "issues": (models.Issue, models.Issue.state),
    "triages": (models.Triage, models.Triage.false_alarm_class),
    "patterns": (models.Pattern, models.Pattern.status),
    "api_semantics": (models.ApiSemantics, models.ApiSemantics.source),
    "candidates": (models.Candidate, models.Candidate.status),
    "harnesses": (models.Harness, models.Harness.status),
    "runs": (models.Run, models.Run.exit_reason),
    "findings": (models.Finding, models.Finding.verdict),
    "reviews": (models.Review, models.Review.decision),
    "llm_calls": (models.LlmCall, models.LlmCall.prompt_name),
}


def table_counts(session: Session) -> dict[str, dict[str, object]]:
    """{table: {"total": n, "by_status": {status: n}}} for every pipeline table."""
    out: dict[str, dict[str, object]] = {}
    for name, (model, column) in _STATUS_COLUMNS.items():
        total = session.scalar(select(func.count()).select_from(model)) or 0
        rows = session.execute(select(column, func.count()).group_by(column)).all()
        by_status = {str(value) if value is not None else "-": count for value, count in rows}
        out[name] = {"total": total, "by_status": dict(sorted(by_status.items()))}
    return out


class RunNotFound(LookupError):
    """No campaign run has this id."""


def run_row(session: Session, run_id: int) -> models.Run:
    run = session.get(models.Run, run_id)
    if run is None:
        last = session.scalar(select(func.max(models.Run.id)))
        hint = f" (the last run is {last})" if last is not None else " (no run is recorded yet)"
        raise RunNotFound(f"no run {run_id}{hint}")
    return run


def latest_run_id(session: Session) -> int | None:
    return session.scalar(select(func.max(models.Run.id)))


def run_verdicts(session: Session, run_id: int) -> dict[str, int]:
    """{verdict: findings} for the findings one run stored."""
    rows = session.execute(
        select(models.Finding.verdict, func.count()).where(models.Finding.run_id == run_id)
        .group_by(models.Finding.verdict).order_by(models.Finding.verdict)
    )
    return {verdict: count for verdict, count in rows}


def run_reasons(session: Session, run_id: int, verdict: str) -> list[str]:
    """The stored reason of every finding of one verdict in one run (the caller groups them)."""
    return list(session.scalars(
        select(models.Finding.reason).where(models.Finding.run_id == run_id, models.Finding.verdict == verdict)
        .order_by(models.Finding.id)
    ))


def save_pipeline_counts(session: Session, run_id: int, counts: dict[str, object]) -> None:
    """Keep what `transfuzz run` did before fuzzing with its run, so `stats --run` repeats the summary's figures."""
    run = run_row(session, run_id)
    run.counters = {**(run.counters or {}), "pipeline": counts}
