"""The `openai` backend: any OpenAI-compatible endpoint through LangChain's ChatOpenAI.

Note [Structured output and repair]
We bind a JSON-schema ``response_format`` *dict* (not the pydantic class) so the raw text
always comes back to us: with the class, the openai SDK validates inside the call and a bad
answer surfaces as an exception without its text (research/ecosystem.md §2.1). We validate
with pydantic ourselves, then with the caller's semantic check (e.g. "the API must occur in
the issue"); on either failure we re-ask once with the problem shown to the model (the repair
round). An answer that never passes is an error: stored with every attempt, never cached as a
success. Transport retries (429, 5xx, timeouts) belong to the openai SDK's own backoff
(``max_retries``); we do not wrap them again, so retries never multiply. A server's
``Retry-After`` is capped (see ``_cap_retry_after``), and consecutive transport failures open
a circuit breaker (agent.llm.limits). Servers without ``json_schema`` support get
``json_object`` mode (the prompt carries the schema) or forced function calling.

Every request is bounded whatever the endpoint does (Note [Bounded LLM calls] in
agent/llm/bounded_http.py): one total deadline for connect, the SDK's retries and the whole
response (the earlier of ``timeout_s`` and the run's wall budget), a response size cap, and a
budget charge by bytes when the reported usage is missing or implausible (Note [Tokens charged
by bytes] in agent/llm/limits.py). A request cut by a bound is an attempt with its error and its
charge; the answer that broke the cap is never kept.
"""

from __future__ import annotations

import json
import re
import time
from email.utils import parsedate_to_datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from agent.llm.backend import CallRecord, SchemaT, SemanticCheck, cache_key
from agent.llm.bounded_http import CallGuard, bounded_client, run_bounded
from agent.llm.errors import (LlmBudgetExceeded, LlmConfigError, LlmError, LlmOutputError, LlmTimeoutError,
                              LlmTransportError)
from agent.llm.limits import (DEFAULT_MAX_RESPONSE_BYTES, CircuitBreaker, LlmBudget, charged_tokens,
                              expected_prompt_tokens)
from agent.llm.prompts import load_prompt

StructuredMethod = Literal["json_schema", "json_mode", "function_calling"]
MAX_REPAIRS = 1
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_FENCE_RE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)```", re.S)


class ResponseCache(Protocol):
    """What the backend needs from a cache: look up an answer, remember a call."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, record: CallRecord) -> None: ...


def _response_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False},
    }


def extract_json(text: str) -> str:
    """The JSON object in an answer: the whole text, a fenced block (after prose or not), or the
    first ``{...}`` that parses. Falls back to the text itself so validation names the problem."""
    stripped = text.strip()
    candidates = [stripped, *(block.strip() for block in _FENCE_RE.findall(stripped))]
    if stripped.startswith("```"):  # an unterminated fence
        candidates.append(stripped.split("\n", 1)[1] if "\n" in stripped else "")
    for candidate in candidates:
        try:
            if isinstance(json.loads(candidate), dict):
                return candidate
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    while start != -1:
        try:
            obj, end = decoder.raw_decode(stripped, start)
        except ValueError:
            start = stripped.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            return stripped[start:end]
        start = stripped.find("{", end)
    return stripped


def _retry_after_seconds(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError, IndexError):
        return None


def _cap_retry_after(cap_s: float) -> Any:
    """An httpx response hook: a server asking to wait longer than ``cap_s`` waits ``cap_s``."""

    def hook(response: Any) -> None:
        headers = response.headers
        wait_ms = headers.get("retry-after-ms")
        wait = float(wait_ms) / 1000 if wait_ms and wait_ms.replace(".", "", 1).isdigit() else None
        if wait is None and headers.get("retry-after") is not None:
            wait = _retry_after_seconds(headers["retry-after"])
        if wait is not None and wait > cap_s:
            headers["retry-after"] = f"{cap_s:g}"
            headers["retry-after-ms"] = f"{cap_s * 1000:g}"

    return hook


class OpenAIBackend:
    """Structured calls against an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        method: StructuredMethod = "json_schema",
        budget: LlmBudget | None = None,
        cache: ResponseCache | None = None,
        temperature: float = 0.0,
        retry_after_cap_s: float = 30.0,
        breaker_threshold: int = 3,
        concurrency: int = 1,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        try:
            from langchain_openai import ChatOpenAI
        except ImportError as exc:  # pragma: no cover - dependency is declared
            raise LlmConfigError(f"langchain-openai is not installed: {exc}") from exc
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self.method: StructuredMethod = method
        self.budget = budget or LlmBudget()
        self.cache = cache
        self.concurrency = max(1, concurrency)
        self.breaker = CircuitBreaker(self.base_url, breaker_threshold)
        http_client = bounded_client(
            deadline_s=timeout_s, max_response_bytes=max_response_bytes, endpoint=self.base_url,
            max_connections=max(10, 2 * self.concurrency),
            event_hooks={"response": [_cap_retry_after(retry_after_cap_s)]},
        )
        # Local servers need some key; the SDK refuses to start without one.
        self._chat = ChatOpenAI(
            model=model,
            base_url=self.base_url,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=max_retries,
            temperature=temperature,
            use_responses_api=False,
            http_client=http_client,
        )

    # ------------------------------------------------------------------ public

    def structured(
        self, prompt_name: str, variables: dict[str, Any], schema: type[SchemaT],
        *, check: SemanticCheck | None = None,
    ) -> tuple[SchemaT, CallRecord]:
        template = load_prompt(prompt_name)
        rendered = template.render(variables)
        key = cache_key(prompt_name, template.version, self.model, [rendered, schema.__name__])
        record = CallRecord(
            prompt_name=prompt_name,
            prompt_version=template.version,
            model=self.model,
            cache_key=key,
            request={"messages": [{"role": r, "content": c} for r, c in rendered], "schema": schema.__name__},
        )
        cached = self._from_cache(key, schema, check)
        if cached is not None:
            return cached, record.model_copy(update={"cached": True, "response": cached.model_dump(mode="json")})
        started = time.perf_counter()
        try:
            obj = self._call_with_repair(rendered, schema, record, check)
        except LlmError as exc:
            record.latency_ms = (time.perf_counter() - started) * 1000
            record.error = f"{type(exc).__name__}: {exc}"
            if self.cache is not None and record.attempts:  # a request was paid for: keep it
                self.cache.put(record)
            exc.attempts = record.attempts
            raise
        record.latency_ms = (time.perf_counter() - started) * 1000
        record.response = obj.model_dump(mode="json")
        if self.cache is not None:
            self.cache.put(record)
        return obj, record

    # ------------------------------------------------------------------ internals

    def _from_cache(self, key: str, schema: type[SchemaT], check: SemanticCheck | None) -> SchemaT | None:
        if self.cache is None:
            return None
        hit = self.cache.get(key)
        if hit is None:
            return None
        try:
            obj = schema.model_validate(hit)
        except ValidationError:
            return None  # a cached answer from an older schema: ask again
        if check is not None and check(obj) is not None:
            return None  # stored before the check existed: never replay a bad answer
        return obj

    def _call_with_repair(self, rendered: list[tuple[str, str]], schema: type[SchemaT], record: CallRecord,
                          check: SemanticCheck | None) -> SchemaT:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        messages: list[Any] = [SystemMessage(c) if r == "system" else HumanMessage(c) for r, c in rendered]
        for _ in range(MAX_REPAIRS + 1):
            raw = self._request(messages, schema, record)
            problem: str | None
            try:
                obj = schema.model_validate_json(extract_json(raw))
            except ValidationError as exc:
                errors = exc.errors(include_url=False, include_context=False, include_input=False)
                problem = "Your answer failed validation against the schema:\n" + json.dumps(errors, default=str)
            else:
                problem = check(obj) if check is not None else None
                if problem is None:
                    return obj
                problem = f"Your answer is valid JSON but wrong: {problem}"
            record.attempts[-1]["error"] = problem
            messages = [
                *messages,
                AIMessage(raw),
                HumanMessage(problem + "\nAnswer again with one corrected JSON object and nothing else."),
            ]
        raise LlmOutputError(
            f"{schema.__name__}: no valid answer after {MAX_REPAIRS + 1} attempts "
            f"(last problem: {record.attempts[-1]['error'][:300]})",
            attempts=record.attempts,
        )

    def _request(self, messages: list[Any], schema: type[BaseModel], record: CallRecord) -> str:
        """One budgeted, bounded request through the breaker; its attempt entry is appended to ``record``."""
        self.breaker.check()
        reservation = self.budget.reserve(
            self.budget.expected_tokens(expected_prompt_tokens([str(m.content) for m in messages]))
        )
        guard = self._guard()
        entry: dict[str, Any] = {"attempt": len(record.attempts) + 1, "raw": "", "error": None}
        started = time.perf_counter()
        try:
            raw, reported = self._invoke(messages, schema, record, guard)
        except (LlmTransportError, LlmBudgetExceeded) as exc:
            usage = self._charge(guard, {})
            self.budget.settle(reservation, usage["prompt_tokens"], usage["completion_tokens"])
            if isinstance(exc, LlmTransportError) and getattr(exc, "endpoint_failure", True):
                self.breaker.record_failure(str(exc))
            self._count(record, entry, usage, error=f"{type(exc).__name__}: {exc}", started=started)
            raise
        except BaseException:
            usage = self._charge(guard, {})
            self.budget.settle(reservation, usage["prompt_tokens"], usage["completion_tokens"])
            raise
        usage = self._charge(guard, reported)
        self.budget.settle(reservation, usage["prompt_tokens"], usage["completion_tokens"])
        self.breaker.record_success()
        entry["raw"] = raw
        self._count(record, entry, usage, error=None, started=started)
        return raw

    def _guard(self) -> CallGuard:
        """This request's bounds: its own deadline, or the run's wall budget when that ends first."""
        seconds, cut_by_run = self.timeout_s, False
        run_left = self.budget.seconds_left()
        if run_left is not None and run_left < seconds:
            seconds, cut_by_run = max(0.0, run_left), True
        guard = CallGuard.starting_now(seconds, self.max_response_bytes, self.base_url)
        guard.cut_by_run = cut_by_run
        return guard

    @staticmethod
    def _charge(guard: CallGuard, reported: dict[str, int]) -> dict[str, Any]:
        """The tokens a request is charged (Note [Tokens charged by bytes]); the reported ones kept beside."""
        prompt = max(0, reported.get("prompt_tokens", 0))
        completion = charged_tokens(reported.get("completion_tokens", 0), guard.received_bytes)
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "bytes_sent": guard.sent_bytes, "bytes_received": guard.received_bytes}
        if completion > reported.get("completion_tokens", 0):
            usage["reported"] = {"prompt_tokens": reported.get("prompt_tokens", 0),
                                 "completion_tokens": reported.get("completion_tokens", 0)}
            usage["charged_by_bytes"] = True
        return usage

    @staticmethod
    def _count(record: CallRecord, entry: dict[str, Any], usage: dict[str, Any], *, error: str | None,
               started: float) -> None:
        record.prompt_tokens += usage["prompt_tokens"]
        record.completion_tokens += usage["completion_tokens"]
        entry.update(error=error, usage=usage, latency_ms=(time.perf_counter() - started) * 1000)
        record.attempts.append(entry)

    def _deadline_error(self, guard: CallGuard) -> LlmError:
        if guard.cut_by_run:
            return LlmBudgetExceeded(f"the run's time budget ran out during a call to the LLM endpoint {self.base_url} "
                                     f"({guard.received_bytes} bytes received); what is left stays due")
        return guard.timeout_error()

    def _bound(self, schema: type[BaseModel]) -> Any:
        if self.method == "json_schema":
            return self._chat.bind(response_format=_response_format(schema))
        if self.method == "json_mode":
            return self._chat.bind(response_format={"type": "json_object"})
        tool = {
            "type": "function",
            "function": {"name": schema.__name__, "parameters": schema.model_json_schema()},
        }
        return self._chat.bind(tools=[tool], tool_choice={"type": "function", "function": {"name": schema.__name__}})

    def _transport_error(self, exc: Exception) -> LlmError:
        """An SDK error as ours, naming the endpoint; 401/403 is a setup problem, not a blip."""
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return LlmTimeoutError(f"the LLM endpoint {self.base_url} gave no answer within {self.timeout_s:g} s")
        if isinstance(exc, openai.APIConnectionError):
            return LlmTransportError(f"cannot reach the LLM endpoint {self.base_url}: {exc}")
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in (401, 403):
                return LlmConfigError(f"the LLM endpoint {self.base_url} refused the API key ({exc.status_code})")
            error = LlmTransportError(f"the LLM endpoint {self.base_url} answered {exc.status_code}: {exc.message}")
            # a request the server rejects (400, 404, 422) says nothing about whether it is up
            error.endpoint_failure = exc.status_code == 429 or exc.status_code >= 500  # type: ignore[attr-defined]
            return error
        return LlmTransportError(f"the LLM endpoint {self.base_url}: {type(exc).__name__}: {exc}")

    def _invoke(self, messages: list[Any], schema: type[BaseModel], record: CallRecord,
                guard: CallGuard) -> tuple[str, dict[str, int]]:
        """One request within ``guard``'s bounds: the raw answer text and its reported token usage."""
        import openai

        bound = self._bound(schema)
        try:
            message = run_bounded(lambda: bound.invoke(messages), guard, on_deadline=self._deadline_error)
        except openai.BadRequestError as exc:
            # A server that rejects json_schema: fall back to JSON mode for the rest of the run.
            if self.method == "json_schema" and "response_format" in str(exc).lower():
                record.attempts.append({"attempt": 0, "raw": "", "error": f"json_schema refused: {exc}", "usage": {}})
                self.method = "json_mode"
                return self._invoke(messages, schema, record, guard)
            raise self._transport_error(exc) from exc
        except openai.APITimeoutError:
            raise self._deadline_error(guard) from None
        except openai.OpenAIError as exc:
            raise self._transport_error(exc) from exc
        except LlmTimeoutError:  # the worker saw the deadline first
            raise self._deadline_error(guard) from None
        usage_meta = getattr(message, "usage_metadata", None) or {}
        usage = {
            "prompt_tokens": int(usage_meta.get("input_tokens", 0)),
            "completion_tokens": int(usage_meta.get("output_tokens", 0)),
        }
        if self.method == "function_calling":
            calls = getattr(message, "tool_calls", None) or []
            if calls:
                return json.dumps(calls[0]["args"]), usage
            invalid = getattr(message, "invalid_tool_calls", None) or []
            if invalid:
                return str(invalid[0].get("args") or ""), usage
        content = message.content
        if isinstance(content, list):  # content blocks
            content = "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
        return str(content), usage
