"""Finding and review queries: listing, the finding → harness → candidate → pattern → issue join, decisions.

Note [Finding lineage]
A finding belongs to a harness; the harness usually comes from a transfer candidate, which comes
from a pattern, which was extracted from an issue. A harness made directly (``fuzz api``) has no
candidate, so everything past the harness is optional: the join is an outer join and the
``FindingRecord`` fields for candidate, pattern and issue may be ``None``.

Note [Signature groups]
Findings with the same non-empty signature (API | mode pair | kind | location) describe one bug
and are reported once. A finding without a signature cannot be matched to anything, so it forms a
group of its own, keyed ``finding:<id>``. Groups are ordered by their oldest finding so that an
export is stable from one run to the next.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from db.base import utcnow
from db.models import Candidate, Finding, Harness, Issue, Pattern, Review
from db.status import REVIEW_STATUSES, VERDICTS

DECISIONS = ("accepted", "rejected")


class FindingNotFound(LookupError):
    """No finding with this id."""

    def __init__(self, finding_id: int) -> None:
        super().__init__(f"no finding with id {finding_id}")
        self.finding_id = finding_id


@dataclass
class IssueRef:
    id: int
    repo: str
    number: int
    title: str
    url: str
    state: str = ""  # open / closed


@dataclass
class PatternRef:
    id: int
    kind: str | None
    api: str | None
    reference_mode: str | None
    test_mode: str | None
    trigger: dict[str, Any]
    oracle: dict[str, Any]
    formal: str
    confidence: float
    source_reproduces: bool | None
    source_outcome: str | None = None  # db/queries/source_recheck.py
    source_recheck: str | None = None  # the stored re-check's one-line summary, with its basis
    source_recheck_detail: str = ""  # what the report's repro and the harness each said


@dataclass
class CandidateRef:
    id: int
    target_api: str
    score: float
    rationale: str
    adapted_trigger: dict[str, Any]


@dataclass
class ReviewRecord:
    id: int
    finding_id: int
    decision: str
    note: str
    reviewer: str
    created_at: datetime


@dataclass
class FindingRecord:
    """One finding with its lineage (see Note [Finding lineage])."""

    id: int
    harness_id: int
    run_id: int | None
    verdict: str
    reason: str
    evidence: dict[str, Any]
    repro: str
    signature: str
    review_status: str
    created_at: datetime
    harness_spec: dict[str, Any]
    candidate: CandidateRef | None = None
    pattern: PatternRef | None = None
    issue: IssueRef | None = None
    reviews: list[ReviewRecord] = field(default_factory=list)

    @property
    def group_key(self) -> str:
        """The dedup key: the signature, or the finding itself when it has none."""
        return self.signature or f"finding:{self.id}"


@dataclass
class SignatureGroup:
    key: str
    findings: list[FindingRecord]


def _check_values(name: str, values: Iterable[str] | None, allowed: Sequence[str]) -> list[str] | None:
    if values is None:
        return None
    chosen = list(values)
    bad = [v for v in chosen if v not in allowed]
    if bad:
        raise ValueError(f"unknown {name} {', '.join(map(repr, bad))}; expected some of {', '.join(allowed)}")
    return chosen or None


def _lineage_query() -> Select[tuple[Finding, Harness, Candidate | None, Pattern | None, Issue | None]]:
    return (
        select(Finding, Harness, Candidate, Pattern, Issue)
        .join(Harness, Finding.harness_id == Harness.id)
        .outerjoin(Candidate, Harness.candidate_id == Candidate.id)
        .outerjoin(Pattern, Candidate.pattern_id == Pattern.id)
        .outerjoin(Issue, Pattern.issue_id == Issue.id)
    )


def _record(
    finding: Finding,
    harness: Harness,
    candidate: Candidate | None,
    pattern: Pattern | None,
    issue: Issue | None,
) -> FindingRecord:
    return FindingRecord(
        id=finding.id,
        harness_id=finding.harness_id,
        run_id=finding.run_id,
        verdict=finding.verdict,
        reason=finding.reason or "",
        evidence=dict(finding.evidence or {}),
        repro=finding.repro or "",
        signature=finding.signature or "",
        review_status=finding.review_status,
        created_at=finding.created_at,
        harness_spec=dict(harness.spec or {}),
        candidate=None
        if candidate is None
        else CandidateRef(
            id=candidate.id,
            target_api=candidate.target_api,
            score=candidate.score,
            rationale=candidate.rationale or "",
            adapted_trigger=dict(candidate.adapted_trigger or {}),
        ),
        pattern=None
        if pattern is None
        else PatternRef(
            id=pattern.id,
            kind=pattern.kind,
            api=pattern.api,
            reference_mode=pattern.reference_mode,
            test_mode=pattern.test_mode,
            trigger=dict(pattern.trigger or {}),
            oracle=dict(pattern.oracle or {}),
            formal=pattern.formal or "",
            confidence=pattern.confidence,
            source_reproduces=pattern.source_reproduces,
            source_outcome=pattern.source_outcome,
            source_recheck=_recheck_text(pattern.source_check, "summary") or None,
            source_recheck_detail=_recheck_text(pattern.source_check, "detail"),
        ),
        issue=None
        if issue is None
        else IssueRef(id=issue.id, repo=issue.repo, number=issue.number, title=issue.title or "", url=issue.url or "",
                      state=issue.state or ""),
    )


def _recheck_text(source_check: dict[str, Any] | None, key: str) -> str:
    text = (source_check or {}).get(key)
    return text if isinstance(text, str) else ""


def _review_record(review: Review) -> ReviewRecord:
    return ReviewRecord(
        id=review.id,
        finding_id=review.finding_id,
        decision=review.decision,
        note=review.note or "",
        reviewer=review.reviewer,
        created_at=review.created_at,
    )


def list_findings(
    session: Session,
    *,
    review_statuses: Iterable[str] | None = None,
    verdicts: Iterable[str] | None = None,
    limit: int | None = None,
) -> list[FindingRecord]:
    """Findings with their lineage, oldest first, filtered by review status and verdict."""
    statuses = _check_values("review status", review_statuses, REVIEW_STATUSES)
    chosen_verdicts = _check_values("verdict", verdicts, VERDICTS)
    query = _lineage_query().order_by(Finding.id)
    if statuses:
        query = query.where(Finding.review_status.in_(statuses))
    if chosen_verdicts:
        query = query.where(Finding.verdict.in_(chosen_verdicts))
    if limit is not None:
        query = query.limit(limit)
    return [_record(*row) for row in session.execute(query).all()]


def get_finding(session: Session, finding_id: int) -> FindingRecord:
    """One finding with its lineage and its review history (oldest decision first)."""
    row = session.execute(_lineage_query().where(Finding.id == finding_id)).first()
    if row is None:
        raise FindingNotFound(finding_id)
    record = _record(*row)
    reviews = session.scalars(
        select(Review).where(Review.finding_id == finding_id).order_by(Review.created_at, Review.id)
    ).all()
    record.reviews = [_review_record(r) for r in reviews]
    return record


def record_review(
    session: Session,
    finding_id: int,
    *,
    decision: str,
    reviewer: str,
    note: str = "",
    at: datetime | None = None,
) -> ReviewRecord:
    """Store a decision and set the finding's review status; earlier decisions stay as history."""
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}; expected one of {', '.join(DECISIONS)}")
    if not reviewer:
        raise ValueError("a review needs a reviewer")
    finding = session.get(Finding, finding_id, with_for_update=True)
    if finding is None:
        raise FindingNotFound(finding_id)
    review = Review(finding_id=finding_id, decision=decision, note=note, reviewer=reviewer, created_at=at or utcnow())
    session.add(review)
    finding.review_status = decision
    session.flush()
    return _review_record(review)


def findings_for_export(session: Session, status: str) -> list[FindingRecord]:
    """Findings an export covers: ``confirmed`` = verdict confirmed and not rejected; ``accepted`` = accepted."""
    query = _lineage_query().order_by(Finding.id)
    if status == "confirmed":
        query = query.where(Finding.verdict == "confirmed", Finding.review_status != "rejected")
    elif status == "accepted":
        query = query.where(Finding.review_status == "accepted")
    else:
        raise ValueError(f"unknown export status {status!r}; expected confirmed or accepted")
    return [_record(*row) for row in session.execute(query).all()]


def group_by_signature(findings: Iterable[FindingRecord]) -> list[SignatureGroup]:
    """Findings grouped by signature, see Note [Signature groups]."""
    groups: dict[str, list[FindingRecord]] = {}
    for finding in sorted(findings, key=lambda f: f.id):
        groups.setdefault(finding.group_key, []).append(finding)
    return [SignatureGroup(key=key, findings=members) for key, members in groups.items()]


def signature_counts(session: Session, *, verdicts: Iterable[str] | None = None) -> dict[str, int]:
    """{signature: number of findings} for findings that carry a signature, largest first."""
    chosen = _check_values("verdict", verdicts, VERDICTS)
    query = select(Finding.signature, func.count()).where(Finding.signature != "").group_by(Finding.signature)
    if chosen:
        query = query.where(Finding.verdict.in_(chosen))
    rows = session.execute(query).all()
    return dict(sorted(((sig, n) for sig, n in rows), key=lambda item: (-item[1], item[0])))


def latest_notes(session: Session, finding_ids: Iterable[int]) -> dict[int, str]:
    """{finding id: the note of its latest review} for the findings that have a review with a note."""
    ids = list(finding_ids)
    if not ids:
        return {}
    rows = session.execute(
        select(Review.finding_id, Review.note).where(Review.finding_id.in_(ids), Review.note != "")
        .order_by(Review.created_at, Review.id)
    ).all()
    return {finding_id: note for finding_id, note in rows}  # later reviews overwrite earlier ones
