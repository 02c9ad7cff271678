"""Who may write: the review token, its cookie, CSRF tokens for forms, and the hosts the server answers.

Note [Review page security]
The page shows untrusted text (issue titles and bodies, LLM rationales), so:
- every value goes through Jinja2 autoescape; templates never use ``|safe`` on data, and the only
  HTML built in Python is Pygments' output, which escapes every token (see highlight.py);
- links to issues are built from a checked ``owner/repo`` and an integer, never from a stored URL
  (agent/review/lineage.github_issue_url, the same rule as the CLI's);
- writes need the review token: the JSON API as ``Authorization: Bearer``, the pages as an
  HttpOnly SameSite=Strict cookie set by ``/login?token=…`` plus a per-token CSRF field in every
  form and, when the browser sends one, an Origin that is this server;
- reads that carry saved inputs (the export zips of ``/export`` and ``/api/export``, whose
  reports embed each finding's inputs) need the token too, as the bearer header or the cookie,
  whatever the bind address: the queue and finding pages show text, an export hands out files;
- the server answers only to the host names it was bound for (no DNS rebinding), and binds to
  127.0.0.1 unless told otherwise;
- a Content-Security-Policy allows scripts, styles and images from this server only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

TOKEN_ENV = "TRANSFUZZ_REVIEW_TOKEN"
TOKEN_COOKIE = "transfuzz_review"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def new_token() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class ReviewAuth:
    token: str

    def __post_init__(self) -> None:
        if len(self.token) < 16:
            raise ValueError(f"{TOKEN_ENV} must be at least 16 characters")

    def matches(self, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(presented.encode(), self.token.encode())  # type: ignore[union-attr]

    @property
    def csrf(self) -> str:
        """The form token: derived from the review token, so it is useless without the cookie too."""
        return hmac.new(self.token.encode(), b"transfuzz-csrf", hashlib.sha256).hexdigest()

    def csrf_ok(self, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(presented.encode(), self.csrf.encode())  # type: ignore[union-attr]

    def bearer_ok(self, authorization: str | None) -> bool:
        scheme, _, value = (authorization or "").partition(" ")
        return scheme.lower() == "bearer" and self.matches(value.strip())


def same_origin(origin: str | None, host_header: str | None) -> bool:
    """True when the browser sent no Origin, or one whose host:port is the Host it asked."""
    if not origin:
        return True
    if origin == "null" or not host_header:
        return False
    return urlsplit(origin).netloc.lower() == host_header.lower()


def allowed_hosts(bind_host: str) -> list[str]:
    """Host header values to answer: loopback names for a loopback bind, anything otherwise."""
    if bind_host in LOOPBACK_HOSTS:
        return list(LOOPBACK_HOSTS)
    return ["*"]


def is_loopback(bind_host: str) -> bool:
    return bind_host in LOOPBACK_HOSTS


def may_read_files(auth: ReviewAuth, authorization: str | None, cookie: str | None) -> bool:
    """Whether a request may download exports (saved inputs): the review token as bearer or cookie."""
    return auth.bearer_ok(authorization) or auth.matches(cookie)
