"""Server-rendered pages: queue, finding (with the decision forms), history, campaigns, login, export."""

from __future__ import annotations

import math
from http import HTTPStatus
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from agent.review.decide import RepeatedDecision, ReviewInputError
from agent.review.values import finding_values
from agent.web import service
from agent.web.app import WebConfig, config_of
from agent.web.format import input_rows, verdict_sentence
from agent.web.highlight import highlight_python, stylesheet
from agent.web.params import candidate_filter, candidate_filter_query, filter_query, queue_filter
from agent.web.security import TOKEN_COOKIE, same_origin
from agent.web.triage import DEFAULT_STATUSES, DEFAULT_VERDICTS, grouped_queue
from agent.web.worst import value_table
from db.queries.candidate_queue import QUEUE_CANDIDATE_STATUSES, CandidateFilter, CandidateNotFound
from db.queries.findings import FindingNotFound
from db.queries.queue import SORTS, QueueFilter, QueueInputError
from db.status import REVIEW_STATUSES, VERDICTS
from fuzz_core.evidence import EVIDENCE_FIELDS, Evidence

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 50


def _signed_in(request: Request, config: WebConfig) -> bool:
    return config.auth.matches(request.cookies.get(TOKEN_COOKIE))


def _render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    config = config_of(request)
    context.update(
        signed_in=_signed_in(request, config),
        csrf=config.auth.csrf if _signed_in(request, config) else "",
        reviewer=config.reviewer,
    )
    return request.app.state.templates.TemplateResponse(request, name, context, status_code=status_code)


def render_error(request: Request, status_code: int, detail: str, headers: dict[str, str] | None = None) -> HTMLResponse:
    """An error as a page of the site (app.error_response sends /api errors as JSON instead)."""
    try:
        title = HTTPStatus(status_code).phrase
    except ValueError:
        title = "Error"
    response = _render(request, "error.html", status_code=status_code, code=status_code, title=title, detail=detail)
    response.headers.update(headers or {})
    return response


def _check_write(request: Request, csrf: str) -> WebConfig:
    """A page POST must carry the cookie, the CSRF field, and (when sent) this server's Origin."""
    config = config_of(request)
    if not _signed_in(request, config):
        raise HTTPException(status_code=403, detail="sign in with the review token first (open /login?token=…)")
    if not config.auth.csrf_ok(csrf) or not same_origin(request.headers.get("origin"), request.headers.get("host")):
        raise HTTPException(status_code=403, detail="the form did not come from this page; reload it and try again")
    return config


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/queue", status_code=303)


def _sign_in(request: Request, token: str | None) -> Response:
    config = config_of(request)
    if not config.auth.matches(token):
        return _render(request, "login.html", status_code=403 if token else 200, failed=bool(token))
    response = RedirectResponse("/queue", status_code=303)
    response.set_cookie(TOKEN_COOKIE, config.auth.token, httponly=True, samesite="strict", path="/")
    return response


@router.get("/login")
def login_page(request: Request, token: str | None = None) -> Response:
    return _sign_in(request, token)


@router.post("/login")
def login_form(request: Request, token: Annotated[str, Form()] = "") -> Response:
    return _sign_in(request, token or None)


@router.get("/queue", response_model=None)
def queue(
    request: Request,
    flt: Annotated[QueueFilter, Depends(queue_filter)],
    sort: str = "newest",
    cursor: str | None = None,
) -> Response:
    if not request.url.query:  # what needs a decision, with the filter in the URL (Note [Queue groups])
        pairs = [("status", s) for s in DEFAULT_STATUSES] + [("verdict", v) for v in DEFAULT_VERDICTS]
        return RedirectResponse(f"/queue?{urlencode(pairs)}", status_code=303)
    try:
        with config_of(request).store.session() as session:
            page = grouped_queue(session, flt, sort=sort, cursor=cursor or None)
    except QueueInputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    pairs = filter_query(flt)
    run_pairs = [("run", str(flt.run_id))] if flt.run_id is not None else []
    return _render(
        request,
        "queue.html",
        page=page,
        flt=flt,
        sort=sort,
        sorts=list(SORTS),
        statuses=REVIEW_STATUSES,
        verdicts=VERDICTS,
        filter_qs=urlencode(pairs),
        next_qs=urlencode([*pairs, ("sort", sort), ("cursor", page.next_cursor)]) if page.next_cursor else None,
        first_page=not cursor,
        status_qs={s: urlencode([p for p in pairs if p[0] != "status"] + [("status", s), ("sort", sort)]) for s in REVIEW_STATUSES},
        cell_qs={(v, s): urlencode([("verdict", v), ("status", s), *run_pairs]) for v in VERDICTS for s in REVIEW_STATUSES},
        is_default=sorted(flt.review_statuses) == sorted(DEFAULT_STATUSES) and sorted(flt.verdicts) == sorted(DEFAULT_VERDICTS),
        everything_qs=urlencode([("status", ""), *run_pairs]),
    )


@router.get("/candidates")
def candidates(
    request: Request,
    flt: Annotated[CandidateFilter, Depends(candidate_filter)],
    cursor: str | None = None,
) -> HTMLResponse:
    try:
        page = service.load_candidates(config_of(request).store, flt, cursor=cursor or None, limit=PAGE_SIZE)
    except QueueInputError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    pairs = candidate_filter_query(flt)
    return _render(
        request,
        "candidates.html",
        page=page,
        flt=flt,
        statuses=QUEUE_CANDIDATE_STATUSES,
        filter_qs=urlencode(pairs),
        next_qs=urlencode([*pairs, ("cursor", page.next_cursor)]) if page.next_cursor else None,
        first_page=not cursor,
        status_qs={s: urlencode([p for p in pairs if p[0] != "status"] + [("status", s)]) for s in QUEUE_CANDIDATE_STATUSES},
    )


@router.get("/candidates/{candidate_id}")
def candidate_page(request: Request, candidate_id: int) -> HTMLResponse:
    try:
        data = service.load_candidate(config_of(request).store, candidate_id)
    except CandidateNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return _render(request, "candidate.html", c=data)


@router.get("/findings/{finding_id}")
def finding_page(
    request: Request,
    finding_id: int,
    flt: Annotated[QueueFilter, Depends(queue_filter)],
    decided: str | None = None,
) -> HTMLResponse:
    return _finding(request, finding_id, flt, decided=decided)


# The figures the page's evidence section lists, in this order (typed Evidence fields; absent ones are left out).
EVIDENCE_FIGURES = ("max_abs_diff", "max_rel_diff", "mismatch_count", "first_index", "ref_error_vs_fp64",
                    "test_error_vs_fp64", "location", "torch_version")
assert set(EVIDENCE_FIGURES) <= EVIDENCE_FIELDS


def evidence_figures(evidence: Evidence) -> list[tuple[str, Any]]:
    return [(name, getattr(evidence, name)) for name in EVIDENCE_FIGURES if getattr(evidence, name) not in (None, "")]


def _finding(request: Request, finding_id: int, flt: QueueFilter, *, decided: str | None = None,
             error: str | None = None, note: str = "", decision: str | None = None,
             status_code: int = 200) -> HTMLResponse:
    store = config_of(request).store
    try:
        data = service.load_finding(store, finding_id)
    except FindingNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    newer, older = service.finding_neighbours(store, flt, finding_id)
    filter_qs = urlencode(filter_query(flt))
    evidence = Evidence.of(data.finding.evidence)
    f = data.finding
    table = value_table(evidence, f.reference_mode, f.test_mode)
    total = table.total if table is not None else None
    if total is None and evidence.output_shape:
        total = math.prod(evidence.output_shape)
    short = evidence.minimised.short_repro if evidence.minimised is not None else None
    values = finding_values(evidence)
    return _render(
        request,
        "finding.html",
        status_code=status_code,
        data=data,
        f=f,
        ev=evidence,  # the template reads typed evidence only
        figures=evidence_figures(evidence),
        values=values,
        inputs=input_rows(values.inputs, evidence.described_input),
        table=table,
        sentence=verdict_sentence(f.verdict, f.target_api, table, evidence.mismatch_count, total, f.reason),
        short_repro=short if short and short.strip() else None,
        short_html=highlight_python(short) if short and short.strip() else None,
        short_skipped=(evidence.minimised.short_repro_skipped or evidence.minimised.skipped) if evidence.minimised else None,
        repro_html=highlight_python(f.repro) if f.repro.strip() else None,
        filter_qs=filter_qs,
        newer=newer,
        older=older,
        decided=decided if decided in ("accepted", "rejected") else None,
        error=error,
        note=note,
        failed_decision=decision,  # the form whose note field gets `note` back, next to `error`
    )


@router.post("/findings/{finding_id}/decide")
def decide_form(
    request: Request,
    finding_id: int,
    decision: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    note: Annotated[str, Form()] = "",
    reviewer: Annotated[str, Form()] = "",
    back: Annotated[str, Form()] = "",
) -> Response:
    config = _check_write(request, csrf)
    flt = queue_filter_from_qs(back)
    try:
        service.record_decision(config.store, finding_id, decision, note, reviewer.strip() or config.reviewer)
    except RepeatedDecision as exc:  # said where the eye is, nothing stored
        return _finding(request, finding_id, flt, error=str(exc), note=note, decision=decision, status_code=409)
    except ReviewInputError as exc:
        return _finding(request, finding_id, flt, error=str(exc), note=note, decision=decision, status_code=400)
    except FindingNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    query = urlencode([*filter_query(flt), ("decided", decision)])
    return RedirectResponse(f"/findings/{finding_id}?{query}#history", status_code=303)


def queue_filter_from_qs(query: str) -> QueueFilter:
    """The filter a form carried back as its page's query string (invalid parts are an error)."""
    from urllib.parse import parse_qs

    values = parse_qs(query, keep_blank_values=False)
    single = {k: v[-1] for k, v in values.items() if k not in ("status", "verdict")}
    return queue_filter(
        status=values.get("status", []),
        verdict=values.get("verdict", []),
        kind=single.get("kind"),
        reference_mode=single.get("reference_mode"),
        test_mode=single.get("test_mode"),
        api=single.get("api"),
        issue=single.get("issue"),
        run=single.get("run"),
    )


@router.get("/findings/{finding_id}/error.svg")
def error_plot(request: Request, finding_id: int) -> Response:
    try:
        svg = service.error_plot(config_of(request).store, finding_id)
    except FindingNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    if svg is None:
        raise HTTPException(status_code=404, detail="this finding records no error numbers to plot")
    return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


@router.get("/history")
def history(request: Request, before: int | None = None) -> HTMLResponse:
    page = service.load_history(config_of(request).store, before=before, limit=PAGE_SIZE)
    return _render(request, "history.html", page=page)


@router.get("/campaigns")
def campaigns(request: Request) -> HTMLResponse:
    config = config_of(request)
    return _render(request, "campaigns.html", data=service.load_campaigns(config.store), refresh_ms=config.refresh_ms)


@router.get("/campaigns/{run_id}/verdicts.svg")
def campaign_plot(request: Request, run_id: int) -> Response:
    return Response(service.timeline_plot(config_of(request).store, run_id), media_type="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@router.get("/export")
def export(
    request: Request,
    id: Annotated[list[int], Query()] = [],  # noqa: B006, A002
    format: Literal["markdown", "json"] = "markdown",  # noqa: A002
    rejected: Literal["ask", "exclude", "include"] = "ask",
) -> Response:
    """The selection as `transfuzz export` writes it; findings the reviewer rejected are listed first and left out
    unless the reviewer confirms them (rejected=include) (Note [Exporting a selection])."""
    if not _signed_in(request, config_of(request)):  # an export holds saved inputs (Note [Review page security])
        raise HTTPException(status_code=403, detail="an export holds saved inputs: sign in with the review token "
                            "first (open /login?token=…)")
    store = config_of(request).store
    try:
        if rejected == "ask":
            choices = service.rejected_choices(store, id)
            if choices:
                return _render(request, "export_confirm.html", rejected=choices, ids=id, format=format,
                               kept=len(set(id)) - len(choices))
        data = service.export_selection(store, id, format, include_rejected=rejected == "include")
    except ValueError as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None
    return Response(data, media_type="application/zip",
                    headers={"Content-Disposition": 'attachment; filename="transfuzz-export.zip"'})


@router.get("/assets/pygments.css")
def pygments_css() -> Response:
    return Response(stylesheet(), media_type="text/css")
