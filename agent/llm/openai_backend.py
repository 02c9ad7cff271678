"""The `openai` backend: any OpenAI-compatible endpoint through LangChain's ChatOpenAI.

Note [Structured output and repair]
We bind a JSON-schema ``response_format`` *dict* (not the pydantic class) so the raw text
always comes back to us: with the class, the openai SDK validates inside the call and a bad
answer surfaces as an exception without its text (research/ecosystem.md §2.1). We validate
with pydantic ourselves and, on failure, re-ask once with the validation error shown to the
model (the repair round). Transport retries (429, 5xx, timeouts) belong to the openai SDK's
own backoff (``max_retries``); we do not wrap them again, so retries never multiply.
Servers without ``json_schema`` support get ``json_object`` mode (the prompt carries the
schema) or forced function calling.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from agent.llm.backend import CallRecord, SchemaT, TokenBudget, cache_key
from agent.llm.errors import LlmConfigError, LlmOutputError, LlmTimeoutError, LlmTransportError
from agent.llm.prompts import load_prompt

StructuredMethod = Literal["json_schema", "json_mode", "function_calling"]
MAX_REPAIRS = 1


class ResponseCache(Protocol):
    """What the backend needs from a cache: look up an answer, remember a call."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, record: CallRecord) -> None: ...


def _response_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False},
    }


def _strip_fences(text: str) -> str:
    """Some servers wrap JSON in a markdown fence even in JSON mode."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        if stripped.rstrip().endswith("```"):
            stripped = stripped.rstrip()[:-3]
    return stripped.strip()


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
        budget: TokenBudget | None = None,
        cache: ResponseCache | None = None,
        temperature: float = 0.0,
    ) -> None:
        try:
            from langchain_openai import ChatOpenAI
        except ImportError as exc:  # pragma: no cover - dependency is declared
            raise LlmConfigError(f"langchain-openai is not installed: {exc}") from exc
        self.model = model
        self.method: StructuredMethod = method
        self.budget = budget or TokenBudget(2**62)
        self.cache = cache
        # Local servers need some key; the SDK refuses to start without one.
        self._chat = ChatOpenAI(
            model=model,
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=max_retries,
            temperature=temperature,
            use_responses_api=False,
        )

    # ------------------------------------------------------------------ public

    def structured(
        self, prompt_name: str, variables: dict[str, Any], schema: type[SchemaT]
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
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    obj = schema.model_validate(hit)
                except ValidationError:
                    pass  # a cached answer from an older schema: ask again
                else:
                    return obj, record.model_copy(update={"cached": True, "response": hit})
        self.budget.check()
        started = time.perf_counter()
        try:
            obj = self._call_with_repair(rendered, schema, record)
        except Exception as exc:
            record.latency_ms = (time.perf_counter() - started) * 1000
            record.error = f"{type(exc).__name__}: {exc}"
            if self.cache is not None:
                self.cache.put(record)
            if isinstance(exc, LlmOutputError):
                exc.attempts = record.attempts
            raise
        record.latency_ms = (time.perf_counter() - started) * 1000
        record.response = obj.model_dump(mode="json")
        if self.cache is not None:
            self.cache.put(record)
        return obj, record

    # ------------------------------------------------------------------ internals

    def _call_with_repair(self, rendered: list[tuple[str, str]], schema: type[SchemaT], record: CallRecord) -> SchemaT:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        messages: list[Any] = [SystemMessage(c) if r == "system" else HumanMessage(c) for r, c in rendered]
        for attempt in range(MAX_REPAIRS + 1):
            raw, usage = self._invoke(messages, schema, record)
            try:
                return schema.model_validate_json(_strip_fences(raw))
            except ValidationError as exc:
                errors = exc.errors(include_url=False, include_context=False, include_input=False)
                record.attempts.append(
                    {"attempt": attempt + 1, "raw": raw, "error": json.dumps(errors, default=str), "usage": usage}
                )
                messages = [
                    *messages,
                    AIMessage(raw),
                    HumanMessage(
                        "Your answer failed validation against the schema:\n"
                        + json.dumps(errors, default=str)
                        + "\nAnswer again with one corrected JSON object and nothing else."
                    ),
                ]
        raise LlmOutputError(
            f"{schema.__name__}: no valid answer after {MAX_REPAIRS + 1} attempts", attempts=record.attempts
        )

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

    def _invoke(self, messages: list[Any], schema: type[BaseModel], record: CallRecord) -> tuple[str, dict[str, int]]:
        """One request: the raw answer text and its token usage; transport errors mapped."""
        import openai

        try:
            message = self._bound(schema).invoke(messages)
        except openai.BadRequestError as exc:
            # A server that rejects json_schema: fall back to JSON mode for the rest of the run.
            if self.method == "json_schema" and "response_format" in str(exc).lower():
                record.attempts.append({"attempt": 0, "raw": "", "error": f"json_schema refused: {exc}", "usage": {}})
                self.method = "json_mode"
                return self._invoke(messages, schema, record)
            raise LlmTransportError(f"endpoint rejected the request: {exc}") from exc
        except openai.APITimeoutError as exc:
            raise LlmTimeoutError(f"no answer within the timeout: {exc}") from exc
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            raise LlmTransportError(f"{type(exc).__name__}: {exc}") from exc
        usage_meta = getattr(message, "usage_metadata", None) or {}
        usage = {
            "prompt_tokens": int(usage_meta.get("input_tokens", 0)),
            "completion_tokens": int(usage_meta.get("output_tokens", 0)),
        }
        record.prompt_tokens += usage["prompt_tokens"]
        record.completion_tokens += usage["completion_tokens"]
        self.budget.spend(usage["prompt_tokens"] + usage["completion_tokens"])
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
