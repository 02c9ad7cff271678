"""The JSON API's request and response shapes (the pages render the same objects)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.review.views import FindingDetail, FindingSummary, ReviewView
from agent.web.checks import CheckStatus
from db.queries.lineage_pages import FindingLink, HarnessLink


class QueueResponse(BaseModel):
    items: list[FindingSummary]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
    counts: dict[str, int] = Field(description="Findings per review status under every other filter.")


class DuplicateView(BaseModel):
    id: int
    verdict: str
    review_status: str


class CheckView(BaseModel):
    name: str
    status: CheckStatus
    detail: str


class FindingResponse(BaseModel):
    finding: FindingDetail
    harness_spec: dict[str, Any] = Field(description="The harness that ran, as stored.")
    source_issue_url: str | None = Field(description="Built from the issue's repo and number, never from stored text.")
    checks: list[CheckView]
    duplicates: list[DuplicateView]
    plot_url: str | None
    plot_kind: Literal["elements", "summary"] | None = Field(
        default=None, description="elements: per-element error against fp64 from saved outputs; summary: the stored errors.")


class DecisionRequest(BaseModel):
    decision: Literal["accepted", "rejected"]
    note: str = ""
    reviewer: str | None = Field(default=None, description="Defaults to the reviewer the server was started for.")


class HistoryResponse(BaseModel):
    reviews: list[ReviewView]
    next_before: int | None


class CampaignView(BaseModel):
    id: int
    command: str
    started_at: datetime
    ended_at: datetime | None
    heartbeat_at: datetime | None
    exit_reason: str | None
    running: bool
    executions: int
    tasks_done: int
    executions_per_s: float | None
    harnesses: dict[str, int]
    verdicts: dict[str, int]


class CampaignsResponse(BaseModel):
    pending_harnesses: int
    campaigns: list[CampaignView]


class CandidateSummary(BaseModel):
    """One row of the candidate queue: a proposed transferred bug with no finding yet."""

    id: int
    target_api: str
    status: str
    score: float
    kind: str | None
    reference_mode: str | None
    test_mode: str | None
    source_api: str | None
    source_issue: str | None = Field(description="owner/repo#N of the issue the pattern came from.")
    matcher: str | None
    created_at: datetime


class CandidateQueueResponse(BaseModel):
    items: list[CandidateSummary]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
    counts: dict[str, int] = Field(description="Candidates without a finding per status, under every other filter.")


class CandidateSource(BaseModel):
    repo: str
    number: int
    title: str
    url: str | None = Field(description="Built from the issue's repo and number, never from stored text.")


class CandidatePattern(BaseModel):
    id: int
    kind: str | None
    api: str | None
    formal: str
    confidence: float
    trigger: dict[str, Any]


class CandidateDetail(CandidateSummary):
    """The candidate page: issue → pattern → transfer rationale (matcher, score, check) → adapted trigger."""

    rationale: str
    ranking: str = Field(description="The ranker's reasons, without the check's.")
    check: str | None = Field(description="What the transfer check (LLM or offline gate) said; null when none ran.")
    adapted_trigger: dict[str, Any]
    trigger_text: str
    harnesses: int
    source: CandidateSource | None
    pattern: CandidatePattern
    issue_id: int | None = Field(default=None, description="The source issue's id here (its page: /issues/{id}).")
    harness_rows: list[HarnessLink] = Field(
        default=[], description="The harnesses made from it, each with its findings (Note [Lineage pages]).")

    @property
    def findings(self) -> list[FindingLink]:
        return [f for h in self.harness_rows for f in h.findings]
