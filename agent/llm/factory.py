"""Build the configured backend: offline unless an endpoint or key is configured (or asked for)."""

from __future__ import annotations

from typing import Any

from agent.config import Settings
from agent.llm.backend import LlmBackend
from agent.llm.cache import DbResponseCache
from agent.llm.limits import LlmBudget
from agent.llm.offline import OfflineBackend

# USD per million tokens (input, output) for models whose price is public; others cost None.
PRICES_PER_MTOKEN: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
}


def make_backend(settings: Settings, store: Any | None = None, *, use_opinfo: bool = True) -> LlmBackend:
    """One backend per command: every stage given it spends from its one budget and breaker."""
    if settings.effective_llm == "offline":
        return OfflineBackend(use_opinfo=use_opinfo)
    from agent.llm.errors import LlmConfigError
    from agent.llm.openai_backend import OpenAIBackend

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    if key is None and not settings.openai_base_url:
        raise LlmConfigError("the openai backend needs OPENAI_BASE_URL (a local server) or OPENAI_API_KEY")
    return OpenAIBackend(
        model=settings.model,
        base_url=settings.openai_base_url,
        api_key=key,
        timeout_s=settings.llm_timeout_s,
        budget=LlmBudget(tokens=settings.llm_token_budget, calls=settings.llm_call_budget),
        cache=DbResponseCache(store) if store is not None else None,
        retry_after_cap_s=settings.llm_retry_after_cap_s,
        breaker_threshold=settings.llm_breaker_failures,
        concurrency=settings.llm_concurrency,
    )


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    price = PRICES_PER_MTOKEN.get(model)
    if price is None:
        return None
    return round((prompt_tokens * price[0] + completion_tokens * price[1]) / 1e6, 6)
