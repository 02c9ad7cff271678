"""The lineage pages: issue → patterns → candidates → harnesses → findings, each linking the next and the previous
(Note [Lineage pages] in db/queries/lineage_pages.py). The candidate and finding pages live in pages.py."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from agent.review.lineage import github_issue_url
from agent.web.app import config_of
from agent.web.pages import _render
from db.queries.lineage_pages import LineageNotFound, harness_lineage, issue_lineage, pattern_lineage

router = APIRouter(include_in_schema=False)


def _load(request: Request, loader, row_id: int):  # type: ignore[no-untyped-def]
    try:
        with config_of(request).store.session() as session:
            return loader(session, row_id)
    except LineageNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


@router.get("/issues/{issue_id}")
def issue_page(request: Request, issue_id: int) -> HTMLResponse:
    data = _load(request, issue_lineage, issue_id)
    return _render(request, "issue.html", d=data, url=github_issue_url(data.issue.repo, data.issue.number))


@router.get("/patterns/{pattern_id}")
def pattern_page(request: Request, pattern_id: int) -> HTMLResponse:
    data = _load(request, pattern_lineage, pattern_id)
    return _render(request, "pattern.html", d=data)


@router.get("/harnesses/{harness_id}")
def harness_page(request: Request, harness_id: int) -> HTMLResponse:
    return _render(request, "harness.html", d=_load(request, harness_lineage, harness_id))
