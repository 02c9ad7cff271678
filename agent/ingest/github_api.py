"""GitHub REST access for ingest: issue pages and comments through githubkit, waits made visible.

Note [Why we drive the pages ourselves]
githubkit gives us typed endpoint calls, auth, timeouts and its retry hook; its ``paginate``
flattens pages into one item stream, but a sync must commit and move its cursor page by page
and must see the first page's ETag and a 304. So we call the endpoint for the first page and
follow the ``Link: rel="next"`` URL (parsed by httpx) through ``GitHub.request``. Every
request, first page or not, goes through githubkit's retry hook, which is ours (RetryPolicy).

Note [Rate limits]
Primary limit: a 403/429 with ``X-RateLimit-Remaining: 0`` means wait until
``X-RateLimit-Reset`` (plus a second for clock skew); we also stop *before* such a 403 when a
successful answer already says remaining 0. Secondary limit: a 403/429 with ``Retry-After``
means wait that long. Both waits are announced through ``notify`` and retried without a cap:
a rate limit delays a run, it never fails it. 5xx answers, timeouts and connection errors are
retried with exponential backoff, ``max_retries`` times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from githubkit import GitHub
from githubkit.exception import (
    GitHubException,
    PrimaryRateLimitExceeded,
    RateLimitExceeded,
    RequestError,
    RequestFailed,
    RequestTimeout,
)
from githubkit.typing import RetryOption

DEFAULT_API_URL = "https://api.github.com"
PER_PAGE = 100
CLOCK_SKEW = timedelta(seconds=1)


class GitHubError(RuntimeError):
    """GitHub refused or could not answer after the retries; the message says what and where."""


@dataclass
class Page:
    """One page of a listing: raw JSON items, the ETag, and whether more pages follow."""

    items: list[dict[str, Any]]
    etag: str | None
    has_next: bool
    not_modified: bool = False


@dataclass
class RequestStats:
    requests: int = 0
    rate_limit_waits: int = 0
    retries: int = 0


@dataclass
class RetryPolicy:
    """githubkit's retry hook: wait out rate limits (announced), back off on server trouble."""

    notify: Callable[[str], None]
    stats: RequestStats
    max_retries: int = 5
    backoff_s: float = 1.0
    _rate_limit_retries: int = 0  # of the current request: they do not use up max_retries

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if retry_count == 0:  # githubkit counts per request; a new request starts at 0
            self._rate_limit_retries = 0
        if isinstance(exc, RateLimitExceeded):
            self._rate_limit_retries += 1
            wait = exc.retry_after
            kind = "primary" if isinstance(exc, PrimaryRateLimitExceeded) else "secondary"
            if kind == "primary":
                wait += CLOCK_SKEW
            wait = max(wait, timedelta(milliseconds=100))  # a zero timedelta would mean "60 s" to githubkit
            self.stats.rate_limit_waits += 1
            until = (datetime.now(UTC) + wait).strftime("%H:%M:%S UTC")
            self.notify(f"GitHub {kind} rate limit reached: waiting {wait.total_seconds():.0f}s (until {until})")
            return RetryOption(True, wait)
        transient = isinstance(exc, RequestTimeout) or (
            isinstance(exc, RequestFailed) and exc.response.status_code >= 500
        ) or (type(exc) is RequestError)
        attempt = retry_count - self._rate_limit_retries
        if transient and attempt < self.max_retries:
            wait_s = min(self.backoff_s * (2**attempt), 60.0)
            self.stats.retries += 1
            self.notify(f"GitHub request failed ({_what(exc)}); retry {attempt + 1}/{self.max_retries} in {wait_s:.1f}s")
            return RetryOption(True, timedelta(seconds=wait_s))
        return RetryOption(False)


def _what(exc: GitHubException) -> str:
    if isinstance(exc, RequestFailed):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, RequestTimeout):
        return "timeout"
    if isinstance(exc, RequestError):
        return f"{type(exc.exc).__name__}: {exc.exc}"
    return type(exc).__name__


class GitHubIssuesApi:
    """The two endpoints ingest needs: issue listing pages and an issue's comments."""

    def __init__(
        self,
        *,
        token: str | None = None,
        api_url: str | None = None,
        notify: Callable[[str], None] | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 5,
        backoff_s: float = 1.0,
    ) -> None:
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.notify = notify or (lambda _m: None)
        self.stats = RequestStats()
        self._policy = RetryPolicy(self.notify, self.stats, max_retries=max_retries, backoff_s=backoff_s)
        # http_cache off: conditional requests are ours (the cursor's ETag), not an in-memory cache's
        self._gh = GitHub(
            token or None,
            base_url=self.api_url,
            timeout=timeout_s,
            http_cache=False,
            auto_retry=self._policy,
            event_hooks={"request": [self._count_request]},
        )
        self._pause_until: float = 0.0
        self._depth = 0

    def _count_request(self, _request: Any) -> None:
        self.stats.requests += 1

    @contextmanager
    def connection(self) -> Iterator[GitHubIssuesApi]:
        """Keep one HTTP client (and its TLS connections) for every request inside; re-entrant.

        Outside it githubkit builds a new client, hence a new connection, for each request.
        """
        if self._depth == 0:
            self._gh.__enter__()
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._gh.__exit__(None, None, None)

    # -- requests -------------------------------------------------------------------------

    def _before_request(self) -> None:
        wait = self._pause_until - time.time()
        if wait > 0:
            self.stats.rate_limit_waits += 1
            self.notify(f"GitHub rate limit used up: waiting {wait:.0f}s for the reset")
            time.sleep(wait)
        self._pause_until = 0.0

    def _after_response(self, headers: Any) -> None:
        # Note [Rate limits]: stop before the 403 when the answer says nothing is left
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            try:
                reset = int(headers["x-ratelimit-reset"])
            except ValueError:
                return
            self._pause_until = reset + CLOCK_SKEW.total_seconds()

    def _call(self, fn: Callable[[], Any], what: str) -> Any:
        self._before_request()
        try:
            response = fn()
        except RequestFailed as exc:
            message = _error_message(exc)
            raise GitHubError(f"GitHub answered HTTP {exc.response.status_code} for {what}: {message}") from None
        except RequestTimeout:
            raise GitHubError(f"GitHub did not answer in time for {what} (after retries)") from None
        except RequestError as exc:
            raise GitHubError(f"cannot reach {self.api_url} for {what}: {exc.exc}") from None
        self._after_response(response.headers)
        return response

    def _pages(self, first: Callable[[], Any], what: str) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
        """Yield (response, items) for the first page and every rel="next" page after it."""
        response = self._call(first, what)
        while True:
            if response.status_code == 304:
                yield response, []
                return
            items = response.json()
            if not isinstance(items, list):
                raise GitHubError(f"GitHub answered {what} with {type(items).__name__}, expected a list")
            yield response, items
            next_url = response.raw_response.links.get("next", {}).get("url")
            if not next_url:
                return
            # the endpoint call set the API version; a bare request for the next link would not
            version = response.raw_request.headers.get("x-github-api-version")
            headers = {"X-GitHub-Api-Version": version} if version else None
            response = self._call(lambda url=next_url, headers=headers: self._gh.request("GET", url, headers=headers), what)

    def issue_pages(
        self,
        repo: str,
        *,
        state: str = "all",
        labels: list[str] | None = None,
        since: datetime | None = None,
        etag: str | None = None,
    ) -> Iterator[Page]:
        """Issues (and pull requests) of ``repo`` updated since ``since``, oldest update first."""
        owner, name = repo.split("/", 1)
        params: dict[str, Any] = {"state": state, "sort": "updated", "direction": "asc", "per_page": PER_PAGE}
        if labels:
            params["labels"] = ",".join(labels)
        if since is not None:
            # githubkit would format a datetime with a space; GitHub documents YYYY-MM-DDTHH:MM:SSZ
            params["since"] = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        headers = {"If-None-Match": etag} if etag else None

        def first() -> Any:
            return self._gh.rest.issues.list_for_repo(owner, name, headers=headers, **params)

        for response, items in self._pages(first, f"the issues of {repo}"):
            has_next = bool(response.raw_response.links.get("next"))
            yield Page(items=items, etag=response.headers.get("etag"), has_next=has_next, not_modified=response.status_code == 304)

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """All comments of one issue, oldest first, as raw REST objects."""
        owner, name = repo.split("/", 1)

        def first() -> Any:
            return self._gh.rest.issues.list_comments(owner, name, number, per_page=PER_PAGE)

        out: list[dict[str, Any]] = []
        for _response, items in self._pages(first, f"the comments of {repo}#{number}"):
            out.extend(items)
        return out


def _error_message(exc: RequestFailed) -> str:
    try:
        body = exc.response.json()
    except Exception:
        return exc.response.raw_response.text[:200] or exc.response.reason_phrase
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return str(body)[:200]
