"""Incremental sync of one repository's issues from GitHub into the issues table.

Note [Incremental GitHub sync]
The listing is asked for oldest update first (sort=updated, direction=asc), so every committed
page moves a high-water mark that is a valid resume point, even when a run stops at --limit or
dies half-way. The mark is stored per (repo, filter) in ``ingest_cursors``; the next run asks
for ``since = mark - OVERLAP`` (the overlap catches updates that share the mark's second or
arrive late; re-seen issues are idempotent upserts). When the first page was the whole answer,
its ETag is kept and sent as If-None-Match next time: a 304 ("nothing changed") costs no quota
with a token. Comments are fetched only for issues that have some and whose ``updated_at``
moved (or whose stored comments are fewer than GitHub's count), since a comment bumps the
issue's ``updated_at``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.ingest.github_api import GitHubIssuesApi
from agent.ingest.records import BadRecord, PullRequest, comment_from_rest, normalise, valid_repo_name
from agent.ingest.summary import IngestEvents, IngestSummary
from agent.ingest.writer import write_batch
from db.queries.issues import IssueRow, get_cursor, set_cursor, stored_issue_states
from db.store import Store

OVERLAP = timedelta(minutes=5)
STATES = ("open", "closed", "all")


def cursor_filters(labels: list[str] | None, state: str, since: datetime | None) -> dict[str, Any]:
    """The filter part of a cursor, normalised so that flag order does not matter."""
    return {
        "labels": sorted(set(labels or [])),
        "state": state,
        "since": since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if since else None,
    }


def cursor_key(repo: str, filters: dict[str, Any]) -> str:
    """e.g. ``pytorch/pytorch?labels=a,b&state=all&since=``."""
    return f"{repo}?labels={','.join(filters['labels'])}&state={filters['state']}&since={filters['since'] or ''}"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def ingest_github(
    store: Store,
    repo: str,
    *,
    labels: list[str] | None = None,
    state: str = "all",
    since: datetime | None = None,
    limit: int | None = None,
    comments: bool = False,
    api_url: str | None = None,
    token: str | None = None,
    events: IngestEvents | None = None,
    api: GitHubIssuesApi | None = None,
) -> IngestSummary:
    """Fetch what changed in ``repo`` since the last sync with the same filter, upsert it, move the cursor.

    Raises ValueError for a malformed repo/state and GitHubError when GitHub refuses.
    """
    events = events or IngestEvents()
    if not valid_repo_name(repo):
        raise ValueError(f"repository must be OWNER/REPO, got {repo!r}")
    if state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    if limit is not None and limit < 1:
        raise ValueError("limit must be at least 1")
    started = time.perf_counter()
    api = api or GitHubIssuesApi(token=token, api_url=api_url, notify=events.notify)
    filters = cursor_filters(labels, state, since)
    key = cursor_key(repo, filters)
    with store.session() as session:
        cursor = get_cursor(session, key)
    effective_since = since
    etag = None
    if cursor is not None:
        etag = cursor.etag
        if cursor.last_updated_at is not None:
            resume = cursor.last_updated_at - OVERLAP
            effective_since = resume if since is None or resume > since else since
    summary = IngestSummary(
        source=f"github:{repo}",
        cursor_key=key,
        since=effective_since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if effective_since else None,
    )
    summary.add_repo(repo)
    requests_before = api.stats.requests
    waits_before = api.stats.rate_limit_waits
    plan = _SyncPlan(repo, key, filters, list(labels or []), state, effective_since, etag, limit, comments)
    with api.connection():
        _sync_pages(store, api, plan, events, summary)
    summary.requests = api.stats.requests - requests_before
    summary.rate_limit_waits = api.stats.rate_limit_waits - waits_before
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary


@dataclass(frozen=True)
class _SyncPlan:
    repo: str
    key: str
    filters: dict[str, Any]
    labels: list[str]
    state: str
    since: datetime | None
    etag: str | None
    limit: int | None
    comments: bool


def _sync_pages(store: Store, api: GitHubIssuesApi, plan: _SyncPlan, events: IngestEvents, summary: IngestSummary) -> None:
    """Walk the listing page by page; each page is upserted together with the cursor's move."""
    repo, key, filters, limit = plan.repo, plan.key, plan.filters, plan.limit
    processed = 0
    first = True
    for page in api.issue_pages(repo, state=plan.state, labels=plan.labels, since=plan.since, etag=plan.etag):
        if page.not_modified:
            summary.not_modified = True
            with store.session() as session:
                set_cursor(session, key, repo=repo, filters=filters, last_updated_at=None, etag=plan.etag)
            break
        rows: list[IssueRow] = []
        newest: datetime | None = None
        truncated = False
        for item in page.items:
            if limit is not None and processed >= limit:
                truncated = True
                break
            updated = _parse_time(item.get("updated_at")) if isinstance(item, dict) else None
            if updated is not None and (newest is None or updated > newest):
                newest = updated
            try:
                row = normalise(item, repo)
            except PullRequest:
                summary.pull_requests += 1
                continue
            except BadRecord as exc:
                number = item.get("number") if isinstance(item, dict) else None
                problem = summary.add_problem(f"{repo} issue #{number}", str(exc))
                events.notify(f"skipped {problem.position}: {problem.reason}")
                continue
            rows.append(row)
            processed += 1
        if plan.comments and rows:
            _attach_comments(store, api, repo, rows, summary)
        summary.limit_reached = truncated or (limit is not None and processed >= limit and page.has_next)
        # Note [Incremental GitHub sync]: an ETag only stands for "nothing new" when its page was everything
        keep_etag = page.etag if first and not page.has_next and not truncated else None
        refused = write_batch(
            store,
            rows,
            summary,
            also=lambda session, newest=newest, keep_etag=keep_etag: set_cursor(
                session, key, repo=repo, filters=filters, last_updated_at=newest, etag=keep_etag
            ),
        )
        for problem in refused:
            events.notify(f"skipped {problem.position}: {problem.reason}")
        events.progress(processed, None)
        first = False
        if summary.limit_reached:
            break


def _attach_comments(store: Store, api: GitHubIssuesApi, repo: str, rows: list[IssueRow], summary: IngestSummary) -> None:
    """Fill ``row.comments`` where they may have changed; leave None (keep stored) elsewhere."""
    with store.session() as session:
        stored = stored_issue_states(session, repo, [row.number for row in rows])
    for row in rows:
        count = row.raw.get("comments")
        if not isinstance(count, int):
            continue
        if count == 0:
            row.comments = []
            continue
        known = stored.get(row.number)
        if known is not None and known.updated_at == row.updated_at and known.comment_count >= count:
            continue  # unchanged since we fetched its comments: keep them
        fetched = api.comments(repo, row.number)
        row.comments = []
        for obj in fetched:
            try:
                row.comments.append(comment_from_rest(obj))
            except BadRecord:
                continue  # a comment without the fields we read adds nothing to the hash
        summary.comments_fetched += len(row.comments)
