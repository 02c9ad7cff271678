"""Decision history across findings: who decided what, when, newest first, one keyset page at a time.

A finding's own history comes with ``findings.get_finding``; this is the reviewers' log.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import Review
from db.queries.findings import ReviewRecord, _review_record


@dataclass
class HistoryPage:
    reviews: list[ReviewRecord]
    next_before: int | None  # pass as ``before`` for the next page; None on the last one


def decision_history(
    session: Session, *, before: int | None = None, limit: int = 50, reviewer: str | None = None
) -> HistoryPage:
    """Decisions newest first; ``before`` is the review id the previous page ended at."""
    if not 1 <= limit <= 500:
        raise ValueError(f"page size must be between 1 and 500, got {limit}")
    query = select(Review).order_by(Review.id.desc())
    if before is not None:
        query = query.where(Review.id < before)
    if reviewer:
        query = query.where(Review.reviewer == reviewer)
    rows = session.scalars(query.limit(limit + 1)).all()
    page = [_review_record(r) for r in rows[:limit]]
    return HistoryPage(reviews=page, next_before=page[-1].id if len(rows) > limit and page else None)
