"""The JSON API under /api: the same operations as the pages, for scripts and CI (schema at /api/openapi.json)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, Response

from agent.review.decide import RepeatedDecision, ReviewInputError
from agent.review.views import ReviewView
from agent.web import service
from agent.web.app import config_of
from agent.web.params import candidate_filter, queue_filter
from agent.web.security import TOKEN_COOKIE, may_read_files
from agent.web.schemas import (
    CampaignsResponse,
    CandidateDetail,
    CandidateQueueResponse,
    DecisionRequest,
    FindingResponse,
    HistoryResponse,
    QueueResponse,
)
from db.queries.candidate_queue import CandidateFilter, CandidateNotFound
from db.queries.findings import FindingNotFound
from db.queries.queue import MAX_PAGE_SIZE, QueueFilter, QueueInputError

router = APIRouter(prefix="/api", tags=["review"])


@router.get("/findings", response_model=QueueResponse)
def list_findings(
    request: Request,
    flt: Annotated[QueueFilter, Depends(queue_filter)],
    sort: Literal["newest", "oldest", "verdict", "api"] = "newest",
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 50,
) -> QueueResponse:
    """One page of the review queue (keyset paging: pass `next_cursor` back as `cursor`)."""
    try:
        return service.load_queue(config_of(request).store, flt, sort=sort, cursor=cursor or None, limit=limit)
    except QueueInputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


@router.get("/findings/{finding_id}", response_model=FindingResponse)
def show_finding(request: Request, finding_id: int) -> FindingResponse:
    """A finding with its lineage, checks, possible duplicates and decision history."""
    try:
        return service.load_finding(config_of(request).store, finding_id)
    except FindingNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


@router.get("/candidates", response_model=CandidateQueueResponse)
def list_candidates(
    request: Request,
    flt: Annotated[CandidateFilter, Depends(candidate_filter)],
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 50,
) -> CandidateQueueResponse:
    """Proposed transferred bugs with no finding yet, newest first (keyset paging as for findings)."""
    try:
        return service.load_candidates(config_of(request).store, flt, cursor=cursor or None, limit=limit)
    except QueueInputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


@router.get("/candidates/{candidate_id}", response_model=CandidateDetail)
def show_candidate(request: Request, candidate_id: int) -> CandidateDetail:
    """A candidate with its lineage: source issue, pattern, rationale (matcher, score, transfer check)."""
    try:
        return service.load_candidate(config_of(request).store, candidate_id)
    except CandidateNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


@router.post("/findings/{finding_id}/decision", response_model=ReviewView, status_code=201,
             responses={409: {"description": "The decision repeats the finding's last one; nothing was stored."}})
def decide_finding(
    request: Request,
    finding_id: int,
    body: DecisionRequest,
    authorization: Annotated[str | None, Header()] = None,
) -> ReviewView:
    """Accept or reject a finding; needs `Authorization: Bearer <review token>`. A rejection needs a note.
    Repeating the finding's last decision stores nothing and answers 409 saying who decided so and when."""
    config = config_of(request)
    if not config.auth.bearer_ok(authorization):
        raise HTTPException(status_code=401, detail="a decision needs the review token as 'Authorization: Bearer …'",
                            headers={"WWW-Authenticate": "Bearer"})
    try:
        return service.record_decision(config.store, finding_id, body.decision, body.note, body.reviewer or config.reviewer)
    except RepeatedDecision as exc:  # the finding already has this decision: nothing stored
        raise HTTPException(status_code=409, detail=str(exc)) from None
    except ReviewInputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    except FindingNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


@router.get("/reviews", response_model=HistoryResponse)
def list_reviews(
    request: Request,
    before: int | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> HistoryResponse:
    """Decisions newest first, who and when; pass `next_before` back as `before` for older ones."""
    return service.load_history(config_of(request).store, before=before, limit=limit)


@router.get("/campaigns", response_model=CampaignsResponse)
def list_campaigns(request: Request) -> CampaignsResponse:
    """Progress of the newest campaigns: harnesses, executions per second, verdicts."""
    return service.load_campaigns(config_of(request).store)


@router.get("/export", response_class=Response, responses={200: {"content": {"application/zip": {}}}})
def export(
    request: Request,
    id: Annotated[list[int], Query(description="Finding ids, repeatable.")] = [],  # noqa: B006
    format: Literal["markdown", "json"] = "markdown",  # noqa: A002 - the query parameter's name
    rejected: Annotated[Literal["exclude", "include"], Query(
        description="Findings a reviewer rejected: left out (default; their ids in the X-TransFuzz-Excluded-Rejected "
                    "header) or included.")] = "exclude",
    authorization: Annotated[str | None, Header()] = None,
) -> Response:
    """The chosen findings in `transfuzz export`'s report format, as a zip; needs the review token (it holds inputs).
    The same grouping and reports as `transfuzz export` for the same findings."""
    if not may_read_files(config_of(request).auth, authorization, request.cookies.get(TOKEN_COOKIE)):
        raise HTTPException(status_code=401, detail="an export holds saved inputs: it needs the review token as "
                            "'Authorization: Bearer …'", headers={"WWW-Authenticate": "Bearer"})
    store = config_of(request).store
    left_out = [] if rejected == "include" else [c.id for c in service.rejected_choices(store, id)]
    data = service.export_selection(store, id, format, include_rejected=rejected == "include")
    headers = {"Content-Disposition": 'attachment; filename="transfuzz-export.zip"'}
    if left_out:
        headers["X-TransFuzz-Excluded-Rejected"] = ",".join(str(i) for i in left_out)
    return Response(data, media_type="application/zip", headers=headers)
