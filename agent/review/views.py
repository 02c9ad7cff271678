"""Pydantic views of findings and reviews: what `review list/show --json` and the web API emit."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from agent.cli.json_out import Measure
from agent.review import lineage
from agent.review.values import FindingValues
from agent.transfer.source_recheck import recheck_text
from db.queries.findings import FindingRecord, ReviewRecord
from fuzz_core.evidence import Evidence


class ReviewView(BaseModel):
    id: int
    finding_id: int
    decision: str
    note: str
    reviewer: str
    created_at: datetime

    @classmethod
    def of(cls, review: ReviewRecord) -> ReviewView:
        return cls(
            id=review.id,
            finding_id=review.finding_id,
            decision=review.decision,
            note=review.note,
            reviewer=review.reviewer,
            created_at=review.created_at,
        )


class FindingSummary(BaseModel):
    """One line of `review list`."""

    id: int
    verdict: str
    review_status: str
    target_api: str
    kind: str
    reference_mode: str
    test_mode: str
    dtype: str | None
    max_abs_diff: Measure  # Note [Non-finite numbers in --json]
    signature: str
    source_issue: str | None
    created_at: datetime
    review_note: str = ""  # the latest review's note ("" when none)

    @classmethod
    def of(cls, finding: FindingRecord) -> FindingSummary:
        reference, test = lineage.mode_pair(finding)
        diff = Evidence.of(finding.evidence).max_abs_diff
        return cls(
            id=finding.id,
            verdict=finding.verdict,
            review_status=finding.review_status,
            target_api=lineage.target_api(finding),
            kind=lineage.kind(finding),
            reference_mode=reference,
            test_mode=test,
            dtype=lineage.dtype(finding),
            max_abs_diff=diff if isinstance(diff, (int, float, str)) and not isinstance(diff, bool) else None,
            signature=finding.signature,
            source_issue=lineage.source_issue_ref(finding),
            created_at=finding.created_at,
        )


class SourceIssueView(BaseModel):
    repo: str
    number: int
    title: str
    url: str
    id: int | None = None  # the issue's id in this database (the review page's /issues/{id})


class PatternView(BaseModel):
    id: int
    kind: str | None
    api: str | None
    formal: str
    confidence: float
    source_reproduces: bool | None
    source_recheck: str = "not checked"  # the source re-check with its basis (agent/transfer/source_recheck.py)
    source_recheck_detail: str = ""  # what the report's repro and the harness each said


class CandidateView(BaseModel):
    id: int
    target_api: str
    score: float
    rationale: str


class FindingDetail(FindingSummary):
    """Everything `review show` prints."""

    harness_id: int
    run_id: int | None
    reason: str
    evidence: dict[str, Any]
    repro: str
    trigger: dict[str, Any]
    source: SourceIssueView | None
    pattern: PatternView | None
    candidate: CandidateView | None
    reviews: list[ReviewView]
    values: FindingValues | None = None  # read by `review show` (agent/review/values.py)

    @classmethod
    def of(cls, finding: FindingRecord) -> FindingDetail:
        summary = FindingSummary.of(finding).model_dump()
        return cls(
            **summary,
            harness_id=finding.harness_id,
            run_id=finding.run_id,
            reason=finding.reason,
            evidence=finding.evidence,
            repro=finding.repro,
            trigger=lineage.trigger(finding),
            source=None
            if finding.issue is None
            else SourceIssueView(
                id=finding.issue.id,
                repo=finding.issue.repo,
                number=finding.issue.number,
                title=finding.issue.title,
                url=lineage.source_issue_url(finding) or "",
            ),
            pattern=None
            if finding.pattern is None
            else PatternView(
                id=finding.pattern.id,
                kind=finding.pattern.kind,
                api=finding.pattern.api,
                formal=formal_text(finding),
                confidence=finding.pattern.confidence,
                source_reproduces=finding.pattern.source_reproduces,
                source_recheck=recheck_text(finding.pattern.source_recheck, finding.pattern.source_reproduces),
                source_recheck_detail=finding.pattern.source_recheck_detail,
            ),
            candidate=None
            if finding.candidate is None
            else CandidateView(
                id=finding.candidate.id,
                target_api=finding.candidate.target_api,
                score=finding.candidate.score,
                rationale=finding.candidate.rationale,
            ),
            reviews=[ReviewView.of(r) for r in finding.reviews],
        )


def formal_text(finding: FindingRecord) -> str:
    """The pattern in formal notation: the stored text, else printed from the pattern's columns."""
    pattern = finding.pattern
    if pattern is None:
        return ""
    if pattern.formal:
        return pattern.formal
    from pydantic import ValidationError

    from agent.patterns.schema import BugPattern

    try:
        rebuilt = BugPattern.model_validate(
            {
                "kind": pattern.kind,
                "api": pattern.api,
                "reference_mode": {"name": pattern.reference_mode},
                "test_mode": {"name": pattern.test_mode},
                "trigger": pattern.trigger,
                "oracle": pattern.oracle,
            }
        )
    except ValidationError:
        return ""  # a pattern too incomplete to print; the caller says so
    return rebuilt.to_formal()
