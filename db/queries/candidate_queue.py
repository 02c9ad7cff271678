"""The candidate queue: proposed transferred bugs that have no finding yet, keyset-paged, with counts per status.

A candidate leaves this queue when any harness made from it has a finding (it is then reviewed as
that finding). Paging follows Note [Keyset paging] in queue.py: newest first by candidate id, the
cursor holding the last id, never ``OFFSET``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, exists, func, select
from sqlalchemy.orm import Session

from db.models import Candidate, Finding, Harness, Issue, Pattern
from db.queries.findings import _check_values
from db.queries.queue import MAX_PAGE_SIZE, QueueInputError, decode_cursor, encode_cursor, parse_issue_ref
from db.status import CANDIDATE_STATUSES

# "source" is the row transfer keeps for re-checking the source API itself (agent/transfer/stage.py).
QUEUE_CANDIDATE_STATUSES = (*CANDIDATE_STATUSES, "source")


class CandidateNotFound(LookupError):
    def __init__(self, candidate_id: int) -> None:
        super().__init__(f"no candidate with id {candidate_id}")
        self.candidate_id = candidate_id


@dataclass
class CandidateFilter:
    statuses: list[str] = field(default_factory=list)
    kind: str | None = None
    reference_mode: str | None = None
    test_mode: str | None = None
    api: str | None = None  # the target API
    source_issue: str | None = None  # "owner/repo#N"

    def __post_init__(self) -> None:
        _check_values("candidate status", self.statuses, QUEUE_CANDIDATE_STATUSES)
        if self.source_issue is not None:
            parse_issue_ref(self.source_issue)


@dataclass
class CandidateRow:
    id: int
    target_api: str
    score: float
    rationale: str
    adapted_trigger: dict[str, Any]
    status: str
    created_at: datetime
    pattern_id: int
    pattern_kind: str | None
    pattern_api: str | None
    reference_mode: str | None
    test_mode: str | None
    formal: str
    confidence: float
    trigger: dict[str, Any]
    issue_repo: str | None
    issue_number: int | None
    issue_title: str | None
    harnesses: int = 0  # filled for one candidate (candidate_by_id), 0 in pages


@dataclass
class CandidatePage:
    candidates: list[CandidateRow]
    next_cursor: str | None
    counts: dict[str, int]  # candidate status -> candidates without a finding under every other filter


def _without_finding() -> ColumnElement[bool]:
    has_finding = (
        select(Finding.id).join(Harness, Finding.harness_id == Harness.id).where(Harness.candidate_id == Candidate.id)
    )
    return ~exists(has_finding)


def _joined(query: Select[Any]) -> Select[Any]:
    return query.join(Pattern, Candidate.pattern_id == Pattern.id).outerjoin(Issue, Pattern.issue_id == Issue.id)


def _conditions(flt: CandidateFilter, *, with_status: bool = True) -> list[ColumnElement[bool]]:
    conditions = [_without_finding()]
    if with_status and flt.statuses:
        conditions.append(Candidate.status.in_(flt.statuses))
    if flt.kind:
        conditions.append(Pattern.kind == flt.kind)
    if flt.reference_mode:
        conditions.append(Pattern.reference_mode == flt.reference_mode)
    if flt.test_mode:
        conditions.append(Pattern.test_mode == flt.test_mode)
    if flt.api:
        conditions.append(Candidate.target_api == flt.api)
    if flt.source_issue:
        repo, number = parse_issue_ref(flt.source_issue)
        conditions.append(and_(Issue.repo == repo, Issue.number == number))
    return conditions


def _row(candidate: Candidate, pattern: Pattern, issue: Issue | None) -> CandidateRow:
    return CandidateRow(
        id=candidate.id, target_api=candidate.target_api, score=candidate.score, rationale=candidate.rationale or "",
        adapted_trigger=dict(candidate.adapted_trigger or {}), status=candidate.status, created_at=candidate.created_at,
        pattern_id=pattern.id, pattern_kind=pattern.kind, pattern_api=pattern.api,
        reference_mode=pattern.reference_mode, test_mode=pattern.test_mode, formal=pattern.formal or "",
        confidence=pattern.confidence, trigger=dict(pattern.trigger or {}),
        issue_repo=issue.repo if issue else None, issue_number=issue.number if issue else None,
        issue_title=issue.title if issue else None,
    )


def candidate_status_counts(session: Session, flt: CandidateFilter) -> dict[str, int]:
    query = _joined(select(Candidate.status, func.count()).select_from(Candidate)).group_by(Candidate.status)
    found = dict(session.execute(query.where(*_conditions(flt, with_status=False))).all())
    return {status: int(found.get(status, 0)) for status in QUEUE_CANDIDATE_STATUSES}


def candidate_page(session: Session, flt: CandidateFilter, *, cursor: str | None = None, limit: int = 50,
                   with_counts: bool = True) -> CandidatePage:
    """One page of candidates without a finding, newest first, and the cursor of the next (None on the last)."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise QueueInputError(f"page size must be between 1 and {MAX_PAGE_SIZE}, got {limit}")
    query = _joined(select(Candidate, Pattern, Issue).select_from(Candidate)).where(*_conditions(flt))
    if cursor:
        key, last_id = decode_cursor(cursor)
        if key is not None:
            raise QueueInputError("the page cursor belongs to another list; start from the first page")
        query = query.where(Candidate.id < last_id)
    rows = session.execute(query.order_by(Candidate.id.desc()).limit(limit + 1)).all()
    more = len(rows) > limit
    candidates = [_row(*row) for row in rows[:limit]]
    next_cursor = encode_cursor(None, candidates[-1].id) if more and candidates else None
    counts = candidate_status_counts(session, flt) if with_counts else {}
    return CandidatePage(candidates=candidates, next_cursor=next_cursor, counts=counts)


def candidate_by_id(session: Session, candidate_id: int) -> CandidateRow:
    """One candidate with its lineage and how many harnesses were made from it; CandidateNotFound otherwise."""
    found = session.execute(
        _joined(select(Candidate, Pattern, Issue).select_from(Candidate)).where(Candidate.id == candidate_id)
    ).first()
    if found is None:
        raise CandidateNotFound(candidate_id)
    row = _row(*found)
    row.harnesses = int(session.scalar(select(func.count()).where(Harness.candidate_id == candidate_id)) or 0)
    return row
