"""Issue and ingest-cursor queries: batched upsert by (repo, number) with change detection.

Note [Issue content hash]
The hash covers what an extractor reads: title, body, label names (sorted), state and the
comments (author, body, created_at). An issue whose hash is unchanged is not written at all,
so re-ingesting a dump costs one SELECT per batch. When a source does not carry comments
(a REST listing fetched without ``--comments``, a REST dump, where ``comments`` is a count)
the row's ``comments`` is ``None``: the stored comments are kept and hashed in its place, so
such a re-ingest neither erases comments fetched earlier nor counts as a change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from db.base import utcnow
from db.models import IngestCursor, Issue


@dataclass
class IssueRow:
    """One normalised issue, as a source delivers it; ``comments=None`` means "not fetched"."""

    repo: str
    number: int
    title: str
    body: str
    labels: list[str]
    state: str
    created_at: datetime | None
    updated_at: datetime | None
    closed_at: datetime | None
    url: str
    comments: list[dict[str, Any]] | None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class UpsertCounts:
    new: int = 0
    updated: int = 0
    unchanged: int = 0

    def add(self, other: UpsertCounts) -> None:
        self.new += other.new
        self.updated += other.updated
        self.unchanged += other.unchanged


@dataclass(frozen=True)
class StoredIssueState:
    """What an incremental sync needs to know about a stored issue to skip refetching comments."""

    updated_at: datetime | None
    comment_count: int


@dataclass(frozen=True)
class CursorState:
    key: str
    repo: str
    filters: dict[str, Any]
    last_updated_at: datetime | None
    etag: str | None
    synced_at: datetime


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything we store is UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def content_hash(title: str, body: str, labels: Sequence[str], state: str, comments: Sequence[dict[str, Any]]) -> str:
    """sha256 over the extractor-relevant content; see Note [Issue content hash]."""
    payload = {
        "title": title,
        "body": body,
        "labels": sorted(labels),
        "state": state,
        "comments": [
            {"author": c.get("author"), "body": c.get("body"), "created_at": c.get("created_at")} for c in comments
        ],
    }
    encoded = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def upsert_issues(session: Session, rows: Sequence[IssueRow]) -> UpsertCounts:
    """Insert new issues, rewrite changed ones (marked for extraction), leave unchanged ones alone.

    One SELECT per repository in the batch; inserts and updates are executed as executemany.
    Within a batch the last row for a (repo, number) wins.
    """
    counts = UpsertCounts()
    latest: dict[tuple[str, int], IssueRow] = {}
    for row in rows:
        if (row.repo, row.number) in latest:
            counts.unchanged += 1  # a duplicate inside the batch: the later copy supersedes it
        latest[(row.repo, row.number)] = row
    if not latest:
        return counts

    by_repo: dict[str, list[int]] = {}
    for repo, number in latest:
        by_repo.setdefault(repo, []).append(number)
    need_comments = any(row.comments is None for row in latest.values())
    existing: dict[tuple[str, int], tuple[int, str, list[Any] | None]] = {}
    for repo, numbers in by_repo.items():
        columns = [Issue.id, Issue.number, Issue.content_hash]
        if need_comments:
            columns.append(Issue.comments)
        stmt = select(*columns).where(Issue.repo == repo, Issue.number.in_(numbers))
        for result in session.execute(stmt):
            existing[(repo, result.number)] = (result.id, result.content_hash, result.comments if need_comments else None)

    now = utcnow()
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for key, row in latest.items():
        found = existing.get(key)
        comments = row.comments
        if comments is None:
            comments = list(found[2] or []) if found is not None else []
        digest = content_hash(row.title, row.body, row.labels, row.state, comments)
        if found is not None and found[1] == digest:
            counts.unchanged += 1
            continue
        values = {
            "repo": row.repo,
            "number": row.number,
            "title": row.title,
            "body": row.body,
            "labels": row.labels,
            "state": row.state,
            "created_at": as_utc(row.created_at),
            "updated_at": as_utc(row.updated_at),
            "closed_at": as_utc(row.closed_at),
            "url": row.url,
            "comments": comments,
            "raw": row.raw,
            "content_hash": digest,
            "needs_extraction": True,
            "ingested_at": now,
            "changed_at": now,
        }
        if found is None:
            inserts.append(values)
            counts.new += 1
        else:
            values["id"] = found[0]
            updates.append(values)
            counts.updated += 1
    if inserts:
        session.execute(insert(Issue), inserts)
    if updates:
        session.execute(update(Issue), updates)
    return counts


def stored_issue_states(session: Session, repo: str, numbers: Sequence[int]) -> dict[int, StoredIssueState]:
    """updated_at and number of stored comments for the given issues of one repository."""
    if not numbers:
        return {}
    stmt = select(Issue.number, Issue.updated_at, Issue.comments).where(Issue.repo == repo, Issue.number.in_(list(numbers)))
    return {
        number: StoredIssueState(updated_at=as_utc(updated_at), comment_count=len(comments or []))
        for number, updated_at, comments in session.execute(stmt)
    }


def get_cursor(session: Session, key: str) -> CursorState | None:
    row = session.scalar(select(IngestCursor).where(IngestCursor.key == key))
    if row is None:
        return None
    return CursorState(
        key=row.key,
        repo=row.repo,
        filters=dict(row.filters or {}),
        last_updated_at=as_utc(row.last_updated_at),
        etag=row.etag,
        synced_at=as_utc(row.synced_at) or utcnow(),
    )


def set_cursor(
    session: Session,
    key: str,
    *,
    repo: str,
    filters: dict[str, Any],
    last_updated_at: datetime | None,
    etag: str | None,
) -> None:
    """Create or move the cursor; ``last_updated_at`` never moves backwards."""
    row = session.scalar(select(IngestCursor).where(IngestCursor.key == key))
    now = utcnow()
    if row is None:
        session.add(
            IngestCursor(key=key, repo=repo, filters=filters, last_updated_at=as_utc(last_updated_at), etag=etag, synced_at=now)
        )
        return
    previous = as_utc(row.last_updated_at)
    candidate = as_utc(last_updated_at)
    if candidate is not None and (previous is None or candidate > previous):
        row.last_updated_at = candidate
    row.etag = etag
    row.synced_at = now
