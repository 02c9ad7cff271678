"""One exception root for the LLM layer, one subclass per cause."""

from __future__ import annotations

from typing import Any


class LlmError(Exception):
    """Root of every LLM-layer failure; ``attempts`` keeps each failed try for the record."""

    def __init__(self, message: str, *, attempts: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.attempts: list[dict[str, Any]] = attempts or []


class LlmConfigError(LlmError):
    """Bad configuration or template: fix the setup, retrying will not help."""


class LlmTransportError(LlmError):
    """The endpoint could not be reached or kept failing (after the SDK's own retries)."""


class LlmTimeoutError(LlmTransportError):
    """The endpoint did not answer within the call's total deadline (connect + the whole response)."""


class LlmResponseTooLarge(LlmTransportError):
    """The endpoint's answer was larger than the response size cap; it was refused, never stored."""


class LlmOutputError(LlmError):
    """The model's output never validated against the schema, repair round included."""


class LlmEndpointDown(LlmTransportError):
    """The circuit breaker is open: the endpoint failed too often in a row; the stage stops."""


class LlmBudgetExceeded(LlmError):
    """The run's token, call or time budget is spent; no further calls are made."""


# Failures after which a stage stops and leaves the rest due, instead of recording an error.
STAGE_STOPPING_ERRORS: tuple[type[LlmError], ...] = (LlmBudgetExceeded, LlmEndpointDown)
