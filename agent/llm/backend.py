"""The backend interface every extractor speaks: a prompt step in, a validated object out."""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from agent.llm.errors import LlmBudgetExceeded

SchemaT = TypeVar("SchemaT", bound=BaseModel)


class CallRecord(BaseModel):
    """What one structured call cost and produced; stored in ``llm_calls`` for real models."""

    prompt_name: str
    prompt_version: str
    model: str
    cache_key: str
    cached: bool = False
    request: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any] | None = None
    attempts: list[dict[str, Any]] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    error: str | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class LlmBackend(Protocol):
    """``structured`` renders the named prompt with ``variables`` and returns a ``schema`` object."""

    name: str
    model: str

    def structured(
        self, prompt_name: str, variables: dict[str, Any], schema: type[SchemaT]
    ) -> tuple[SchemaT, CallRecord]: ...


def cache_key(prompt_name: str, prompt_version: str, model: str, rendered: Any) -> str:
    """hash(prompt name + version, model, rendered prompt): equal requests share one answer."""
    payload = json.dumps([prompt_name, prompt_version, model, rendered], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


class TokenBudget:
    """Tokens a run may spend; thread-safe so parallel calls cannot overspend by much."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def check(self) -> None:
        with self._lock:
            if self.used >= self.limit:
                raise LlmBudgetExceeded(f"token budget of {self.limit} spent ({self.used} used)")

    def spend(self, tokens: int) -> None:
        with self._lock:
            self.used += tokens

    @property
    def exhausted(self) -> bool:
        return self.used >= self.limit
