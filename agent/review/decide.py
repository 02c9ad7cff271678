"""Record a reviewer's decision on a finding: who, when, accepted or rejected, and why."""

from __future__ import annotations

import getpass
import os

from pydantic import BaseModel, field_validator, model_validator
from sqlalchemy.orm import Session

from db.queries.findings import DECISIONS, ReviewRecord, record_review


class ReviewInputError(ValueError):
    """A decision that cannot be stored as given (unknown decision, reject without a note)."""


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


def decide(session: Session, decision: Decision) -> ReviewRecord:
    """Store the decision in the given session; returns the stored ReviewRecord."""
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
