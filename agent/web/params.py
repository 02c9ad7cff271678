"""Query-string filters shared by the queue page and the JSON API."""

from __future__ import annotations

from typing import Annotated

from fastapi import HTTPException, Query

from db.queries.candidate_queue import CandidateFilter
from db.queries.queue import QueueFilter, QueueInputError

FILTER_KEYS = ("status", "verdict", "kind", "reference_mode", "test_mode", "api", "issue", "run")


def _text(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def queue_filter(
    status: Annotated[list[str], Query(description="Review status, repeatable.")] = [],  # noqa: B006 - FastAPI copies defaults
    verdict: Annotated[list[str], Query(description="Verdict, repeatable.")] = [],  # noqa: B006
    kind: Annotated[str | None, Query(description="Pattern kind, e.g. Compile_Eager_Mismatch.")] = None,
    reference_mode: Annotated[str | None, Query()] = None,
    test_mode: Annotated[str | None, Query()] = None,
    api: Annotated[str | None, Query(description="Target API, e.g. torch.relu.")] = None,
    issue: Annotated[str | None, Query(description="Source issue as owner/repo#N.")] = None,
    run: Annotated[str | None, Query(description="Campaign (run) id.")] = None,
) -> QueueFilter:
    run_text = _text(run)
    if run_text is not None and not run_text.isdigit():
        raise HTTPException(status_code=400, detail=f"run must be a campaign id (a number), got {run_text!r}")
    try:
        return QueueFilter(
            review_statuses=[s for s in status if s],
            verdicts=[v for v in verdict if v],
            kind=_text(kind),
            reference_mode=_text(reference_mode),
            test_mode=_text(test_mode),
            api=_text(api),
            source_issue=_text(issue),
            run_id=int(run_text) if run_text is not None else None,
        )
    except (QueueInputError, ValueError) as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


def filter_query(flt: QueueFilter) -> list[tuple[str, str]]:
    """The filter back as query pairs, to carry it across links (urlencode does the escaping)."""
    pairs = [("status", s) for s in flt.review_statuses] + [("verdict", v) for v in flt.verdicts]
    for key, value in (
        ("kind", flt.kind),
        ("reference_mode", flt.reference_mode),
        ("test_mode", flt.test_mode),
        ("api", flt.api),
        ("issue", flt.source_issue),
        ("run", None if flt.run_id is None else str(flt.run_id)),
    ):
        if value:
            pairs.append((key, value))
    return pairs


def candidate_filter(
    status: Annotated[list[str], Query(description="Candidate status, repeatable (proposed, vetoed, ...).")] = [],  # noqa: B006
    kind: Annotated[str | None, Query(description="The source pattern's kind.")] = None,
    reference_mode: Annotated[str | None, Query()] = None,
    test_mode: Annotated[str | None, Query()] = None,
    api: Annotated[str | None, Query(description="Target API, e.g. torch.tanh.")] = None,
    issue: Annotated[str | None, Query(description="Source issue as owner/repo#N.")] = None,
) -> CandidateFilter:
    try:
        return CandidateFilter(statuses=[s for s in status if s], kind=_text(kind), reference_mode=_text(reference_mode),
                               test_mode=_text(test_mode), api=_text(api), source_issue=_text(issue))
    except (QueueInputError, ValueError) as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


def candidate_filter_query(flt: CandidateFilter) -> list[tuple[str, str]]:
    pairs = [("status", s) for s in flt.statuses]
    for key, value in (("kind", flt.kind), ("reference_mode", flt.reference_mode), ("test_mode", flt.test_mode),
                       ("api", flt.api), ("issue", flt.source_issue)):
        if value:
            pairs.append((key, value))
    return pairs
