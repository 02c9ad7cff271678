"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint, batched and bounded.

The key is handed to the openai SDK only; messages name the base URL and the model, never it.
Each batch has a total deadline and a response size cap (Note [Bounded LLM calls] in
agent/llm/bounded_http.py): an endpoint that drips bytes or sends too much cannot hold a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.config import Settings
from agent.llm.bounded_http import CallGuard, bounded_client, run_bounded
from agent.llm.errors import LlmBudgetExceeded, LlmConfigError, LlmError, LlmTimeoutError, LlmTransportError
from agent.llm.limits import DEFAULT_MAX_EMBEDDINGS_BYTES, LlmBudget

DEFAULT_BATCH = 128


@dataclass
class EmbeddingsUsage:
    requests: int = 0
    texts: int = 0
    prompt_tokens: int = 0
    latencies_ms: list[float] = field(default_factory=list)


class EmbeddingsClient:
    """``embed(texts)`` returns one vector per text, in order, asking ``batch_size`` texts a request."""

    def __init__(self, *, model: str, base_url: str | None, api_key: str | None = None, timeout_s: float = 60.0,
                 max_retries: int = 2, batch_size: int = DEFAULT_BATCH,
                 max_response_bytes: int = DEFAULT_MAX_EMBEDDINGS_BYTES, budget: LlmBudget | None = None) -> None:
        """``budget``: the command's LLM budget, whose wall deadline (``run --budget``) also cuts a batch."""
        import openai

        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.batch_size = max(1, batch_size)
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self.budget = budget
        self.usage = EmbeddingsUsage()
        http_client = bounded_client(deadline_s=timeout_s, max_response_bytes=max_response_bytes,
                                     endpoint=f"{self.base_url} (embeddings)", max_connections=10)
        # Local servers need some key; the SDK refuses to start without one.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s,
                                     max_retries=max_retries, http_client=http_client)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(list(texts[start:start + self.batch_size])))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        import time

        import openai

        started = time.perf_counter()
        where = f"{self.base_url} (embeddings, model {self.model})"
        guard = self._guard(where)
        try:
            response = run_bounded(
                lambda: self._client.embeddings.create(model=self.model, input=batch, encoding_format="float"), guard,
                on_deadline=self._deadline_error)
        except (openai.APITimeoutError, LlmTimeoutError):  # the SDK's read timeout, or the worker saw the deadline
            raise self._deadline_error(guard) from None
        except openai.APIStatusError as exc:
            raise LlmTransportError(f"{where}: HTTP {exc.status_code}") from None
        except openai.APIConnectionError as exc:
            raise LlmTransportError(f"{where}: cannot connect ({type(exc).__name__})") from None
        self.usage.requests += 1
        self.usage.texts += len(batch)
        self.usage.latencies_ms.append((time.perf_counter() - started) * 1000)
        self.usage.prompt_tokens += int(getattr(response.usage, "prompt_tokens", 0) or 0)
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch) or any(not d.embedding for d in data):
            raise LlmTransportError(f"{where}: answered {len(data)} vectors for {len(batch)} texts")
        dims = {len(d.embedding) for d in data}
        if len(dims) != 1:
            raise LlmTransportError(f"{where}: vectors of different lengths {sorted(dims)}")
        return [[float(x) for x in d.embedding] for d in data]


    def _guard(self, where: str) -> CallGuard:
        seconds, cut_by_run = self.timeout_s, False
        run_left = self.budget.seconds_left() if self.budget is not None else None
        if run_left is not None and run_left < seconds:
            if run_left <= 0:
                raise LlmBudgetExceeded("the run's time budget is spent")
            seconds, cut_by_run = run_left, True
        guard = CallGuard.starting_now(seconds, self.max_response_bytes, where)
        guard.cut_by_run = cut_by_run
        return guard

    @staticmethod
    def _deadline_error(guard: CallGuard) -> LlmError:
        if guard.cut_by_run:
            return LlmBudgetExceeded(f"the run's time budget ran out during an embeddings request to {guard.endpoint}")
        return guard.timeout_error()


def embeddings_configured(settings: Settings) -> bool:
    """An embeddings model is named and an endpoint (local URL or key) is configured."""
    return bool(settings.embedding_model) and bool(settings.openai_base_url or settings.openai_api_key)


def make_embeddings_client(settings: Settings, budget: LlmBudget | None = None) -> EmbeddingsClient:
    """``budget``: the command's LLM budget (``backend.budget``), so ``run --budget`` cuts a batch in flight."""
    if not settings.embedding_model:
        raise LlmConfigError("embeddings need TRANSFUZZ_EMBEDDING_MODEL (the endpoint's embeddings model)")
    if not (settings.openai_base_url or settings.openai_api_key):
        raise LlmConfigError("embeddings need OPENAI_BASE_URL (a local server) or OPENAI_API_KEY")
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return EmbeddingsClient(model=settings.embedding_model, base_url=settings.openai_base_url, api_key=key,
                            timeout_s=settings.llm_timeout_s, budget=budget)
