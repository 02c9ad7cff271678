"""Hard bounds on one LLM request: a total deadline, a response size cap, bytes counted.

Note [Bounded LLM calls]
An endpoint is untrusted: it can drip one byte every half second (a per-read timeout never
fires), send a 60 MB answer, or report "0 tokens" for it. Three bounds hold whatever it does:

- **Total deadline.** The SDK call runs in a worker thread while the caller waits on an event
  for at most the time left (``run_bounded``): at the deadline the caller raises, whatever the
  socket is doing. The worker is told to stop (``CallGuard.cancel``); its transport checks the
  guard before each request and after each chunk received, and every socket read it makes is
  bounded by the time that was left when its request started, so an abandoned worker closes
  the connection at the next byte and cannot outlive the call by more than one deadline.
- **Size cap.** ``BoundedTransport`` refuses a declared ``Content-Length`` over the cap before
  reading the body, counts the bytes of a body without one and stops at the cap, and asks for
  (and only accepts) an uncompressed body, so the count is the size of what would be stored.
  Its errors are not httpx errors, so the openai SDK passes them through without retrying.
- **Bytes counted.** The guard knows how many bytes were sent and received, for the budget to
  charge when the endpoint's own token counts are missing or implausible (agent.llm.limits).

The guard reaches the transport through a ``ContextVar`` copied into the worker thread, so
concurrent calls on one client each see their own bounds.
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2

from agent.llm.errors import LlmError, LlmResponseTooLarge, LlmTimeoutError, LlmTransportError

T = TypeVar("T")
_CURRENT: contextvars.ContextVar[CallGuard | None] = contextvars.ContextVar("transfuzz_llm_call_guard", default=None)
_TIMEOUT_KEYS = ("connect", "read", "write", "pool")


@dataclass
class CallGuard:
    """The bounds of one call and what it has cost so far; shared by the caller and its worker."""

    deadline: float  # time.monotonic() value
    max_response_bytes: int
    endpoint: str
    deadline_s: float = 0.0  # the length of the deadline, for messages
    cut_by_run: bool = False  # the run's wall budget ends before the call's own deadline
    sent_bytes: int = 0
    received_bytes: int = 0
    cancelled: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def starting_now(cls, seconds: float, max_response_bytes: int, endpoint: str) -> CallGuard:
        return cls(time.monotonic() + max(0.0, seconds), max_response_bytes, endpoint, deadline_s=seconds)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def cancel(self, reason: str) -> None:
        with self._lock:
            self.cancelled = self.cancelled or reason

    def timeout_error(self) -> LlmTimeoutError:
        return LlmTimeoutError(f"the LLM endpoint {self.endpoint} gave no complete answer within the call's "
                               f"deadline of {self.deadline_s:g} s (connect and the whole response; "
                               f"{self.received_bytes} bytes received)")

    def check(self) -> None:
        """Raise when the caller gave up or the deadline passed: the worker stops here."""
        if self.cancelled is not None or self.remaining() <= 0:
            raise self.timeout_error()

    def add_sent(self, count: int) -> None:
        with self._lock:
            self.sent_bytes += count

    def add_received(self, count: int) -> None:
        with self._lock:
            self.received_bytes += count
        if self.received_bytes > self.max_response_bytes:
            raise self.too_large(f"more than {self.max_response_bytes} bytes arrived")

    def too_large(self, what: str) -> LlmResponseTooLarge:
        return LlmResponseTooLarge(f"the LLM endpoint {self.endpoint} sent an answer over the size cap of "
                                   f"{self.max_response_bytes} bytes ({what}); refused, nothing of it kept")


class _GuardedStream(httpx2.SyncByteStream):
    """A response body that counts its bytes and stops at the cap, the deadline or a cancel."""

    def __init__(self, inner: httpx2.SyncByteStream, guard: CallGuard) -> None:
        self._inner = inner
        self._guard = guard

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._guard.add_received(len(chunk))
            self._guard.check()
            yield chunk

    def close(self) -> None:
        self._inner.close()


class BoundedTransport(httpx2.BaseTransport):
    """An httpx transport that enforces the current CallGuard (or a default one) on every request."""

    def __init__(self, inner: httpx2.BaseTransport, *, default_deadline_s: float, max_response_bytes: int,
                 endpoint: str) -> None:
        self._inner = inner
        self._default_deadline_s = default_deadline_s
        self._max_response_bytes = max_response_bytes
        self._endpoint = endpoint

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        guard = _CURRENT.get()
        if guard is None:  # a request outside run_bounded still gets bounds of its own
            guard = CallGuard.starting_now(self._default_deadline_s, self._max_response_bytes, self._endpoint)
        guard.check()
        left = max(0.001, guard.remaining())
        asked = request.extensions.get("timeout") or {}
        request.extensions["timeout"] = {key: min(_finite(asked.get(key)), left) for key in _TIMEOUT_KEYS}
        request.headers["accept-encoding"] = "identity"  # the cap counts what would be stored
        try:
            guard.add_sent(len(request.content))
        except httpx2.RequestNotRead:
            pass
        response = self._inner.handle_request(request)
        try:
            _refuse_by_headers(response, guard)
        except LlmError:
            response.close()
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        return httpx2.Response(status_code=response.status_code, headers=response.headers,
                               stream=_GuardedStream(response.stream, guard), extensions=response.extensions)

    def close(self) -> None:
        self._inner.close()


def _finite(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else math.inf


def _refuse_by_headers(response: httpx2.Response, guard: CallGuard) -> None:
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise LlmTransportError(f"the LLM endpoint {guard.endpoint} sent a {encoding[:20]!r}-encoded answer "
                                f"though asked for an uncompressed one; refused (its size could not be capped)")
    declared = response.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > guard.max_response_bytes:
        raise guard.too_large(f"it declared {int(declared)} bytes")


def bounded_client(*, deadline_s: float, max_response_bytes: int, endpoint: str, max_connections: int,
                   event_hooks: dict[str, list[Callable[..., Any]]] | None = None) -> httpx2.Client:
    """An httpx client whose every request is bounded (Note [Bounded LLM calls])."""
    inner = httpx2.HTTPTransport(limits=httpx2.Limits(max_connections=max_connections))
    transport = BoundedTransport(inner, default_deadline_s=deadline_s, max_response_bytes=max_response_bytes,
                                 endpoint=endpoint)
    return httpx2.Client(timeout=deadline_s, transport=transport, event_hooks=event_hooks or {})


def run_bounded(fn: Callable[[], T], guard: CallGuard,
                on_deadline: Callable[[CallGuard], LlmError] | None = None) -> T:
    """``fn()`` under ``guard``: its result, its exception, or ``on_deadline(guard)`` (default: the
    guard's timeout error) raised once the deadline passes, whatever ``fn`` is blocked on."""
    context = contextvars.copy_context()
    context.run(_CURRENT.set, guard)
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = context.run(fn)
        except BaseException as exc:  # handed to the caller, who may already have gone
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=work, name="transfuzz-llm-call", daemon=True).start()
    if not finished.wait(max(0.0, guard.remaining())):
        guard.cancel("deadline")
        raise (on_deadline or CallGuard.timeout_error)(guard)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
