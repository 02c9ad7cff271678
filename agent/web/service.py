"""What the pages and the JSON API both do, on the same queries as the CLI (one path for decisions)."""

from __future__ import annotations

import io
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent.review.decide import decide, make_decision
from agent.review.lineage import describe_trigger, github_issue_url, rationale_parts, source_issue_url
from agent.review.views import FindingDetail, FindingSummary, ReviewView
from agent.web.checks import verdict_checks
from agent.web.schemas import (
    CampaignsResponse,
    CandidateDetail,
    CandidatePattern,
    CandidateQueueResponse,
    CandidateSource,
    CandidateSummary,
    CampaignView,
    CheckView,
    DuplicateView,
    FindingResponse,
    HistoryResponse,
    QueueResponse,
)
from db.queries.candidate_queue import CandidateFilter, CandidateRow, candidate_by_id, candidate_page
from db.queries.decisions import decision_history
from db.queries.findings import get_finding
from db.queries.progress import campaign_progress, pending_harness_count, verdict_timeline
from db.queries.queue import QueueFilter, neighbours, queue_page, same_signature
from db.store import Store

MAX_EXPORT = 200


def load_queue(store: Store, flt: QueueFilter, *, sort: str, cursor: str | None, limit: int) -> QueueResponse:
    with store.session() as session:
        page = queue_page(session, flt, sort=sort, cursor=cursor, limit=limit)
    return QueueResponse(
        items=[FindingSummary.of(f) for f in page.findings], next_cursor=page.next_cursor, counts=page.counts
    )


def load_finding(store: Store, finding_id: int) -> FindingResponse:
    """FindingNotFound when there is no such finding."""
    with store.session() as session:
        record = get_finding(session, finding_id)
        duplicates = same_signature(session, record.signature, record.id)
    detail = FindingDetail.of(record)
    from agent.web.plots import plot_kind

    kind = plot_kind(record.evidence)
    return FindingResponse(
        finding=detail,
        harness_spec=record.harness_spec,
        source_issue_url=source_issue_url(record),
        checks=[CheckView(name=c.name, status=c.status, detail=c.detail)
                for c in verdict_checks(record.verdict, record.evidence)],
        duplicates=[DuplicateView(id=d.id, verdict=d.verdict, review_status=d.review_status) for d in duplicates],
        plot_url=f"/findings/{record.id}/error.svg" if kind is not None else None,
        plot_kind=kind,
    )


def finding_neighbours(store: Store, flt: QueueFilter, finding_id: int) -> tuple[int | None, int | None]:
    with store.session() as session:
        return neighbours(session, flt, finding_id)


def error_plot(store: Store, finding_id: int) -> bytes | None:
    from agent.web.plots import error_svg

    with store.session() as session:
        evidence = get_finding(session, finding_id).evidence
    return error_svg(evidence)


def record_decision(store: Store, finding_id: int, decision: str, note: str, reviewer: str | None) -> ReviewView:
    """ReviewInputError for a decision the rules refuse (RepeatedDecision when it repeats the last one),
    FindingNotFound for an unknown id."""
    checked = make_decision(finding_id, decision, reviewer, note)
    with store.session() as session:  # a repeat of the last decision is refused (RepeatedDecision), not stored again
        stored = decide(session, checked, allow_repeat=False)
    return ReviewView.of(stored)


def load_history(store: Store, *, before: int | None, limit: int) -> HistoryResponse:
    with store.session() as session:
        page = decision_history(session, before=before, limit=limit)
    return HistoryResponse(reviews=[ReviewView.of(r) for r in page.reviews], next_before=page.next_before)


def load_campaigns(store: Store) -> CampaignsResponse:
    with store.session() as session:
        runs = campaign_progress(session)
        pending = pending_harness_count(session)
    return CampaignsResponse(
        pending_harnesses=pending,
        campaigns=[
            CampaignView(
                id=r.id,
                command=r.command,
                started_at=r.started_at,
                ended_at=r.ended_at,
                heartbeat_at=r.heartbeat_at,
                exit_reason=r.exit_reason,
                running=r.running,
                executions=r.executions,
                tasks_done=r.tasks_done,
                executions_per_s=r.executions_per_s,
                harnesses=r.harnesses,
                verdicts=r.verdicts,
            )
            for r in runs
        ],
    )


def timeline_plot(store: Store, run_id: int) -> bytes:
    from agent.web.plots import verdict_timeline_svg

    from datetime import UTC

    from db.models import Run

    def _as_aware(value):  # type: ignore[no-untyped-def]  # SQLite returns naive UTC timestamps
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value

    with store.session() as session:
        points = verdict_timeline(session, run_id)
        run = session.get(Run, run_id)
        start = _as_aware(run.started_at) if run is not None else None
        end = _as_aware(run.ended_at) if run is not None else None
    return verdict_timeline_svg([(p.at, p.verdict) for p in points], start=start, end=end)


@dataclass
class RejectedChoice:
    """A chosen finding the reviewer rejected: what the export page lists before including it."""

    id: int
    target_api: str
    verdict: str
    reviewer: str
    note: str


def check_selection(ids: list[int]) -> None:
    if not ids:
        raise ValueError("choose at least one finding to export")
    if len(ids) > MAX_EXPORT:
        raise ValueError(f"export at most {MAX_EXPORT} findings at a time, got {len(ids)}")


def rejected_choices(store: Store, ids: list[int]) -> list[RejectedChoice]:
    """The chosen findings whose review status is rejected, with their last decision's reviewer and note."""
    from agent.export.pipeline import select_findings
    from agent.review.decide import last_decision
    from agent.review.lineage import target_api

    check_selection(ids)
    rejected = select_findings(store, ids).rejected
    choices = []
    with store.session() as session:
        for record in rejected:
            last = last_decision(session, record.id)
            choices.append(RejectedChoice(id=record.id, target_api=target_api(record), verdict=record.verdict,
                                          reviewer=last.reviewer if last else "", note=last.note if last else ""))
    return choices


def export_selection(store: Store, ids: list[int], fmt: Literal["markdown", "json"], *,
                     include_rejected: bool = False) -> bytes:
    """The chosen findings exported as `transfuzz export` exports them (agent/export/pipeline.export_selection:
    the same grouping, contexts and environment), zipped; rejected findings only with ``include_rejected``.
    ValueError when nothing is left to export."""
    from agent.export.pipeline import export_selection as write_selection

    check_selection(ids)
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="transfuzz_export_") as folder:
        write_selection(store, ids, Path(folder), fmt=fmt, include_rejected=include_rejected)
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(Path(folder).iterdir()):
                if path.is_file():
                    archive.write(path, arcname=f"transfuzz-export/{path.name}")
    return buffer.getvalue()


def _candidate_summary(row: CandidateRow) -> dict[str, object]:
    return dict(
        id=row.id, target_api=row.target_api, status=row.status, score=row.score, kind=row.pattern_kind,
        reference_mode=row.reference_mode, test_mode=row.test_mode, source_api=row.pattern_api,
        source_issue=f"{row.issue_repo}#{row.issue_number}" if row.issue_repo is not None else None,
        matcher=rationale_parts(row.rationale).matcher, created_at=row.created_at,
    )


def load_candidates(store: Store, flt: CandidateFilter, *, cursor: str | None, limit: int) -> CandidateQueueResponse:
    with store.session() as session:
        page = candidate_page(session, flt, cursor=cursor, limit=limit)
    return CandidateQueueResponse(items=[CandidateSummary(**_candidate_summary(c)) for c in page.candidates],
                                  next_cursor=page.next_cursor, counts=page.counts)


def load_candidate(store: Store, candidate_id: int) -> CandidateDetail:
    """CandidateNotFound when there is no such candidate."""
    from db.queries.lineage_pages import candidate_harnesses, candidate_issue_id

    with store.session() as session:
        row = candidate_by_id(session, candidate_id)
        harness_rows = candidate_harnesses(session, candidate_id)  # with their findings (Note [Lineage pages])
        issue_id = candidate_issue_id(session, candidate_id)
    parts = rationale_parts(row.rationale)
    source = None
    if row.issue_repo is not None and row.issue_number is not None:
        source = CandidateSource(repo=row.issue_repo, number=row.issue_number, title=row.issue_title or "",
                                 url=github_issue_url(row.issue_repo, row.issue_number))
    trigger = row.adapted_trigger or row.trigger
    return CandidateDetail(
        **_candidate_summary(row),
        rationale=row.rationale, ranking=parts.ranking, check=parts.check, adapted_trigger=row.adapted_trigger,
        trigger_text=describe_trigger(trigger), harnesses=row.harnesses, source=source,
        pattern=CandidatePattern(id=row.pattern_id, kind=row.pattern_kind, api=row.pattern_api, formal=row.formal,
                                 confidence=row.confidence, trigger=row.trigger),
        issue_id=issue_id, harness_rows=harness_rows,
    )
