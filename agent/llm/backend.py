"""The backend interface every extractor speaks: a prompt step in, a validated object out."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

SchemaT = TypeVar("SchemaT", bound=BaseModel)
# A semantic post-check of a schema-valid answer: None when it is acceptable, else what is wrong
# (told to the model in the repair round; an answer that never passes is an error, never cached).
SemanticCheck = Callable[[Any], str | None]


class CallRecord(BaseModel):
    """What one structured call cost and produced; stored in ``llm_calls`` for real models."""

    prompt_name: str
    prompt_version: str
    model: str
    cache_key: str
    cached: bool = False
    request: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any] | None = None
    # every request made for this call, failed, repaired and successful: raw text, error, usage, latency
    attempts: list[dict[str, Any]] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    error: str | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class LlmBackend(Protocol):
    """``structured`` renders the named prompt with ``variables`` and returns a ``schema`` object
    that also passes ``check`` (when given)."""

    name: str
    model: str

    def structured(
        self, prompt_name: str, variables: dict[str, Any], schema: type[SchemaT],
        *, check: SemanticCheck | None = None,
    ) -> tuple[SchemaT, CallRecord]: ...


def cache_key(prompt_name: str, prompt_version: str, model: str, rendered: Any) -> str:
    """hash(prompt name + version, model, rendered prompt): equal requests share one answer."""
    payload = json.dumps([prompt_name, prompt_version, model, rendered], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()
