"""Queries of the extraction stage: issues to extract, triages, patterns, API semantics, LLM calls.

Note [Which issues an extractor processes]
An issue is due for an extractor when ingest flagged it (``needs_extraction``: new or changed)
or when that extractor has no triage row for it yet (another extractor ran first). After a
successful extraction the flag is cleared only if the issue's ``content_hash`` is still the one
that was read, so an ingest that changes the issue meanwhile is never lost. A failed extraction
sets the flag again and writes no triage, so the issue stays due; issues whose last attempt
failed come after the others, so a few stubborn failures cannot block the head of the queue
under ``--limit``.

Note [A failed extraction loses nothing]
A failure is an ``error`` row next to whatever the issue already had: the last good pattern,
its candidates, harnesses and findings stay. Only a successful extraction replaces patterns,
and a new pattern identical to a stored one keeps the stored row (and what hangs from it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, delete, exists, insert, or_, select, update
from sqlalchemy.orm import Session

from db.base import utcnow
from db.models import ApiSemantics, Issue, LlmCall, Pattern, Triage


@dataclass(frozen=True)
class IssueForExtraction:
    id: int
    repo: str
    number: int
    title: str
    body: str
    labels: list[str]
    comments: list[dict[str, Any]]
    content_hash: str
    state: str = "open"
    state_reason: str | None = None  # GitHub's completed / not_planned, when the ingested record had it


@dataclass(frozen=True)
class TriageValues:
    is_silent_bug: bool
    has_repro: bool
    false_alarm_class: str | None
    confidence: float
    reason: str


@dataclass(frozen=True)
class PatternValues:
    """One patterns row; for ``no_pattern`` rows ``error`` holds the model's reason (not a failure)."""

    status: str
    kind: str | None = None
    api: str | None = None
    reference_mode: str | None = None
    test_mode: str | None = None
    trigger: dict[str, Any] | None = None
    oracle: dict[str, Any] | None = None
    formal: str = ""
    repro: str = ""
    confidence: float = 0.0
    error: str | None = None


def issue_ids_to_extract(session: Session, extractor: str, *, only_changed: bool = False, limit: int | None = None) -> list[int]:
    """Ids due for ``extractor`` in id order; see Note [Which issues an extractor processes]."""
    due = Issue.needs_extraction.is_(True)
    if not only_changed:
        has_triage = exists().where(and_(Triage.issue_id == Issue.id, Triage.extractor == extractor))
        due = or_(due, ~has_triage)
    failed_before = exists().where(
        and_(Pattern.issue_id == Issue.id, Pattern.extractor == extractor, Pattern.status == "error")
    )
    stmt = select(Issue.id).where(due).order_by(case((failed_before, 1), else_=0), Issue.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(session.scalars(stmt))


def load_issues(session: Session, ids: Sequence[int]) -> list[IssueForExtraction]:
    if not ids:
        return []
    rows = session.scalars(select(Issue).where(Issue.id.in_(list(ids))).order_by(Issue.id))
    return [
        IssueForExtraction(
            id=row.id,
            repo=row.repo,
            number=row.number,
            title=row.title or "",
            body=row.body or "",
            labels=[str(label) for label in row.labels or []],
            comments=[c for c in row.comments or [] if isinstance(c, dict)],
            content_hash=row.content_hash,
            state=row.state or "open",
            state_reason=_state_reason(row.raw),
        )
        for row in rows
    ]


def _state_reason(raw: Any) -> str | None:
    reason = raw.get("state_reason") if isinstance(raw, dict) else None
    return reason if isinstance(reason, str) and len(reason) <= 40 else None


def upsert_triage(session: Session, issue_id: int, extractor: str, extractor_version: str, values: TriageValues) -> None:
    existing = session.scalar(select(Triage).where(Triage.issue_id == issue_id, Triage.extractor == extractor))
    if existing is None:
        existing = Triage(issue_id=issue_id, extractor=extractor)
        session.add(existing)
    existing.extractor_version = extractor_version
    existing.is_silent_bug = values.is_silent_bug
    existing.has_repro = values.has_repro
    existing.false_alarm_class = values.false_alarm_class
    existing.confidence = values.confidence
    existing.reason = values.reason
    existing.created_at = utcnow()
    session.flush()


def replace_patterns(
    session: Session, issue_id: int, extractor: str, extractor_version: str, rows: Sequence[PatternValues]
) -> list[int]:
    """The issue's patterns from ``extractor`` become ``rows`` (re-extraction replaces); a row equal
    to a stored one keeps the stored row. See Note [A failed extraction loses nothing]."""
    stored = list(session.scalars(select(Pattern).where(Pattern.issue_id == issue_id, Pattern.extractor == extractor)))
    ids = []
    for row in rows:
        same = next((p for p in stored if p.status != "error" and row.formal and p.formal == row.formal
                     and p.kind == row.kind and p.api == row.api), None)
        if same is not None:
            stored.remove(same)
            same.extractor_version, same.confidence, same.repro = extractor_version, row.confidence, row.repro
            ids.append(same.id)
            continue
        pattern = Pattern(
            issue_id=issue_id,
            extractor=extractor,
            extractor_version=extractor_version,
            status=row.status,
            kind=row.kind,
            api=row.api,
            reference_mode=row.reference_mode,
            test_mode=row.test_mode,
            trigger=row.trigger or {},
            oracle=row.oracle or {},
            formal=row.formal,
            repro=row.repro,
            confidence=row.confidence,
            error=row.error,
        )
        session.add(pattern)
        session.flush()
        ids.append(pattern.id)
    if stored:
        session.execute(delete(Pattern).where(Pattern.id.in_([p.id for p in stored])))
    return ids


def record_extraction_error(session: Session, issue_id: int, extractor: str, extractor_version: str,
                            error: str) -> int:
    """Store a failed attempt beside the issue's stored patterns and keep the issue due.

    Earlier error rows of this extractor are replaced; good rows are left as they are
    (Note [A failed extraction loses nothing]).
    """
    session.execute(delete(Pattern).where(
        Pattern.issue_id == issue_id, Pattern.extractor == extractor, Pattern.status == "error"))
    row = Pattern(issue_id=issue_id, extractor=extractor, extractor_version=extractor_version,
                  status="error", error=error)
    session.add(row)
    session.execute(update(Issue).where(Issue.id == issue_id).values(needs_extraction=True))
    session.flush()
    return row.id


def mark_extracted(session: Session, issue_id: int, content_hash: str) -> bool:
    """Clear ``needs_extraction`` unless the issue changed since it was read."""
    result = session.execute(
        update(Issue)
        .where(Issue.id == issue_id, Issue.content_hash == content_hash)
        .values(needs_extraction=False)
    )
    return bool(result.rowcount)


def patterns_of_issue(session: Session, issue_id: int) -> list[Pattern]:
    return list(session.scalars(select(Pattern).where(Pattern.issue_id == issue_id).order_by(Pattern.id)))


def triage_of_issue(session: Session, issue_id: int, extractor: str) -> Triage | None:
    return session.scalar(select(Triage).where(Triage.issue_id == issue_id, Triage.extractor == extractor))


# ---------------------------------------------------------------- API semantics


def apis_with_semantics(session: Session, apis: Sequence[str]) -> set[str]:
    if not apis:
        return set()
    return set(session.scalars(select(ApiSemantics.api).where(ApiSemantics.api.in_(list(apis)))))


def get_api_semantics(session: Session, api: str) -> dict[str, Any] | None:
    row = session.scalar(select(ApiSemantics).where(ApiSemantics.api == api))
    if row is None:
        return None
    return {
        "api": row.api,
        "category": row.category,
        "summary": row.summary,
        "parameters": list(row.parameters or []),
        "dtypes": list(row.dtypes or []),
        "details": dict(row.details or {}),
        "source": row.source,
        "torch_version": row.torch_version,
    }


def upsert_api_semantics(
    session: Session,
    *,
    api: str,
    category: str,
    summary: str,
    parameters: list[dict[str, Any]],
    dtypes: list[str],
    details: dict[str, Any],
    source: str,
    torch_version: str | None,
) -> None:
    row = session.scalar(select(ApiSemantics).where(ApiSemantics.api == api))
    if row is None:
        row = ApiSemantics(api=api)
        session.add(row)
    row.category = category
    row.summary = summary
    row.parameters = parameters
    row.dtypes = dtypes
    row.details = details
    row.source = source
    row.torch_version = torch_version
    session.flush()


# ---------------------------------------------------------------- LLM call cache


def cached_llm_response(session: Session, cache_key: str) -> dict[str, Any] | None:
    """The stored answer of a successful call, or None (misses and failed calls alike)."""
    return session.scalar(
        select(LlmCall.response).where(LlmCall.cache_key == cache_key, LlmCall.error.is_(None))
    )


def record_llm_call(session: Session, values: dict[str, Any]) -> None:
    """Insert or overwrite the call with ``values['cache_key']``.

    A failed call is retried later under the same key; its row then keeps every earlier
    attempt and their token usage, so ``llm_calls`` accounts for every request ever paid for.
    """
    key = values["cache_key"]
    columns = {
        k: values.get(k)
        for k in ("prompt_name", "prompt_version", "model", "request", "response", "attempts",
                  "prompt_tokens", "completion_tokens", "latency_ms", "error")
    }
    columns["request"] = columns["request"] or {}
    columns["attempts"] = list(columns["attempts"] or [])
    existing = session.execute(
        select(LlmCall.id, LlmCall.error, LlmCall.attempts, LlmCall.prompt_tokens, LlmCall.completion_tokens)
        .where(LlmCall.cache_key == key)
    ).first()
    if existing is None:
        session.execute(insert(LlmCall), [{"cache_key": key, **columns}])
        return
    if existing.error is not None:  # an earlier failure of this very request: keep its record
        columns["attempts"] = [*(existing.attempts or []), *columns["attempts"]]
        columns["prompt_tokens"] = (columns["prompt_tokens"] or 0) + (existing.prompt_tokens or 0)
        columns["completion_tokens"] = (columns["completion_tokens"] or 0) + (existing.completion_tokens or 0)
    session.execute(update(LlmCall).where(LlmCall.id == existing.id).values(**columns, created_at=utcnow()))


def llm_call_count(session: Session) -> int:
    from sqlalchemy import func

    return session.scalar(select(func.count()).select_from(LlmCall)) or 0
