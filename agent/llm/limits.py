"""Bounds on LLM work: a token/call/time budget shared by every stage, and a circuit breaker.

Note [LLM budget]
One ``LlmBudget`` lives as long as a backend, so every stage of a ``run`` spends from the same
budget. Before each request the caller reserves the tokens it expects to use (the prompt's
length plus the largest completion seen so far); a request that would not fit is never sent.
Reservations of calls in flight count as spent until the answer's real usage replaces them, so
parallel calls cannot jointly overrun the budget by more than their estimates were short, and
a run overshoots by at most one call's estimation error. The wall-clock deadline of
``run --budget`` is checked at the same place, so the LLM stages stop when the run's time is spent;
a call in flight is cut at that deadline too (each call's deadline is the earlier of its own and
the run's; Note [Bounded LLM calls] in agent/llm/bounded_http.py), so a run overshoots its time by
no more than one call's deadline.

Note [Tokens charged by bytes]
The endpoint's usage counts are its word, and a hostile or broken one says "0 tokens" for a
60 MB answer. Every answer is therefore also charged by the bytes that arrived: a token of real
text rarely takes more than ``MAX_BYTES_PER_TOKEN`` bytes as JSON (a non-ASCII character escaped
as ``\\uXXXX`` takes 6), so ``(bytes - ENVELOPE_BYTES) / MAX_BYTES_PER_TOKEN`` is a floor honest
counts stay above (long runs of whitespace aside, which it overcharges a little). A completion is
charged the larger of the reported count and that floor, failed requests included (what arrived
before the failure). Prompts are ours: their size is bounded by what we send, and the reservation
before each request already uses our own estimate of it.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass

from agent.llm.errors import LlmBudgetExceeded, LlmEndpointDown

_TOKEN_SUFFIX = {"": 1, "k": 1_000, "m": 1_000_000}
_BUDGET_PART = re.compile(r"(\d+(?:\.\d+)?)([km]?)[-_ ]?(tokens?|calls?)?")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)?")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "": 1.0, "m": 60.0, "h": 3600.0}
CHARS_PER_TOKEN = 4  # rough size of a token in English text and code; only used to reserve
MAX_BYTES_PER_TOKEN = 8  # no honest token takes more bytes on the wire; see Note [Tokens charged by bytes]
ENVELOPE_BYTES = 1024  # the JSON around an answer (id, model, usage ...), not charged as tokens
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # an extraction answer is a few KiB; 4 MiB is refused
DEFAULT_MAX_EMBEDDINGS_BYTES = 64 * 1024 * 1024  # a batch of vectors as JSON numbers is larger


@dataclass(frozen=True)
class LlmBudgetSpec:
    """What ``--llm-budget`` asked for: a token limit, a call limit, or both (None = no limit)."""

    tokens: int | None = None
    calls: int | None = None


def parse_llm_budget(text: str) -> LlmBudgetSpec:
    """``200k`` or ``200k-tokens`` (tokens), ``50-calls`` (requests), or both joined by a comma."""
    tokens: int | None = None
    calls: int | None = None
    parts = [p.strip() for p in text.strip().lower().split(",") if p.strip()]
    if not parts:
        raise ValueError(f"LLM budget {text!r}: use e.g. 200k-tokens, 50-calls or 200k-tokens,50-calls")
    for part in parts:
        match = _BUDGET_PART.fullmatch(part)
        if match is None:
            raise ValueError(f"LLM budget {text!r}: use e.g. 200k-tokens, 50-calls or 200k-tokens,50-calls")
        amount = int(float(match.group(1)) * _TOKEN_SUFFIX[match.group(2)])
        if amount <= 0:
            raise ValueError(f"LLM budget {text!r}: must be positive")
        if (match.group(3) or "tokens").startswith("call"):
            calls = amount
        else:
            tokens = amount
    return LlmBudgetSpec(tokens=tokens, calls=calls)


def parse_seconds(text: str | float | int) -> float:
    """``30``, ``30s``, ``500ms``, ``2m`` → seconds; anything else is a ValueError."""
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        match = _DURATION.fullmatch(text.strip().lower())
        if match is None:
            raise ValueError(f"duration {text!r}: use e.g. 30s, 500ms or 2m")
        value = float(match.group(1)) * _DURATION_UNITS[match.group(2) or ""]
    if value <= 0:
        raise ValueError(f"duration {text!r}: must be positive")
    return value


def expected_prompt_tokens(messages: list[tuple[str, str]] | list[str]) -> int:
    """A rough token count of a rendered prompt, for reserving budget before a request."""
    chars = sum(len(m[1]) if isinstance(m, tuple) else len(m) for m in messages)
    return chars // CHARS_PER_TOKEN + 8 * len(messages)


def tokens_for_bytes(count: int) -> int:
    """The fewest tokens ``count`` bytes on the wire can honestly hold (Note [Tokens charged by bytes])."""
    return max(0, count - ENVELOPE_BYTES) // MAX_BYTES_PER_TOKEN


def charged_tokens(reported: int, wire_bytes: int) -> int:
    """What a request is charged: the endpoint's count, unless missing, zero or below the byte floor."""
    return max(max(0, reported), tokens_for_bytes(wire_bytes))


class LlmBudget:
    """Tokens, requests and wall time a backend may spend; see Note [LLM budget]. Thread-safe."""

    def __init__(self, tokens: int | None = None, calls: int | None = None, deadline: float | None = None,
                 *, default_completion_tokens: int = 400) -> None:
        self.token_limit = tokens
        self.call_limit = calls
        self.deadline = deadline  # time.monotonic() value, or None
        self.used_tokens = 0
        self.calls = 0
        self._reserved = 0
        self._largest_completion = default_completion_tokens
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: LlmBudgetSpec) -> LlmBudget:
        return cls(tokens=spec.tokens, calls=spec.calls)

    def set_deadline(self, seconds_from_now: float | None) -> None:
        """The run's wall budget: no request starts after it (``run --budget``)."""
        self.deadline = None if seconds_from_now is None else time.monotonic() + seconds_from_now

    def seconds_left(self) -> float | None:
        """Time left of the run's wall budget (None: no deadline); a call in flight stops there."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def expected_tokens(self, prompt_tokens: int) -> int:
        with self._lock:
            return prompt_tokens + self._largest_completion

    def reserve(self, expected_tokens: int) -> int:
        """Claim room for one request or raise LlmBudgetExceeded; returns the reservation."""
        with self._lock:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                raise LlmBudgetExceeded("the run's time budget is spent")
            if self.call_limit is not None and self.calls >= self.call_limit:
                raise LlmBudgetExceeded(f"LLM call budget of {self.call_limit} spent")
            if self.token_limit is not None and self.used_tokens + self._reserved + expected_tokens > self.token_limit:
                raise LlmBudgetExceeded(
                    f"LLM token budget of {self.token_limit} would be exceeded "
                    f"({self.used_tokens} used, next call needs about {expected_tokens})"
                )
            self.calls += 1
            self._reserved += expected_tokens
            return expected_tokens

    def settle(self, reservation: int, prompt_tokens: int, completion_tokens: int) -> None:
        """Replace a reservation by what the request really used (zero for a failed request)."""
        with self._lock:
            self._reserved -= reservation
            self.used_tokens += prompt_tokens + completion_tokens
            self._largest_completion = max(self._largest_completion, completion_tokens)

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return (
                (self.token_limit is not None and self.used_tokens >= self.token_limit)
                or (self.call_limit is not None and self.calls >= self.call_limit)
                or (self.deadline is not None and time.monotonic() >= self.deadline)
            )


class CircuitBreaker:
    """Opens after ``threshold`` consecutive transport failures; then every call fails at once.

    An endpoint that is down would otherwise cost the SDK's whole retry sequence for every
    issue; one clear message naming the URL is worth more than a thousand identical errors.
    """

    def __init__(self, base_url: str, threshold: int = 3) -> None:
        self.base_url = base_url
        self.threshold = max(1, threshold)
        self.failures = 0
        self.last_error = ""
        self._lock = threading.Lock()

    def check(self) -> None:
        with self._lock:
            if self.failures >= self.threshold:
                raise LlmEndpointDown(self.message())

    def message(self) -> str:
        return (f"the LLM endpoint {self.base_url} failed {self.failures} times in a row "
                f"(last: {self.last_error}); stopped calling it — what is left stays due for the next run")

    def record_failure(self, error: str) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = error[:300]

    def record_success(self) -> None:
        with self._lock:
            self.failures = 0

    @property
    def open(self) -> bool:
        return self.failures >= self.threshold
