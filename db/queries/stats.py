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
