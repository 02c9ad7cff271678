"""The review queue: findings filtered and sorted, one keyset page at a time, with counts per status.

Note [Keyset paging]
The queue must page through 100,000 findings without ``OFFSET`` (which reads and throws away
every row before the page). Each sort orders by (sort key, finding id) and a page ends with a
cursor holding the last row's (key, id); the next page asks for rows strictly after that pair.
The cursor is opaque to callers (base64 of JSON) and checked when read back, so a hand-edited
cursor is a clear error, never a crash or a silent first page.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, or_, select
from sqlalchemy.orm import Session

from db.models import Candidate, Finding, Harness, Issue, Pattern
from db.queries.findings import FindingRecord, _check_values, _lineage_query, _record
from db.status import REVIEW_STATUSES, VERDICTS

MAX_PAGE_SIZE = 500


class QueueInputError(ValueError):
    """A filter, sort or cursor the queue cannot use as given."""


def _api_column() -> ColumnElement[Any]:
    # Never NULL: SQLite and PostgreSQL sort NULLs at opposite ends, which would break the keyset.
    return func.coalesce(Harness.spec["api"].as_string(), Candidate.target_api, "")


def _kind_column() -> ColumnElement[Any]:
    return func.coalesce(Harness.spec["kind"].as_string(), Pattern.kind)


# name -> (maker of the key expression, or None to sort by id alone; descending?)
SORTS: dict[str, tuple[Any, bool]] = {
    "newest": (None, True),
    "oldest": (None, False),
    "verdict": (lambda: Finding.verdict, False),
    "api": (_api_column, False),
}


@dataclass
class QueueFilter:
    """What the queue shows; every field empty means everything."""

    review_statuses: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    kind: str | None = None
    reference_mode: str | None = None
    test_mode: str | None = None
    api: str | None = None
    source_issue: str | None = None  # "owner/repo#N"
    run_id: int | None = None

    def __post_init__(self) -> None:
        _check_values("review status", self.review_statuses, REVIEW_STATUSES)
        _check_values("verdict", self.verdicts, VERDICTS)
        if self.source_issue is not None:
            parse_issue_ref(self.source_issue)


@dataclass
class QueuePage:
    findings: list[FindingRecord]
    next_cursor: str | None
    counts: dict[str, int]  # review status -> findings matching every filter but the status


def parse_issue_ref(text: str) -> tuple[str, int]:
    """``owner/repo#123`` -> ("owner/repo", 123); QueueInputError otherwise."""
    repo, sep, number = text.strip().rpartition("#")
    owner, slash, name = repo.partition("/")
    if not sep or not slash or not owner or not name or "/" in name or not number.isdigit():
        raise QueueInputError(f"source issue must look like owner/repo#123, got {text!r}")
    return repo, int(number)


def _needs_lineage(flt: QueueFilter) -> bool:
    return any(v is not None for v in (flt.kind, flt.reference_mode, flt.test_mode, flt.api, flt.source_issue))


def _with_lineage(query: Select[Any]) -> Select[Any]:
    """The joins the lineage filters need (the outer joins of Note [Finding lineage] in findings.py)."""
    return (
        query.join(Harness, Finding.harness_id == Harness.id)
        .outerjoin(Candidate, Harness.candidate_id == Candidate.id)
        .outerjoin(Pattern, Candidate.pattern_id == Pattern.id)
        .outerjoin(Issue, Pattern.issue_id == Issue.id)
    )


def _conditions(flt: QueueFilter, *, with_status: bool = True) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if with_status and flt.review_statuses:
        conditions.append(Finding.review_status.in_(flt.review_statuses))
    if flt.verdicts:
        conditions.append(Finding.verdict.in_(flt.verdicts))
    if flt.run_id is not None:
        conditions.append(Finding.run_id == flt.run_id)
    if flt.kind:
        conditions.append(_kind_column() == flt.kind)
    if flt.reference_mode:
        conditions.append(func.coalesce(Harness.spec["reference_mode"].as_string(), Pattern.reference_mode) == flt.reference_mode)
    if flt.test_mode:
        conditions.append(func.coalesce(Harness.spec["test_mode"].as_string(), Pattern.test_mode) == flt.test_mode)
    if flt.api:
        conditions.append(_api_column() == flt.api)
    if flt.source_issue:
        repo, number = parse_issue_ref(flt.source_issue)
        conditions.append(and_(Issue.repo == repo, Issue.number == number))
    return conditions


def encode_cursor(key: Any, finding_id: int) -> str:
    raw = json.dumps([key, finding_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[Any, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key, finding_id = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError, binascii.Error):
        raise QueueInputError("the page cursor is not one this queue wrote; start from the first page") from None
    if not isinstance(finding_id, int) or not (key is None or isinstance(key, str)):
        raise QueueInputError("the page cursor is not one this queue wrote; start from the first page")
    return key, finding_id


def _sort_key(sort: str) -> tuple[ColumnElement[Any] | None, bool]:
    if sort not in SORTS:
        raise QueueInputError(f"unknown sort {sort!r}; expected one of {', '.join(SORTS)}")
    key, descending = SORTS[sort]
    return (key() if key is not None else None), descending


def _after(key: ColumnElement[Any] | None, descending: bool, cursor: str) -> ColumnElement[bool]:
    """Rows strictly after the cursor's (key, id) in the sort order (Note [Keyset paging])."""
    last_key, last_id = decode_cursor(cursor)
    if key is None:
        return Finding.id < last_id if descending else Finding.id > last_id
    if last_key is None:
        raise QueueInputError("the page cursor belongs to another sort; start from the first page")
    beyond = key < last_key if descending else key > last_key
    return or_(beyond, and_(key == last_key, Finding.id > last_id))


def _ordered(query: Select[Any], key: ColumnElement[Any] | None, descending: bool) -> Select[Any]:
    if key is None:
        return query.order_by(Finding.id.desc() if descending else Finding.id)
    return query.order_by(key.desc() if descending else key.asc(), Finding.id)


def status_counts(session: Session, flt: QueueFilter) -> dict[str, int]:
    """{review status: count} over every filter except the status itself (the queue's tabs)."""
    query = select(Finding.review_status, func.count()).group_by(Finding.review_status)
    if _needs_lineage(flt):
        query = _with_lineage(query)
    query = query.where(*_conditions(flt, with_status=False))
    found = dict(session.execute(query).all())
    return {status: int(found.get(status, 0)) for status in REVIEW_STATUSES}


def queue_page(
    session: Session,
    flt: QueueFilter,
    *,
    sort: str = "newest",
    cursor: str | None = None,
    limit: int = 50,
    with_counts: bool = True,
) -> QueuePage:
    """One page of the queue and the cursor of the next (None on the last page)."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise QueueInputError(f"page size must be between 1 and {MAX_PAGE_SIZE}, got {limit}")
    key, descending = _sort_key(sort)
    query = _lineage_query().where(*_conditions(flt))
    if cursor:
        query = query.where(_after(key, descending, cursor))
    query = _ordered(query, key, descending)
    if key is not None:
        query = query.add_columns(key)
    rows = session.execute(query.limit(limit + 1)).all()
    more = len(rows) > limit
    rows = rows[:limit]
    findings = [_record(*row[:5]) for row in rows]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = encode_cursor(last[5] if key is not None else None, last[0].id)
    counts = status_counts(session, flt) if with_counts else {}
    return QueuePage(findings=findings, next_cursor=next_cursor, counts=counts)


def neighbours(session: Session, flt: QueueFilter, finding_id: int) -> tuple[int | None, int | None]:
    """(previous id, next id) around a finding in the queue's default order (newest first)."""
    conditions = _conditions(flt)
    base = select(Finding.id)
    if _needs_lineage(flt):
        base = _with_lineage(base)
    base = base.where(*conditions)
    newer = session.scalar(base.where(Finding.id > finding_id).order_by(Finding.id).limit(1))
    older = session.scalar(base.where(Finding.id < finding_id).order_by(Finding.id.desc()).limit(1))
    return newer, older


@dataclass
class DuplicateRow:
    id: int
    verdict: str
    review_status: str


def same_signature(session: Session, signature: str, exclude_id: int, limit: int = 20) -> list[DuplicateRow]:
    """Other findings with this signature (possible duplicates), oldest first; none for an empty one."""
    if not signature:
        return []
    rows = session.execute(
        select(Finding.id, Finding.verdict, Finding.review_status)
        .where(Finding.signature == signature, Finding.id != exclude_id)
        .order_by(Finding.id)
        .limit(limit)
    ).all()
    return [DuplicateRow(id=r[0], verdict=r[1], review_status=r[2]) for r in rows]


def findings_by_ids(session: Session, ids: Sequence[int]) -> list[FindingRecord]:
    """The chosen findings with their lineage, by id; unknown ids are left out."""
    if not ids:
        return []
    rows = session.execute(_lineage_query().where(Finding.id.in_(list(ids))).order_by(Finding.id)).all()
    return [_record(*row) for row in rows]
