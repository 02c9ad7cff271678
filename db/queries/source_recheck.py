"""The source re-check's rows: which patterns re-check their own report, the issue's state, the stored outcome.

A transferred pattern keeps its source API as a candidate with status ``source`` (agent/transfer/stage.py):
"does the reported bug still reproduce on this torch?". The answer is decided in agent/transfer/source_recheck.py
from the report's own repro (run in the sandbox) or else the harness; this module only reads and writes it.
``patterns.source_check`` holds the whole record (JSON), ``source_outcome``/``source_basis`` its outcome and
basis (db.status.SOURCE_OUTCOMES, SOURCE_BASES), ``source_reproduces`` the yes/no/unknown it implies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db import models
from db.status import SOURCE_BASES, SOURCE_OUTCOMES


@dataclass(frozen=True)
class SourceReport:
    """A transferred pattern's report: what the repro check needs of it."""

    pattern_id: int
    issue_ref: str  # "owner/name#number"
    body: str
    source_check: dict[str, Any]


@dataclass(frozen=True)
class SourceState:
    """The stored record of one pattern's re-check, and its issue's state."""

    pattern_id: int
    issue_state: str
    state_reason: str | None
    source_check: dict[str, Any]


def state_reason(raw: dict[str, Any] | None) -> str | None:
    """Why a closed issue was closed, as the source recorded it (REST ``state_reason``, gh ``stateReason``)."""
    if not isinstance(raw, dict):
        return None
    value = raw.get("state_reason") if raw.get("state_reason") is not None else raw.get("stateReason")
    return value.strip().lower() if isinstance(value, str) and value.strip() else None


def source_reports(session: Session) -> list[SourceReport]:
    """Transferred patterns that keep a source re-check candidate, oldest first."""
    stmt = (
        select(models.Pattern.id, models.Issue.repo, models.Issue.number, models.Issue.body,
               models.Pattern.source_check)
        .join(models.Issue, models.Pattern.issue_id == models.Issue.id)
        .where(models.Pattern.status == "transferred",
               select(models.Candidate.id).where(models.Candidate.pattern_id == models.Pattern.id,
                                                 models.Candidate.status == "source").exists())
        .order_by(models.Pattern.id)
    )
    return [SourceReport(pid, f"{repo}#{number}", body or "", dict(check or {}))
            for pid, repo, number, body, check in session.execute(stmt)]


def source_state(session: Session, pattern_id: int) -> SourceState | None:
    row = session.execute(
        select(models.Pattern, models.Issue).join(models.Issue, models.Pattern.issue_id == models.Issue.id)
        .where(models.Pattern.id == pattern_id)
    ).first()
    if row is None:
        return None
    pattern, issue = row
    return SourceState(pattern.id, issue.state or "open", state_reason(issue.raw), dict(pattern.source_check or {}))


def source_harness(session: Session, harness_id: int) -> tuple[int, dict[str, Any]] | None:
    """(pattern id, the trigger the harness ran with) when the harness re-checks its pattern's own API, else None."""
    row = session.execute(
        select(models.Candidate.pattern_id, models.Candidate.status, models.Harness.spec)
        .join(models.Harness, models.Harness.candidate_id == models.Candidate.id)
        .where(models.Harness.id == harness_id)
    ).first()
    if row is None or row[1] != "source":
        return None
    spec = row[2] if isinstance(row[2], dict) else {}
    trigger = spec.get("trigger")
    return row[0], dict(trigger) if isinstance(trigger, dict) else {}


def save_source_recheck(session: Session, pattern_id: int, record: dict[str, Any], *, outcome: str,
                        basis: str | None, reproduces: bool | None) -> None:
    if outcome not in SOURCE_OUTCOMES:
        raise ValueError(f"unknown source re-check outcome {outcome!r}; expected one of {', '.join(SOURCE_OUTCOMES)}")
    if basis is not None and basis not in SOURCE_BASES:
        raise ValueError(f"unknown source re-check basis {basis!r}; expected one of {', '.join(SOURCE_BASES)}")
    pattern = session.get(models.Pattern, pattern_id)
    if pattern is None:
        raise LookupError(f"no pattern with id {pattern_id}")
    pattern.source_check = record
    pattern.source_outcome, pattern.source_basis, pattern.source_reproduces = outcome, basis, reproduces


def outcome_counts(session: Session) -> dict[str, int]:
    """Transferred patterns per re-check outcome ("not_checked" for those never re-checked)."""
    counts: dict[str, int] = {}
    for outcome, n in session.execute(
        select(models.Pattern.source_outcome, func.count()).where(models.Pattern.status == "transferred")
        .group_by(models.Pattern.source_outcome)
    ):
        key = outcome or "not_checked"
        counts[key] = counts.get(key, 0) + int(n)
    return dict(sorted(counts.items()))
