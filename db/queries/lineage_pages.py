"""One step of the lineage with its neighbours: issue → patterns → candidates → harnesses → findings.

Note [Lineage pages]
Each review page of a stage shows where its row came from (the previous stages, as links) and what came
of it (the next stage's rows, as links), so a maintainer can walk from a report to every finding it led
to and back. A candidate's findings are those of the harnesses made from it (Harness.candidate_id), so a
candidate with a finding says so and links it. A `fuzz api` harness has no candidate (and so no pattern
or issue): its page says it was made directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db.models import Candidate, Finding, Harness, Issue, Pattern


class LineageNotFound(LookupError):
    def __init__(self, what: str, row_id: int) -> None:
        super().__init__(f"no {what} with id {row_id}")
        self.row_id = row_id


@dataclass
class FindingLink:
    id: int
    verdict: str
    review_status: str
    harness_id: int
    created_at: datetime


@dataclass
class HarnessLink:
    id: int
    status: str
    api: str
    reference_mode: str
    test_mode: str
    run_id: int | None
    findings: list[FindingLink] = field(default_factory=list)


@dataclass
class CandidateLink:
    id: int
    target_api: str
    status: str
    score: float
    harnesses: int = 0
    findings: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)  # verdict -> findings of its harnesses


@dataclass
class PatternLink:
    id: int
    kind: str | None
    api: str | None
    reference_mode: str | None
    test_mode: str | None
    confidence: float
    status: str
    candidates: int = 0


@dataclass
class IssueLink:
    id: int
    repo: str
    number: int
    title: str
    state: str


@dataclass
class IssueLineage:
    issue: IssueLink
    labels: list[Any]
    created_at: datetime | None
    patterns: list[PatternLink]


@dataclass
class PatternLineage:
    pattern: PatternLink
    issue: IssueLink
    formal: str
    trigger: dict[str, Any]
    source_outcome: str | None
    error: str | None
    candidates: list[CandidateLink]


@dataclass
class HarnessLineage:
    harness: HarnessLink
    spec: dict[str, Any]
    attempts: int
    created_at: datetime
    candidate: CandidateLink | None
    pattern: PatternLink | None
    issue: IssueLink | None


def _issue_link(issue: Issue) -> IssueLink:
    return IssueLink(id=issue.id, repo=issue.repo, number=issue.number, title=issue.title or "", state=issue.state or "")


def _pattern_link(pattern: Pattern, candidates: int = 0) -> PatternLink:
    return PatternLink(id=pattern.id, kind=pattern.kind, api=pattern.api, reference_mode=pattern.reference_mode,
                       test_mode=pattern.test_mode, confidence=pattern.confidence, status=pattern.status,
                       candidates=candidates)


def _finding_link(finding: Finding) -> FindingLink:
    return FindingLink(id=finding.id, verdict=finding.verdict, review_status=finding.review_status,
                       harness_id=finding.harness_id, created_at=finding.created_at)


def _harness_link(harness: Harness, findings: list[FindingLink]) -> HarnessLink:
    spec = harness.spec or {}
    return HarnessLink(id=harness.id, status=harness.status, api=str(spec.get("api", "?")),
                       reference_mode=str(spec.get("reference_mode", "?")), test_mode=str(spec.get("test_mode", "?")),
                       run_id=harness.run_id, findings=findings)


def _findings_of(session: Session, harness_ids: list[int]) -> dict[int, list[FindingLink]]:
    if not harness_ids:
        return {}
    rows = session.scalars(select(Finding).where(Finding.harness_id.in_(harness_ids)).order_by(Finding.id)).all()
    found: dict[int, list[FindingLink]] = {}
    for finding in rows:
        found.setdefault(finding.harness_id, []).append(_finding_link(finding))
    return found


def candidate_harnesses(session: Session, candidate_id: int) -> list[HarnessLink]:
    """The harnesses made from a candidate, each with its findings (by Harness.candidate_id), oldest first."""
    harnesses = session.scalars(select(Harness).where(Harness.candidate_id == candidate_id).order_by(Harness.id)).all()
    findings = _findings_of(session, [h.id for h in harnesses])
    return [_harness_link(h, findings.get(h.id, [])) for h in harnesses]


def _candidate_links(session: Session, candidates: list[Candidate]) -> list[CandidateLink]:
    ids = [c.id for c in candidates]
    harnesses: dict[int, int] = {}
    verdicts: dict[int, dict[str, int]] = {}
    if ids:
        harnesses = {cid: int(n) for cid, n in session.execute(
            select(Harness.candidate_id, func.count()).where(Harness.candidate_id.in_(ids)).group_by(Harness.candidate_id))}
        for cid, verdict, n in session.execute(
            select(Harness.candidate_id, Finding.verdict, func.count()).join(Finding, Finding.harness_id == Harness.id)
            .where(Harness.candidate_id.in_(ids)).group_by(Harness.candidate_id, Finding.verdict)
        ):
            verdicts.setdefault(cid, {})[verdict] = int(n)
    return [CandidateLink(id=c.id, target_api=c.target_api, status=c.status, score=c.score,
                          harnesses=harnesses.get(c.id, 0), findings=sum(verdicts.get(c.id, {}).values()),
                          verdicts=dict(sorted(verdicts.get(c.id, {}).items())))
            for c in candidates]


def issue_lineage(session: Session, issue_id: int) -> IssueLineage:
    """An issue and the patterns extracted from it; LineageNotFound otherwise."""
    issue = session.get(Issue, issue_id)
    if issue is None:
        raise LineageNotFound("issue", issue_id)
    patterns = session.scalars(select(Pattern).where(Pattern.issue_id == issue_id).order_by(Pattern.id)).all()
    counts = dict(session.execute(select(Candidate.pattern_id, func.count())
                                  .where(Candidate.pattern_id.in_([p.id for p in patterns]))
                                  .group_by(Candidate.pattern_id)).all()) if patterns else {}
    return IssueLineage(issue=_issue_link(issue), labels=list(issue.labels or []), created_at=issue.created_at,
                        patterns=[_pattern_link(p, int(counts.get(p.id, 0))) for p in patterns])


def pattern_lineage(session: Session, pattern_id: int) -> PatternLineage:
    """A pattern, its issue, and the candidates transferred from it with their harness and finding counts."""
    pattern = session.get(Pattern, pattern_id)
    if pattern is None:
        raise LineageNotFound("pattern", pattern_id)
    candidates = session.scalars(select(Candidate).where(Candidate.pattern_id == pattern_id)
                                 .order_by(Candidate.score.desc(), Candidate.id)).all()
    links = _candidate_links(session, list(candidates))
    return PatternLineage(pattern=_pattern_link(pattern, len(links)), issue=_issue_link(pattern.issue),
                          formal=pattern.formal or "", trigger=dict(pattern.trigger or {}),
                          source_outcome=pattern.source_outcome, error=pattern.error, candidates=links)


def harness_lineage(session: Session, harness_id: int) -> HarnessLineage:
    """A harness, where it came from (candidate, pattern, issue; none for `fuzz api`) and its findings."""
    harness = session.get(Harness, harness_id)
    if harness is None:
        raise LineageNotFound("harness", harness_id)
    candidate = pattern = issue = None
    if harness.candidate is not None:
        candidate = _candidate_links(session, [harness.candidate])[0]
        pattern = _pattern_link(harness.candidate.pattern)
        issue = _issue_link(harness.candidate.pattern.issue)
    findings = _findings_of(session, [harness.id]).get(harness.id, [])
    return HarnessLineage(harness=_harness_link(harness, findings), spec=dict(harness.spec or {}),
                          attempts=harness.attempts, created_at=harness.created_at, candidate=candidate,
                          pattern=pattern, issue=issue)


def candidate_issue_id(session: Session, candidate_id: int) -> int | None:
    """The local id of the issue a candidate's pattern came from."""
    return session.scalar(select(Pattern.issue_id).join(Candidate, Candidate.pattern_id == Pattern.id)
                          .where(Candidate.id == candidate_id))
