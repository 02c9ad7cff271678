"""Record a reviewer's decision on a finding: who, when, accepted or rejected, and why."""

from __future__ import annotations

import getpass
import os

from pydantic import BaseModel, field_validator, model_validator
from sqlalchemy.orm import Session

from db.queries.findings import DECISIONS, ReviewRecord, record_review


class ReviewInputError(ValueError):
    """A decision that cannot be stored as given (unknown decision, reject without a note)."""


class RepeatedDecision(ReviewInputError):
    """The decision repeats the finding's last one (accept an accepted finding): nothing is stored."""

    def __init__(self, last: ReviewRecord) -> None:
        when = last.created_at.strftime("%Y-%m-%d %H:%M UTC")
        because = f" ({last.note})" if last.note else ""
        super().__init__(f"finding {last.finding_id} is already {last.decision}: {last.reviewer} decided so on "
                         f"{when}{because}; nothing recorded (a different decision replaces it)")
        self.last = last


class Decision(BaseModel):
    """A decision as the command line or the web page hands it in."""

    finding_id: int
    decision: str
    reviewer: str
    note: str = ""

    @field_validator("decision")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(DECISIONS)}")
        return value

    @field_validator("reviewer", "note")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @model_validator(mode="after")
    def _rules(self) -> Decision:
        if not self.reviewer:
            raise ValueError("a decision needs a reviewer")
        # A rejection without a reason teaches nobody anything about the false-alarm class.
        if self.decision == "rejected" and not self.note:
            raise ValueError("a rejection needs a note saying why")
        return self


def default_reviewer() -> str:
    """The reviewer's name when none is given: $USER, else the login name."""
    name = os.environ.get("USER", "").strip()
    if name:
        return name
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no passwd entry (containers)
        return "unknown"


def last_decision(session: Session, finding_id: int) -> ReviewRecord | None:
    """The finding's latest decision, None before the first."""
    from sqlalchemy import select

    from db.models import Review

    review = session.scalars(
        select(Review).where(Review.finding_id == finding_id).order_by(Review.created_at.desc(), Review.id.desc()).limit(1)
    ).first()
    return None if review is None else ReviewRecord(id=review.id, finding_id=review.finding_id, decision=review.decision,
                                                    note=review.note or "", reviewer=review.reviewer,
                                                    created_at=review.created_at)


def decide(session: Session, decision: Decision, *, allow_repeat: bool = True) -> ReviewRecord:
    """Store the decision in the given session; returns the stored ReviewRecord.

    allow_repeat=False (the review page and its API): a decision equal to the finding's last one is not
    stored again but refused with RepeatedDecision, which says who decided so and when; the finding's row
    is locked first, so two identical submissions at once store one decision.
    """
    if not allow_repeat:
        from db.models import Finding
        from db.queries.findings import FindingNotFound

        finding = session.get(Finding, decision.finding_id, with_for_update=True)
        if finding is None:
            raise FindingNotFound(decision.finding_id)
        last = last_decision(session, decision.finding_id)
        if last is not None and last.decision == decision.decision and finding.review_status == decision.decision:
            raise RepeatedDecision(last)
    return record_review(
        session,
        decision.finding_id,
        decision=decision.decision,
        reviewer=decision.reviewer,
        note=decision.note,
    )


def make_decision(finding_id: int, decision: str, reviewer: str | None, note: str | None) -> Decision:
    """Validate a decision; ReviewInputError with a one-line message when it is not acceptable."""
    from pydantic import ValidationError

    try:
        return Decision(
            finding_id=finding_id,
            decision=decision,
            reviewer=reviewer if reviewer is not None else default_reviewer(),
            note=note or "",
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first.get("msg", exc)).removeprefix("Value error, ")
        raise ReviewInputError(message) from None
