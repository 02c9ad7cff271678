"""Figures for the end-of-run summary: stage counts, verdicts, the top confirmed findings."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models
from db.queries.source_recheck import outcome_counts


def _count(session: Session, stmt) -> int:  # type: ignore[no-untyped-def]
    return int(session.scalar(stmt) or 0)


def pipeline_counts(session: Session) -> dict[str, Any]:
    count = func.count()
    return {
        "issues": _count(session, select(count).select_from(models.Issue)),
        "silent_bug_reports": _count(
            session, select(func.count(func.distinct(models.Triage.issue_id))).where(models.Triage.is_silent_bug.is_(True))
        ),
        "false_alarms": _count(
            session, select(func.count(func.distinct(models.Triage.issue_id))).where(models.Triage.false_alarm_class.is_not(None))
        ),
        "patterns": _count(session, select(count).select_from(models.Pattern).where(models.Pattern.kind.is_not(None))),
        "candidates": _count(session, select(count).select_from(models.Candidate).where(models.Candidate.status != "source")),
        "vetoed": _count(session, select(count).select_from(models.Candidate).where(models.Candidate.status == "vetoed")),
        "harnesses": _count(session, select(count).select_from(models.Harness)),
        "harnesses_pending": _count(session, select(count).select_from(models.Harness).where(models.Harness.status == "pending")),
        "verdicts": {v: n for v, n in session.execute(
            select(models.Finding.verdict, count).group_by(models.Finding.verdict).order_by(models.Finding.verdict)
        )},
        "source_rechecks": outcome_counts(session),  # db/queries/source_recheck.py
    }


def top_findings(session: Session, verdicts: tuple[str, ...] = ("confirmed",), limit: int = 10,
                 run_id: int | None = None) -> list[dict[str, Any]]:
    """Findings of the given verdicts (of one run, if given) with their target API, mode pair and source issue."""
    stmt = (
        select(models.Finding, models.Candidate, models.Pattern, models.Issue)
        .join(models.Harness, models.Finding.harness_id == models.Harness.id)
        .join(models.Candidate, models.Harness.candidate_id == models.Candidate.id)
        .join(models.Pattern, models.Candidate.pattern_id == models.Pattern.id)
        .join(models.Issue, models.Pattern.issue_id == models.Issue.id)
        .where(models.Finding.verdict.in_(verdicts))
        .order_by(models.Finding.id)
        .limit(limit)
    )
    if run_id is not None:
        stmt = stmt.where(models.Finding.run_id == run_id)
    out = []
    for finding, candidate, pattern, issue in session.execute(stmt):
        evidence = finding.evidence or {}
        out.append({
            "finding": finding.id,
            "verdict": finding.verdict,
            "api": candidate.target_api,
            "is_source_recheck": candidate.status == "source",
            "kind": pattern.kind,
            "modes": f"{pattern.reference_mode} vs {pattern.test_mode}",
            "dtype": (evidence.get("dtype") or ""),
            "max_abs_diff": evidence.get("max_abs_diff"),
            "source_issue": f"{issue.repo}#{issue.number}",
            "reason": finding.reason,
        })
    return out
