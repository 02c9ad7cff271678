"""Turn one source record (GitHub REST issue, or `gh issue list --json` camelCase) into an IssueRow.

Every record is untrusted (Note [Untrusted records] in untrusted.py): it is checked on its own,
its texts are capped (``RecordLimits``), and what was cut is noted under ``TRUNCATED_KEY`` in
the stored ``raw``, which keeps the source object without the texts stored in their own columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from agent.ingest.untrusted import UnsafeValue, cap_text, inspect_value, quoted, without_nul
from db.queries.issues import IssueRow

# https://api.github.com/repos/OWNER/REPO (also GitHub Enterprise: https://host/api/v3/repos/OWNER/REPO)
_API_REPO = re.compile(r"/repos/([^/\s]+/[^/\s]+?)/?$")
# https://github.com/OWNER/REPO/issues/123 (or /pull/123)
_HTML_REPO = re.compile(r"^https?://[^/]+/([^/\s]+/[^/\s]+)/(issues|pull)/\d+")
# GitHub's rules: an owner is letters, digits and hyphens (underscores in enterprise accounts), at
# most 39; a repository is letters, digits, '.', '_' and '-', at most 100, and never only dots.
REPO_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,38}/(?!\.+$)[A-Za-z0-9_.-]{1,100}$")
MAX_ISSUE_NUMBER = 2**31 - 1  # issues.number is a 32-bit INTEGER on PostgreSQL
MAX_TITLE_CHARS = 1024  # GitHub allows 256
DEFAULT_MAX_BODY_BYTES = 256 * 1024
MAX_RAW_FIELD_CHARS = 16 * 1024  # a larger unknown field is left out of the stored raw object
TRUNCATED_KEY = "_transfuzz_truncated"
STATES = ("open", "closed")


@dataclass(frozen=True)
class RecordLimits:
    """How much text of one record is kept; the rest is cut and the cut noted in ``raw``."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES


DEFAULT_LIMITS = RecordLimits()


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
        return _issue_number(value)


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
        return _issue_number(value)


def _issue_number(value: int) -> int:
    if not 0 < value <= MAX_ISSUE_NUMBER:
        raise ValueError(f"issue number must be between 1 and {MAX_ISSUE_NUMBER}")
    return value


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise BadRecord(f"timestamp {value.isoformat()} is out of range") from None


def valid_repo_name(name: str) -> bool:
    """OWNER/REPO as GitHub allows it: no '..', no third path part, no odd characters."""
    return REPO_NAME.match(name) is not None


def _safe_url(url: str | None) -> str:
    """Only http(s) links are kept; ``javascript:`` and the like become empty."""
    return url if url and url.startswith(("https://", "http://")) and not any(c.isspace() for c in url) else ""


def _checked(obj: Any) -> tuple[dict[str, Any], dict[str, int]]:
    """The record without NUL characters, and its text size per top-level key; see Note [Untrusted records]."""
    if not isinstance(obj, dict):
        raise BadRecord(f"expected a JSON object, got {type(obj).__name__}")
    try:
        facts = inspect_value(obj)
    except UnsafeValue as exc:
        raise BadRecord(str(exc)) from None
    return (without_nul(obj) if facts.has_nul else obj), facts.chars_by_key


def _stored_raw(obj: dict[str, Any], chars_by_key: dict[str, int], truncated: dict[str, int]) -> dict[str, Any]:
    """The source object as stored: texts kept in their own columns and oversized fields left out."""
    raw: dict[str, Any] = {}
    dropped = []
    for key, value in obj.items():
        if key == "body" or (key == "comments" and isinstance(value, list)):
            continue  # stored in the body and comments columns
        if chars_by_key.get(key, 0) > MAX_RAW_FIELD_CHARS and key != "title":
            dropped.append(key)
            continue
        raw[key] = value
    if dropped:
        truncated["raw_fields_left_out"] = len(dropped)
    if truncated:
        raw[TRUNCATED_KEY] = truncated
    if "title" in raw and "title" in truncated:
        raw.pop("title")  # the capped title is in its column
    return raw


def truncated_fields(raw: dict[str, Any]) -> dict[str, int]:
    """What ingest cut from a stored issue; empty if nothing.

    ``title``/``body``: the original size in UTF-8 bytes; ``comments``: how many comment bodies
    were cut; ``raw_fields_left_out``: how many oversized unknown fields ``raw`` does not keep.
    """
    found = raw.get(TRUNCATED_KEY) if isinstance(raw, dict) else None
    return dict(found) if isinstance(found, dict) else {}


@dataclass
class _Texts:
    """Title, body and comments after the caps, and what each cut removed."""

    title: str
    body: str
    comments: list[dict[str, Any]] | None
    truncated: dict[str, int]


def _capped(title: str, body: str, comments: list[dict[str, Any]] | None, limits: RecordLimits) -> _Texts:
    truncated: dict[str, int] = {}
    if len(title) > MAX_TITLE_CHARS:
        truncated["title"] = len(title.encode("utf-8"))
        title = title[:MAX_TITLE_CHARS]
    kept_body, cut = cap_text(body, limits.max_body_bytes)
    if cut:
        truncated["body"] = len(body.encode("utf-8"))
    cut_comments = 0
    for comment in comments or []:
        comment["body"], cut = cap_text(comment["body"], limits.max_body_bytes)
        cut_comments += cut
    if cut_comments:
        truncated["comments"] = cut_comments
    return _Texts(title, kept_body, comments, truncated)


def _repo_or_bad(name: str | None, missing: str) -> str:
    if name is None:
        raise BadRecord(missing)
    if not valid_repo_name(name):
        raise BadRecord(f"repository '{quoted(name, 140)}' is not a valid OWNER/REPO")
    return name


def _state(value: str) -> str:
    state = value.lower()
    if state not in STATES:
        raise BadRecord(f"state must be open or closed, got '{quoted(value, 40)}'")
    return state


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


def normalise(obj: Any, repo: str | None = None, limits: RecordLimits = DEFAULT_LIMITS) -> IssueRow:
    """One record → IssueRow. Raises PullRequest for pull requests and BadRecord when unusable.

    ``repo`` (OWNER/REPO) overrides the repository named in the record; `gh` output names it
    only in its ``url``. See Note [Untrusted records] for the checks.
    """
    checked, chars_by_key = _checked(obj)
    if is_gh_cli_record(checked):
        return _from_gh(checked, repo, limits, chars_by_key)
    return _from_rest(checked, repo, limits, chars_by_key)


def _from_rest(obj: dict[str, Any], repo: str | None, limits: RecordLimits, chars_by_key: dict[str, int]) -> IssueRow:
    try:
        issue = _RestIssue.model_validate(obj)
    except ValidationError as exc:
        raise BadRecord(_reason(exc)) from None
    if issue.pull_request is not None or "/pull/" in (issue.html_url or ""):
        raise PullRequest(issue.number)
    name = _repo_or_bad(
        repo or _repo_from(issue.repository_url, issue.html_url, issue.url),
        "no repository: neither repository_url nor html_url names OWNER/REPO (pass --repo)",
    )
    comments: list[dict[str, Any]] | None = None
    if isinstance(issue.comments, list):
        comments = [
            {"author": c.user.login if c.user else None, "body": c.body or "", "created_at": iso_z(c.created_at)}
            for c in issue.comments
        ]
    texts = _capped(issue.title, issue.body or "", comments, limits)
    return IssueRow(
        repo=name,
        number=issue.number,
        title=texts.title,
        body=texts.body,
        labels=_label_names(issue.labels),
        state=_state(issue.state),
        created_at=_utc(issue.created_at),
        updated_at=_utc(issue.updated_at),
        closed_at=_utc(issue.closed_at),
        url=_safe_url(issue.html_url or issue.url),
        comments=texts.comments,
        raw=_stored_raw(obj, chars_by_key, texts.truncated),
    )


def _from_gh(obj: dict[str, Any], repo: str | None, limits: RecordLimits, chars_by_key: dict[str, int]) -> IssueRow:
    try:
        issue = _GhIssue.model_validate(obj)
    except ValidationError as exc:
        raise BadRecord(_reason(exc)) from None
    if "/pull/" in (issue.url or ""):
        raise PullRequest(issue.number)
    name = _repo_or_bad(repo or _repo_from(issue.url), "no repository: url does not name OWNER/REPO (pass --repo)")
    comments = None
    if issue.comments is not None:
        comments = [
            {"author": c.author.login if c.author else None, "body": c.body or "", "created_at": iso_z(c.createdAt)}
            for c in issue.comments
        ]
    texts = _capped(issue.title, issue.body or "", comments, limits)
    return IssueRow(
        repo=name,
        number=issue.number,
        title=texts.title,
        body=texts.body,
        labels=_label_names(issue.labels),
        state=_state(issue.state),
        created_at=_utc(issue.createdAt),
        updated_at=_utc(issue.updatedAt),
        closed_at=_utc(issue.closedAt),
        url=_safe_url(issue.url),
        comments=texts.comments,
        raw=_stored_raw(obj, chars_by_key, texts.truncated),
    )


def comment_from_rest(obj: dict[str, Any], limits: RecordLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A REST comment object (from /issues/N/comments) → {author, body, created_at}, checked and capped."""
    checked, _ = _checked(obj)
    try:
        comment = _RestComment.model_validate(checked)
    except ValidationError as exc:
        raise BadRecord(_reason(exc)) from None
    body, _cut = cap_text(comment.body or "", limits.max_body_bytes)
    return {"author": comment.user.login if comment.user else None, "body": body, "created_at": iso_z(comment.created_at)}
