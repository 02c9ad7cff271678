"""Turn one source record (GitHub REST issue, or `gh issue list --json` camelCase) into an IssueRow."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from db.queries.issues import IssueRow

# https://api.github.com/repos/OWNER/REPO (also GitHub Enterprise: https://host/api/v3/repos/OWNER/REPO)
_API_REPO = re.compile(r"/repos/([^/\s]+/[^/\s]+?)/?$")
# https://github.com/OWNER/REPO/issues/123 (or /pull/123)
_HTML_REPO = re.compile(r"^https?://[^/]+/([^/\s]+/[^/\s]+)/(issues|pull)/\d+")
REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class BadRecord(ValueError):
    """A record that cannot become an issue; the message is the reason shown to the user."""


class PullRequest(Exception):
    """The record is a pull request: skipped and counted, not an error."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _RestUser(_Lenient):
    login: str | None = None


class _RestLabel(_Lenient):
    name: str


class _RestComment(_Lenient):
    user: _RestUser | None = None
    body: str | None = ""
    created_at: datetime | None = None


class _RestIssue(_Lenient):
    number: int
    title: str
    body: str | None = ""
    labels: list[_RestLabel | str] = []
    state: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    closed_at: datetime | None = None
    html_url: str | None = None
    url: str | None = None
    repository_url: str | None = None
    comments: int | list[_RestComment] | None = None
    pull_request: dict[str, Any] | None = None

    @field_validator("number")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("issue number must be positive")
        return value


class _GhAuthor(_Lenient):
    login: str | None = None


class _GhLabel(_Lenient):
    name: str


class _GhComment(_Lenient):
    author: _GhAuthor | None = None
    body: str | None = ""
    createdAt: datetime | None = None


class _GhIssue(_Lenient):
    number: int
    title: str
    body: str | None = ""
    labels: list[_GhLabel | str] = []
    state: str
    createdAt: datetime | None = None
    updatedAt: datetime | None = None
    closedAt: datetime | None = None
    url: str | None = None
    comments: list[_GhComment] | None = None

    @field_validator("number")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError("issue number must be positive")
        return value


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def iso_z(value: datetime | None) -> str | None:
    """The form GitHub uses: 2024-01-10T11:22:05Z."""
    utc = _utc(value)
    return utc.strftime("%Y-%m-%dT%H:%M:%SZ") if utc is not None else None


def _label_names(labels: list[Any]) -> list[str]:
    return [label if isinstance(label, str) else label.name for label in labels]


def _reason(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "record"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - 3
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _repo_from(*urls: str | None) -> str | None:
    for url in urls:
        if not url:
            continue
        match = _API_REPO.search(url) or _HTML_REPO.match(url)
        if match:
            return match.group(1)
    return None


def is_gh_cli_record(obj: dict[str, Any]) -> bool:
    """`gh --json` output is camelCase; REST objects are snake_case."""
    return "createdAt" in obj or "updatedAt" in obj or ("url" in obj and "html_url" not in obj and "repository_url" not in obj)


def normalise(obj: Any, repo: str | None = None) -> IssueRow:
    """One record → IssueRow. Raises PullRequest for pull requests and BadRecord when unusable.

    ``repo`` (OWNER/REPO) overrides the repository named in the record; `gh` output names it
    only in its ``url``.
    """
    if not isinstance(obj, dict):
        raise BadRecord(f"expected a JSON object, got {type(obj).__name__}")
    if is_gh_cli_record(obj):
        return _from_gh(obj, repo)
    return _from_rest(obj, repo)


def _from_rest(obj: dict[str, Any], repo: str | None) -> IssueRow:
    try:
        issue = _RestIssue.model_validate(obj)
    except ValidationError as exc:
        raise BadRecord(_reason(exc)) from None
    if issue.pull_request is not None or "/pull/" in (issue.html_url or ""):
        raise PullRequest(issue.number)
    name = repo or _repo_from(issue.repository_url, issue.html_url, issue.url)
    if name is None:
        raise BadRecord("no repository: neither repository_url nor html_url names OWNER/REPO (pass --repo)")
    comments: list[dict[str, Any]] | None = None
    if isinstance(issue.comments, list):
        comments = [
            {"author": c.user.login if c.user else None, "body": c.body or "", "created_at": iso_z(c.created_at)}
            for c in issue.comments
        ]
    return IssueRow(
        repo=name,
        number=issue.number,
        title=issue.title,
        body=issue.body or "",
        labels=_label_names(issue.labels),
        state=issue.state.lower(),
        created_at=_utc(issue.created_at),
        updated_at=_utc(issue.updated_at),
        closed_at=_utc(issue.closed_at),
        url=issue.html_url or issue.url or "",
        comments=comments,
        raw=obj,
    )


def _from_gh(obj: dict[str, Any], repo: str | None) -> IssueRow:
    try:
        issue = _GhIssue.model_validate(obj)
    except ValidationError as exc:
        raise BadRecord(_reason(exc)) from None
    if "/pull/" in (issue.url or ""):
        raise PullRequest(issue.number)
    name = repo or _repo_from(issue.url)
    if name is None:
        raise BadRecord("no repository: url does not name OWNER/REPO (pass --repo)")
    comments = None
    if issue.comments is not None:
        comments = [
            {"author": c.author.login if c.author else None, "body": c.body or "", "created_at": iso_z(c.createdAt)}
            for c in issue.comments
        ]
    return IssueRow(
        repo=name,
        number=issue.number,
        title=issue.title,
        body=issue.body or "",
        labels=_label_names(issue.labels),
        state=issue.state.lower(),
        created_at=_utc(issue.createdAt),
        updated_at=_utc(issue.updatedAt),
        closed_at=_utc(issue.closedAt),
        url=issue.url or "",
        comments=comments,
        raw=obj,
    )


def comment_from_rest(obj: dict[str, Any]) -> dict[str, Any]:
    """A REST comment object (from /issues/N/comments) → {author, body, created_at}."""
    try:
        comment = _RestComment.model_validate(obj)
    except ValidationError as exc:
        raise BadRecord(_reason(exc)) from None
    return {"author": comment.user.login if comment.user else None, "body": comment.body or "", "created_at": iso_z(comment.created_at)}
