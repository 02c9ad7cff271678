"""GitHub sync against a loopback GitHub over real sockets: paging, limits, retries, ETag, since, comments.

Tests of HTTP behaviour use ``sqlite_store``; idempotency, change detection and comments use
``store`` and so run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from agent.ingest.github_api import GitHubError, GitHubIssuesApi
from agent.ingest.github_sync import OVERLAP, ingest_github
from agent.ingest.summary import IngestEvents
from db.models import IngestCursor, Issue
from db.queries.issues import as_utc
from db.store import Store
from tests.agent.ingest.conftest import SAMPLE_REPO, comments_for
from tests.agent.ingest.github_server import LoopbackGitHub

ISSUE_COUNT = 28
LABEL = "module: correctness (silent)"


def _sync(store: Store, github: LoopbackGitHub, messages: list[str] | None = None, **kwargs):  # type: ignore[no-untyped-def]
    notify = messages.append if messages is not None else (lambda _m: None)
    api = GitHubIssuesApi(
        api_url=github.api_url,
        token=kwargs.pop("token", None),
        notify=notify,
        backoff_s=0.05,
        timeout_s=kwargs.pop("timeout_s", 10.0),
        max_retries=kwargs.pop("max_retries", 5),
    )
    return ingest_github(store, SAMPLE_REPO, api=api, events=IngestEvents(notify=notify), **kwargs)


def _issues(store: Store) -> dict[int, Issue]:
    with store.session() as session:
        return {i.number: i for i in session.scalars(select(Issue))}


def _listings(github: LoopbackGitHub):  # type: ignore[no-untyped-def]
    return github.requests_to("/issues")


def _bump(github: LoopbackGitHub, number: int, **changes: object) -> datetime:
    """Edit an issue on the server the way GitHub would: content changes, updated_at moves."""
    now = datetime.now(UTC).replace(microsecond=0)
    issue = next(i for i in github.state.issues[SAMPLE_REPO] if i["number"] == number)
    issue.update(changes, updated_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return now


def test_full_sync_follows_link_pages_and_skips_pull_requests(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.max_per_page = 7  # the server pages at 7: five pages for 30 records
    summary = _sync(sqlite_store, github)
    assert (summary.new, summary.updated, summary.unchanged) == (ISSUE_COUNT, 0, 0)
    assert summary.pull_requests == 2
    listings = _listings(github)
    assert len(listings) == 5 and summary.requests == 5
    assert listings[0].query == {"state": "all", "sort": "updated", "direction": "asc", "per_page": "100"}
    assert [entry.query.get("page") for entry in listings] == [None, "2", "3", "4", "5"]
    assert all(entry.path == f"/api/v3/repos/{SAMPLE_REPO}/issues" for entry in listings)
    assert len({entry.headers.get("x-github-api-version") for entry in listings}) == 1  # same version on every page
    assert listings[-1].headers.get("x-github-api-version")
    assert "authorization" not in listings[0].headers  # works without a token
    stored = _issues(sqlite_store)
    assert len(stored) == ISSUE_COUNT and all(i.needs_extraction for i in stored.values())
    newest = max(as_utc(i.updated_at) for i in stored.values())
    with sqlite_store.session() as session:
        cursor = session.scalar(select(IngestCursor))
    assert cursor is not None and as_utc(cursor.last_updated_at) >= newest
    assert cursor.etag is None  # several pages: the first page's ETag does not stand for all


def test_incremental_runs_ask_since_the_mark_then_get_304_then_see_a_change(store: Store, github: LoopbackGitHub) -> None:
    first = _sync(store, github)
    assert first.new == ISSUE_COUNT
    with store.session() as session:
        mark = as_utc(session.scalar(select(IngestCursor.last_updated_at)))
    assert mark is not None

    second = _sync(store, github)  # asks only for what changed since the mark (with overlap)
    listing = _listings(github)[-1]
    assert listing.query["since"] == (mark - OVERLAP).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert listing.headers.get("if-none-match")  # the first run's page was complete: its ETag is sent
    assert second.new == 0 and second.updated == 0 and second.unchanged >= 1

    quota = github.state.remaining
    third = _sync(store, github)  # same since, nothing changed: 304, no quota spent
    assert _listings(github)[-1].status == 304
    assert third.not_modified and third.issues == 0
    assert github.state.remaining == quota

    changed_at = _bump(github, 105, title="avg_pool2d: wrong border values with padding=1")
    fourth = _sync(store, github)
    assert _listings(github)[-1].status == 200
    assert (fourth.new, fourth.updated) == (0, 1)
    issue = _issues(store)[105]
    assert issue.title.startswith("avg_pool2d: wrong") and issue.needs_extraction
    with store.session() as session:
        assert as_utc(session.scalar(select(IngestCursor.last_updated_at))) == changed_at


def test_since_is_sent_as_iso_z_and_filters(sqlite_store: Store, github: LoopbackGitHub) -> None:
    since = datetime(2024, 6, 1, tzinfo=UTC)
    expected = {
        i["number"]
        for i in github.state.issues[SAMPLE_REPO]
        if "pull_request" not in i and i["updated_at"] >= "2024-06-01T00:00:00Z"
    }
    assert 0 < len(expected) < ISSUE_COUNT
    summary = _sync(sqlite_store, github, since=since)
    assert _listings(github)[0].query["since"] == "2024-06-01T00:00:00Z"
    assert set(_issues(sqlite_store)) == expected and summary.new == len(expected)


def test_label_and_state_filters_have_their_own_cursor(sqlite_store: Store, github: LoopbackGitHub) -> None:
    summary = _sync(sqlite_store, github, labels=[LABEL], state="closed")
    assert _listings(github)[0].query["labels"] == LABEL and _listings(github)[0].query["state"] == "closed"
    stored = _issues(sqlite_store)
    assert stored and all(LABEL in i.labels and i.state == "closed" for i in stored.values())
    assert summary.new == len(stored)
    _sync(sqlite_store, github)
    with sqlite_store.session() as session:
        keys = sorted(session.scalars(select(IngestCursor.key)))
    assert keys == [
        f"{SAMPLE_REPO}?labels=&state=all&since=",
        f"{SAMPLE_REPO}?labels={LABEL}&state=closed&since=",
    ]


def test_limit_stops_early_and_the_next_run_resumes(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.max_per_page = 7
    first = _sync(sqlite_store, github, limit=10)
    assert first.new == 10 and first.limit_reached
    assert len(_listings(github)) == 2  # stopped after the page holding the 10th issue
    second = _sync(sqlite_store, github)
    assert second.new == ISSUE_COUNT - 10
    assert len(_issues(sqlite_store)) == ISSUE_COUNT


def test_primary_rate_limit_is_waited_out_visibly(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.faults = ["ratelimit"]
    messages: list[str] = []
    summary = _sync(sqlite_store, github, messages)
    assert summary.new == ISSUE_COUNT
    assert github.state.early_requests == 0  # never asked again before the reset (the server refuses and counts)
    assert summary.rate_limit_waits == 1
    assert any("primary rate limit" in m and "waiting" in m for m in messages)


def test_remaining_zero_pauses_before_the_next_request(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.max_per_page = 10
    github.state.remaining = 1  # the first page uses the last request of the window
    github.state.reset_at = int(time.time()) + 1
    messages: list[str] = []
    summary = _sync(sqlite_store, github, messages)
    assert summary.new == ISSUE_COUNT
    assert github.state.early_requests == 0
    assert any("rate limit used up" in m for m in messages)


def test_secondary_rate_limit_honours_retry_after(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.faults = ["secondary"]
    messages: list[str] = []
    summary = _sync(sqlite_store, github, messages)
    assert summary.new == ISSUE_COUNT
    assert github.state.early_retries == 0  # no request before Retry-After had passed (the server counts them)
    assert any("secondary rate limit" in m for m in messages)


def test_a_502_then_success_is_retried(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.faults = ["502"]
    messages: list[str] = []
    summary = _sync(sqlite_store, github, messages)
    assert summary.new == ISSUE_COUNT
    assert [e.status for e in _listings(github)] == [502, 200]
    assert any("HTTP 502" in m and "retry 1/5" in m for m in messages)


def test_a_timeout_is_retried(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.faults = ["slow:1.0"]
    messages: list[str] = []
    summary = _sync(sqlite_store, github, messages, timeout_s=0.3)
    assert summary.new == ISSUE_COUNT
    assert any("timeout" in m for m in messages)


def test_persistent_server_errors_fail_clearly_and_write_nothing(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.faults = ["502"] * 10
    with pytest.raises(GitHubError, match="HTTP 502"):
        _sync(sqlite_store, github, max_retries=2)
    assert len(_listings(github)) == 3
    assert _issues(sqlite_store) == {}
    with sqlite_store.session() as session:
        assert session.scalar(select(IngestCursor)) is None


def test_unknown_repository_and_bad_credentials(sqlite_store: Store, github: LoopbackGitHub) -> None:
    api = GitHubIssuesApi(api_url=github.api_url)
    with pytest.raises(GitHubError, match="HTTP 404 .*Not Found"):
        ingest_github(sqlite_store, "nobody/nothing", api=api)
    github.state.token = "s3cret-token"
    with pytest.raises(GitHubError, match="HTTP 401 .*Bad credentials"):
        _sync(sqlite_store, github)
    summary = _sync(sqlite_store, github, token="s3cret-token")
    assert summary.new == ISSUE_COUNT
    assert _listings(github)[-1].headers["authorization"].endswith("s3cret-token")


def test_comments_are_fetched_once_and_again_only_after_a_change(store: Store, github: LoopbackGitHub) -> None:
    issues = [i for i in github.state.issues[SAMPLE_REPO] if "pull_request" not in i]
    with_comments = [i for i in issues if i["comments"]]
    assert with_comments
    summary = _sync(store, github, comments=True)
    assert len(github.requests_to("/comments")) == len(with_comments)
    assert summary.comments_fetched == sum(i["comments"] for i in issues)
    stored = _issues(store)
    target = with_comments[0]
    assert stored[target["number"]].comments == [
        {"author": c["user"]["login"], "body": c["body"], "created_at": c["created_at"]} for c in comments_for(target)
    ]
    assert all(stored[i["number"]].comments == [] for i in issues if not i["comments"])

    # a run that re-sees the overlap does not refetch comments of issues that did not move
    _sync(store, github, comments=True)
    assert len(github.requests_to("/comments")) == len(with_comments)

    # a new comment bumps the issue: its comments are fetched again and the issue is updated
    key = (SAMPLE_REPO, target["number"])
    github.state.comments[key].append(
        {"id": 1, "user": {"login": "core-dev"}, "body": "Confirmed: silent wrong result.", "created_at": "2025-01-01T00:00:00Z"}
    )
    _bump(github, target["number"], comments=target["comments"] + 1)
    third = _sync(store, github, comments=True)
    assert third.updated == 1
    assert github.requests_to("/comments")[-1].path.endswith(f"/issues/{target['number']}/comments")
    assert _issues(store)[target["number"]].comments[-1]["author"] == "core-dev"


def test_a_sync_without_comments_keeps_comments_fetched_before(store: Store, github: LoopbackGitHub) -> None:
    _sync(store, github, comments=True)
    before = {n: i.comments for n, i in _issues(store).items()}
    _bump(github, 101, body="Reproduces on 2.5 as well.")
    summary = _sync(store, github)
    assert summary.updated == 1
    after = _issues(store)
    assert after[101].body == "Reproduces on 2.5 as well."
    assert {n: i.comments for n, i in after.items()} == before


def test_overlap_window_is_idempotent(store: Store, github: LoopbackGitHub) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    for k, issue in enumerate(github.state.issues[SAMPLE_REPO][:3]):
        issue["updated_at"] = (now - timedelta(minutes=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
    _sync(store, github)
    again = _sync(store, github)
    assert again.new == 0 and again.updated == 0
    assert again.unchanged + again.pull_requests >= 3


def test_rate_limit_waits_do_not_use_up_the_server_error_retries(sqlite_store: Store, github: LoopbackGitHub) -> None:
    github.state.faults = ["secondary", "secondary", "502", "502"]
    messages: list[str] = []
    summary = _sync(sqlite_store, github, messages, max_retries=2)
    assert summary.new == ISSUE_COUNT
    assert [e.status for e in _listings(github)] == [429, 429, 502, 502, 200]
    assert [m.split(";")[1].strip() for m in messages if "HTTP 502" in m] == ["retry 1/2 in 0.1s", "retry 2/2 in 0.1s"]
