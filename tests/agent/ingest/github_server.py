"""A GitHub REST server on loopback that speaks enough of the API for the ingest tests.

It serves ``{prefix}/repos/OWNER/REPO/issues`` (state, labels, since, sort, direction,
per_page, page; Link-header pagination; ETag and If-None-Match → 304) and
``{prefix}/repos/OWNER/REPO/issues/N/comments``, with rate-limit headers on every answer.
The primary limit is modelled: at ``remaining == 0`` every request before ``reset_at`` is
refused with 403 and counted in ``early_requests``. Scripted faults (``faults``) are consumed
one per request: "ratelimit" (quota used up, reset a second ahead), "secondary" (429 with
Retry-After), "502", or "slow:SECONDS".
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

ISSUES_PATH = re.compile(r"^/repos/([^/]+)/([^/]+)/issues$")
COMMENTS_PATH = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$")
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@dataclass
class Logged:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int = 0


@dataclass
class GitHubState:
    issues: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    comments: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    log: list[Logged] = field(default_factory=list)
    early_requests: int = 0  # requests made while the primary limit was used up
    early_retries: int = 0  # requests made before a secondary limit's Retry-After had passed
    retry_not_before: float = 0.0  # monotonic time before which a request breaks the last Retry-After
    limit: int = 5000
    remaining: int = 5000  # at 0, requests before reset_at are refused (403) and counted
    reset_at: int = field(default_factory=lambda: int(time.time()) + 3600)
    max_per_page: int = 100
    token: str | None = None  # when set, requests must carry it
    lock: threading.Lock = field(default_factory=threading.Lock)


def _parse_iso(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    _entry: Logged

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        return

    def _send(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        payload = b"" if body is None else json.dumps(body).encode()
        # logged before the response leaves: a client that has its answer may read the log at once
        self._entry.status = status
        self.send_response(status)
        state = self.server.state
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("X-RateLimit-Limit", "5000")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if not headers or "X-RateLimit-Remaining" not in headers:
            self.send_header("X-RateLimit-Remaining", str(state.remaining))
            self.send_header("X-RateLimit-Reset", str(state.reset_at))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload:
            self.wfile.write(payload)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        state = self.server.state
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        path = split.path
        self._entry = Logged("GET", path, query, {k.lower(): v for k, v in self.headers.items()})
        with state.lock:
            state.log.append(self._entry)
            fault = state.faults.pop(0) if state.faults else None
            if time.monotonic() < state.retry_not_before:
                state.early_retries += 1
            if fault == "secondary":
                state.retry_not_before = time.monotonic() + 1.0  # the Retry-After sent below
            if state.remaining <= 0 and time.time() >= state.reset_at:
                state.remaining = state.limit  # the window rolled over
            blocked = state.remaining <= 0
            if blocked:
                state.early_requests += 1
            elif fault == "ratelimit":
                state.remaining = 0
                state.reset_at = int(time.time()) + 1  # a second ahead
        if blocked or fault == "ratelimit":
            self._rate_limited()
            return
        if fault == "secondary":
            self._send(429, {"message": "You have exceeded a secondary rate limit."}, {"Retry-After": "1"})
            return
        if fault == "502":
            self._send(502, {"message": "Server Error"})
            return
        if fault and fault.startswith("slow:"):
            time.sleep(float(fault.split(":", 1)[1]))
        if state.token is not None and self.headers.get("Authorization", "").split(" ")[-1] != state.token:
            self._send(401, {"message": "Bad credentials"})
            return
        prefix = self.server.prefix
        if not path.startswith(prefix):
            self._send(404, {"message": "Not Found"})
            return
        path = path[len(prefix) :]
        if match := ISSUES_PATH.match(path):
            self._issues(f"{match.group(1)}/{match.group(2)}", query)
        elif match := COMMENTS_PATH.match(path):
            self._comments(f"{match.group(1)}/{match.group(2)}", int(match.group(3)), query)
        else:
            self._send(404, {"message": "Not Found"})

    def _rate_limited(self) -> None:
        reset = self.server.state.reset_at
        self._send(
            403,
            {"message": "API rate limit exceeded for 127.0.0.1."},
            {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
        )

    def _page(self, items: list[dict[str, Any]], query: dict[str, str], default_per_page: int) -> None:
        per_page = min(int(query.get("per_page", default_per_page)), self.server.state.max_per_page)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page : page * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}{urlsplit(self.path).path}"
        if page < last:
            links.append(f'<{base}?{urlencode({**query, "page": page + 1})}>; rel="next"')
            links.append(f'<{base}?{urlencode({**query, "page": last})}>; rel="last"')
        body = json.dumps(chunk).encode()
        etag = f'W/"{hashlib.sha256(body).hexdigest()[:32]}"'
        headers = {"ETag": etag}
        if links:
            headers["Link"] = ", ".join(links)
        if self.headers.get("If-None-Match") == etag:
            self._send(304, None, headers)
            return
        with self.server.state.lock:  # a 304 costs no quota, as on GitHub
            self.server.state.remaining -= 1
        self._send(200, chunk, headers)

    def _issues(self, repo: str, query: dict[str, str]) -> None:
        state = self.server.state
        if repo not in state.issues:
            self._send(404, {"message": "Not Found"})
            return
        items = list(state.issues[repo])
        wanted_state = query.get("state", "open")
        if wanted_state != "all":
            items = [i for i in items if i["state"] == wanted_state]
        if query.get("labels"):
            wanted = set(query["labels"].split(","))
            items = [i for i in items if wanted <= {label["name"] for label in i["labels"]}]
        if "since" in query:
            if not ISO_Z.match(query["since"]):
                self._send(422, {"message": "Validation Failed: since must be YYYY-MM-DDTHH:MM:SSZ"})
                return
            since = _parse_iso(query["since"])
            items = [i for i in items if _parse_iso(i["updated_at"]) >= since]
        key = "updated_at" if query.get("sort") == "updated" else "created_at"
        items.sort(key=lambda i: (i[key], i["number"]), reverse=query.get("direction", "desc") == "desc")
        self._page(items, query, 30)

    def _comments(self, repo: str, number: int, query: dict[str, str]) -> None:
        comments = self.server.state.comments.get((repo, number))
        if comments is None:
            self._send(404, {"message": "Not Found"})
            return
        self._page(comments, query, 30)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: GitHubState, prefix: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        self.prefix = prefix


class LoopbackGitHub:
    """Start with ``with LoopbackGitHub(state) as gh:``; ``gh.api_url`` is the base URL to use."""

    def __init__(self, state: GitHubState, prefix: str = "/api/v3") -> None:
        self.state = state
        self._server = _Server(state, prefix)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        host, port = self._server.server_address[:2]
        self.api_url = f"http://{host}:{port}{prefix}"

    def __enter__(self) -> LoopbackGitHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def requests_to(self, suffix: str) -> list[Logged]:
        return [entry for entry in self.state.log if entry.path.endswith(suffix)]
